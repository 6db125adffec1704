"""Code cells that belong to one language: ``# %% lang="vi"``.

A chapter may show a code cell on one language's page only: the same report printed in
each language, say, one cell per language. Its marker says so with ``lang="<code>"``, a
language of the book (``en`` or a translation's), beside any other metadata:
``# %% tags=["wrap-output"] lang="vi"``. A code cell without ``lang`` is shown on every page.

- The English chapter holds every such cell and executes them all, once, as ordinary cells:
  `book.executor` runs them and `book.checker` checks each one's ``# Out:`` block.
- Each page shows the cells without ``lang`` and those with its own (`shown`): an English
  chapter that has such cells is rendered from a copy of its execution without the other
  languages' cells, and a translated page is composed without them (`book.compose`). A
  chapter without any is rendered from its execution.
- The numbers that a page's prose quotes are held to the outputs that page shows.

A ``lang`` that is not a language of the book, or one on a Markdown cell, is an error
(`problems`) that fails ``python -m book check`` and the build.
"""

from __future__ import annotations

from pathlib import Path

from book import paths, shown, source

KEY = "lang"


def shows(metadata: dict, language: str) -> bool:
    """Whether the page in ``language`` shows a cell with this metadata."""
    return metadata.get(KEY, language) == language


def shown_cells(cells: list, language: str) -> list:
    """The notebook cells that the page in ``language`` shows, in order; a cell of one
    language is tagged ``lang-<code>`` too, which `book.notebook_html` turns into the
    cell's ``data-lang`` attribute on the page."""
    shown = [cell for cell in cells if shows(cell.get("metadata", {}), language)]
    for cell in shown:
        metadata = cell.get("metadata", {})
        if KEY in metadata and f"lang-{metadata[KEY]}" not in metadata.get("tags", []):
            metadata.setdefault("tags", []).append(f"lang-{metadata[KEY]}")
    return shown


def marked(chapter: Path) -> list[tuple[int, bool, object]]:
    """``(line, is_code, lang)`` of each cell of ``chapter`` whose marker has a ``lang``."""
    cells = source.read(chapter).cells
    return [(cell.line, cell.is_code, cell.metadata[KEY]) for cell in cells if KEY in cell.metadata]


def problems(chapter: Path, translations: list[str]) -> list[str]:
    """Each ``lang`` of ``chapter`` that is not English or one of ``translations``, or that
    marks a Markdown cell: the file, the marker's line and the value."""
    known = [paths.ENGLISH, *translations]
    result = []
    for line, is_code, value in marked(chapter):
        where = f"{shown(chapter)}, line {line}: lang={value!r}"
        if not is_code:
            result.append(f"{where} on a Markdown cell; only a code cell belongs to a language")
        elif value not in known:
            result.append(f"{where} is not a language of the book ({', '.join(known)})")
    return result
