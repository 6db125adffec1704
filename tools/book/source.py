"""Chapter sources: the one reader and writer of the book's Jupytext "percent" scripts.

A chapter is a Python file of cells, each opened by a ``# %%`` marker line::

    # %% [markdown]
    # ## 3.3 Attending to different parts of the input
    #
    # The *context vector* of a token mixes the inputs ...

    # %% tags=["raises-exception"] raises="ValueError: d_out must be divisible"
    MultiHeadAttention(3, 5, context_length=6, dropout=0.0, num_heads=2)

    # %%
    print(attn_scores_2)
    # Out:
    # tensor([0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865])

A marker carries the cell's metadata as Jupytext writes it (``key="value"`` pairs, parsed by
Jupytext's own ``text_to_metadata``). A code cell may end with the output it states, in a
comment block headed ``# Out:`` (`book.expectations` compares it with what ran). Every
cell keeps the line of its marker, so that each message can name the file and line.

`read` parses a file, `Chapter.text` writes it back unchanged, and `Chapter.notebook` is
what executes: the notebook Jupytext would make of the file, without the ``# Out:`` blocks.
A parsed chapter is immutable, so one parse serves every stage (`book.build.Build.chapter`);
`Chapter.stating` makes a new chapter with other expected outputs.

A code cell may belong to one language's page: ``# %% lang="vi"`` (the same report printed
in each language, say). The English chapter holds and executes every such cell; each page
shows the cells without ``lang`` and those with its own (`shown_cells`), and the numbers its
prose quotes are held to the outputs it shows. A ``lang`` that is not a language of the
book, or one on a Markdown cell, is an error (`lang_problems`).
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat
from jupytext.cell_metadata import text_to_metadata

from book import BookError

OUT = "# Out:"
MARKER = "# %%"
_KIND = re.compile(r"^\[(markdown|md|raw)\]\s*")


@dataclass(frozen=True)
class Cell:
    """One cell of a chapter source."""

    line: int  # 1-based line of the marker in the file
    marker: str  # the "# %% ..." line, as written
    body: tuple[str, ...]  # the lines after it, without the expected block and trailing blanks
    expected: tuple[str, ...] | None = None  # the stated output, without each line's "# "
    trailing: tuple[str, ...] = ()  # blank lines after the cell

    @property
    def kind(self) -> str:
        """``"code"``, ``"markdown"`` or ``"raw"``."""
        found = _KIND.match(self.marker.removeprefix(MARKER).strip())
        return {"md": "markdown"}.get(found[1], found[1]) if found else "code"

    @property
    def is_code(self) -> bool:
        return self.kind == "code"

    @property
    def metadata(self) -> dict:
        """The marker's metadata, e.g. ``{"tags": ["raises-exception"], "raises": "..."}``."""
        options = _KIND.sub("", self.marker.removeprefix(MARKER).strip())
        return text_to_metadata(options, True)[1] if options else {}

    @property
    def source(self) -> str:
        """The cell as the notebook holds it: a Markdown cell's lines without their ``# ``."""
        if self.is_code:
            return "\n".join(self.body)
        return "\n".join(_uncomment(line) for line in self.body)

    def text(self, expected: bool = True) -> str:
        """The cell as the file holds it, from its marker to its trailing blank lines (without
        its ``# Out:`` block if not ``expected``)."""
        lines = [self.marker, *self.body]
        if expected and self.expected is not None:
            lines.append(OUT)
            lines += [f"# {line}" if line else "#" for line in self.expected]
        return "\n".join([*lines, *self.trailing])


def _uncomment(line: str) -> str:
    return line[2:] if line.startswith("# ") else line.removeprefix("#")


@dataclass(frozen=True)
class Chapter:
    """A parsed chapter source: its cells, and the lines before the first marker."""

    path: Path
    name: str  # how messages name it: its path in the checkout
    header: tuple[str, ...]
    cells: tuple[Cell, ...]

    def text(self, expected: bool = True) -> str:
        """The file's text; without the ``# Out:`` blocks (what executes) if not ``expected``."""
        cells = (cell.text(expected) for cell in self.cells)
        return "\n".join([*self.header, *cells]) + "\n"

    def stating(self, outputs: list[list[str] | None]) -> Chapter:
        """This chapter with each code cell stating ``outputs``, in order (None: states none)."""
        if len(outputs) != len(self.code):
            raise ValueError(f"{len(outputs)} outputs for {len(self.code)} code cells")
        given = iter(outputs)
        cells = tuple(
            dataclasses.replace(cell, expected=_tuple(next(given))) if cell.is_code else cell
            for cell in self.cells
        )
        return dataclasses.replace(self, cells=cells)

    def write(self) -> bool:
        """Write the chapter back to its file; return whether the file changed."""
        new, old = self.text(), self.path.read_text(encoding="utf-8")
        if new != old:
            self.path.write_text(new, encoding="utf-8")
        return new != old

    @property
    def code(self) -> list[Cell]:
        return [cell for cell in self.cells if cell.is_code]

    @property
    def lines(self) -> list[int]:
        """The line of each cell's ``# %%`` marker, in order: how messages name a cell."""
        return [cell.line for cell in self.cells]

    def notebook(self) -> nbformat.NotebookNode:
        """The notebook that executes: every cell with its metadata, no ``# Out:`` blocks."""
        if any(line.strip() for line in self.header):
            raise BookError(f"{self.name}, line 1: a chapter starts with a '# %%' marker")
        make = {
            "code": nbformat.v4.new_code_cell,
            "markdown": nbformat.v4.new_markdown_cell,
            "raw": nbformat.v4.new_raw_cell,
        }
        nb = nbformat.v4.new_notebook()
        for cell in self.cells:
            made = make[cell.kind](cell.source, metadata=cell.metadata)
            made.id = f"line-{cell.line}"  # the same on every build, unlike a random id
            nb.cells.append(made)
        return nb


