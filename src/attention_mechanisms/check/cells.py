"""Read a learner's code cells from a notebook or a Python file, without changing it.

A notebook (``.ipynb``) gives its code cells; a Python file gives its Jupytext "percent"
cells (``# %%`` lines, Markdown cells left out) or, without any, one cell. IPython's own
syntax cannot run in plain Python: a cell magic (``%%time``) skips its cell, and a line
magic or shell line (``%matplotlib``, ``!pip``) is left out of its cell; both are reported.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

_MARKER = re.compile(r"^#\s*%%(?P<rest>.*)$")  # "# %%", and "#%%" as some editors write it


class UnreadableFileError(ValueError):
    """The file is not a notebook or a Python file that can be read."""


@dataclass
class Cell:
    """One code cell, numbered from 1 among the file's code cells."""

    number: int
    source: str  # what runs: the cell without its magic and shell lines
    line: int = 1  # first line of the cell in a Python file (1 in a notebook)
    skipped_lines: list[str] = field(default_factory=list)
    skipped: bool = False  # a cell magic: nothing of it runs


def _strip_ipython(number: int, source: str, line: int) -> Cell:
    """The cell as plain Python: magic and shell lines left out (blank, so lines keep)."""
    lines = source.splitlines()
    if lines and lines[0].lstrip().startswith("%%"):
        return Cell(number, "", line, [lines[0].strip()], skipped=True)
    kept, skipped = [], []
    for text in lines:
        if text.lstrip().startswith(("%", "!")):
            skipped.append(text.strip())
            kept.append("")  # keep the line numbers of what runs
        else:
            kept.append(text)
    nothing_left = not any(text.strip() for text in kept)
    return Cell(number, "\n".join(kept), line, skipped, skipped=bool(skipped) and nothing_left)


def _notebook_cells(text: str) -> list[tuple[str, int]]:
    try:
        notebook = json.loads(text)
        cells = notebook["cells"]
    except (ValueError, KeyError, TypeError) as error:
        raise UnreadableFileError(f"not a Jupyter notebook: {error}") from None
    sources = []
    for cell in cells:
        if cell.get("cell_type") == "code":
            source = cell.get("source", "")
            sources.append(("".join(source) if isinstance(source, list) else source, 1))
    return sources


def _python_cells(text: str) -> list[tuple[str, int]]:
    lines = text.splitlines()
    found = [(i, marker["rest"]) for i, line in enumerate(lines) if (marker := _MARKER.match(line))]
    if not found:
        return [(text, 1)]
    markers = [i for i, _ in found]
    sources = []
    if any(line.strip() for line in lines[: markers[0]]):
        sources.append(("\n".join(lines[: markers[0]]), 1))
    for (start, rest), end in zip(found, [*markers[1:], len(lines)], strict=True):
        if re.match(r"\s*\[(markdown|md|raw)\]", rest):
            continue
        sources.append(("\n".join(lines[start + 1 : end]), start + 2))
    return sources


def read_cells(path: Path) -> list[Cell]:
    """The code cells of ``path``, in order.

    Raises:
        UnreadableFileError: If the file cannot be read, or is neither ``.ipynb`` nor ``.py``.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise UnreadableFileError(f"cannot read {path}: {error}") from None
    if path.suffix == ".ipynb":
        sources = _notebook_cells(text)
    elif path.suffix == ".py":
        sources = _python_cells(text)
    else:
        raise UnreadableFileError(f"expected a .ipynb notebook or a .py file; got {path.name}")
    return [
        _strip_ipython(number, source, line)
        for number, (source, line) in enumerate(sources, start=1)
    ]
