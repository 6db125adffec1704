"""The book's tooling: execute every chapter once, check what it prints, publish it.

Chapters are Jupytext "percent" scripts (``docs/en/**/*.py``); translations are gettext
catalogs (``docs/<lang>/**/*.po``). One module per job:

- `book.source` reads and writes chapter sources: cells, metadata, stated outputs, lines;
- `book.include` gives a package class as a chapter shows it (no docstrings, no hints);
- `book.executor` executes a chapter into a notebook with outputs, cached under
  ``.cache/book/``, and enforces the chapter rules (cells that must raise, include cells);
- `book.checker` compares every output with the ``# Out:`` block its cell states, and runs
  the package's docstring examples the same way (`book.expectations` compares);
- `book.catalog` cuts English pages into paragraphs and keeps their translations (PO);
  `book.compose` makes a translated page from the English one and its catalog, marking
  the paragraphs that are behind; `book.translations` reports and updates the catalogs;
  `book.lang` picks the code cells each language's page shows (``# %% lang="vi"``);
- `book.site_pages` says what each page of a language is rendered from; `book.render`
  presents a page: `book.notebook_html` (notebook pages as plain, light HTML), `book.page`
  (links, names and marks, in one parsed pass, with `book.links`), `book.typeset` (every
  formula typeset at build time);
- `book.mkdocs_hooks` is the MkDocs hook (``hooks:`` in ``mkdocs.yml``): it only routes
  MkDocs' events to those modules;
- `book.trained` is the playground's trained model: the one "What attention learns" trains,
  which the executor saves (``export="model losses"``), as the file the page downloads;
- `book.playground` gives the playground page its numbers from the package;
  `book.playground_check` holds its JavaScript to them in Node, and its default view to the
  chapters; `book.playground_html` is its markup;
- `book.site` builds every language into ``site/<lang>/``, and the root;
- `book.cli` is the command line: ``python -m book execute | check [--update] | path |
  site | translations [--update] | playground-cases``.

The package is installed editable into the documentation environment (``pip install -e
tools``, which ``nox`` does), so every caller imports it the ordinary way.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the repository
if not (ROOT / "mkdocs.yml").is_file():
    raise ImportError(
        f"book must be installed editable from the repository (pip install -e tools), so that "
        f"it finds the book; it runs from {Path(__file__).parent}, outside any checkout"
    )


class BookError(RuntimeError):
    """A chapter failed to execute or broke one of the book's rules."""


def shown(path: Path) -> str:
    """``path`` relative to the repository when it is inside it, for messages."""
    path = path.resolve()
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)