def parse(text: str, path: Path, name: str) -> Chapter:
    """Parse a chapter's text (see the module doc); ``name`` names it in messages.

    Raises:
        BookError: If an ``# Out:`` block is followed by a line that is not a comment.
    """
    header: list[str] = []
    opened: list[tuple[int, str, list[str]]] = []  # each marker: its line, itself, its body
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith(MARKER) and (len(line) == len(MARKER) or line[len(MARKER)] == " "):
            opened.append((number, line, []))
        elif opened:
            opened[-1][2].append(line)
        else:
            header.append(line)
    return Chapter(path, name, tuple(header), tuple(_cell(*found, name) for found in opened))


def _cell(line: int, marker: str, body: list[str], name: str) -> Cell:
    """A cell from its lines: the trailing blank lines and the ``# Out:`` block set apart."""
    kept = len(body)
    while kept and not body[kept - 1].strip():
        kept -= 1
    cell = Cell(line, marker, tuple(body[:kept]), trailing=tuple(body[kept:]))
    if not cell.is_code or OUT not in cell.body:
        return cell
    start = cell.body.index(OUT)
    block = cell.body[start + 1 :]
    for offset, text in enumerate(block, start=start + 2):
        if not text.startswith("#"):
            raise BookError(
                f"{name}, line {line + offset}: {text!r} follows '{OUT}' but is "
                "not a comment; the expected output block must end its cell"
            )
    expected = tuple(_uncomment(text) for text in block)
    return dataclasses.replace(cell, body=cell.body[:start], expected=expected)


def _tuple(lines: list[str] | None) -> tuple[str, ...] | None:
    return None if lines is None else tuple(lines)


@functools.lru_cache(maxsize=128)
def _parsed(text: str, path: Path, name: str) -> Chapter:
    return parse(text, path, name)


def read(path: Path, name: str) -> Chapter:
    """The chapter source at ``path``, parsed once per text (see the module doc)."""
    return _parsed(path.read_text(encoding="utf-8"), path, name)


FIGURE_TEXTS = ("caption", "alt")  # keyword arguments of a figure call: prose in code


def _text(node: ast.expr) -> str | None:
    """A string argument as a translator sees it: a constant as it is; an f-string with each
    value as ``{expression}``, which `book.compose` fills in from the English output."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if not isinstance(node, ast.JoinedStr):
        return None
    parts = []
    for part in node.values:
        if isinstance(part, ast.FormattedValue):
            parts.append(f"{{{ast.unparse(part.value)}}}")
        elif isinstance(part, ast.Constant):
            parts.append(str(part.value))
    return "".join(parts)


def figure_texts(code: str) -> list[tuple[str, str]]:
    """``(keyword, text)`` of each ``caption=`` and ``alt=`` string in a code cell."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    found = [
        (keyword.arg, _text(keyword.value))
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        for keyword in node.keywords
        if keyword.arg in FIGURE_TEXTS
    ]
    return [(str(key), text) for key, text in found if text is not None]


LANG = "lang"  # the marker's key of a cell that belongs to one language


def shows(metadata: dict, language: str) -> bool:
    """Whether the page in ``language`` shows a cell with this metadata."""
    return metadata.get(LANG, language) == language


def shown_cells(cells: list, language: str) -> list:
    """The notebook cells that the page in ``language`` shows, in order; a cell of one
    language is tagged ``lang-<code>`` too (its ``data-lang`` on the page)."""
    kept = [cell for cell in cells if shows(cell.get("metadata", {}), language)]
    for cell in kept:
        metadata = cell.get("metadata", {})
        if LANG in metadata and f"lang-{metadata[LANG]}" not in metadata.get("tags", []):
            metadata.setdefault("tags", []).append(f"lang-{metadata[LANG]}")
    return kept


def lang_problems(chapter: Chapter, languages: list[str]) -> list[str]:
    """Each ``lang`` of ``chapter`` that is not one of ``languages`` or marks a Markdown cell."""
    result = []
    for cell in chapter.cells:
        if LANG not in cell.metadata:
            continue
        where = f"{chapter.name}, line {cell.line}: lang={cell.metadata[LANG]!r}"
        if not cell.is_code:
            result.append(f"{where} on a Markdown cell; only a code cell belongs to a language")
        elif cell.metadata[LANG] not in languages:
            result.append(f"{where} is not a language of the book ({', '.join(languages)})")
    return result
