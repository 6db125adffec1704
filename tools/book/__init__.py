"""The book's tooling: execute every chapter once, check what it prints, publish it.

Chapters are Jupytext "percent" scripts (``docs/<lang>/**/*.py``); only the English ones
execute. One module per job:

- `book.executor` executes a chapter into a notebook with outputs, cached under
  ``.cache/book/``, and enforces the chapter rules (cells that must raise, include cells);
- `book.checker` compares every output with the ``# Out:`` block its cell states, and runs
  the package's docstring examples the same way (`book.expectations` parses those blocks);
- `book.mkdocs_hooks` is the MkDocs hook (``hooks:`` in ``mkdocs.yml``): it executes stale
  chapters, warns about outputs that differ from their source (so a strict build fails),
  and hands each page to `book.notebook_html` (notebook pages as plain, light HTML) and
  `book.typeset` (every formula typeset at build time);
- `book.translations` holds every translation (``docs/<lang>/``) to the English: the same
  pages, the English code cells, outputs from the English execution, staleness recorded;
  `book.lang` picks the code cells each language's page shows (``# %% lang="vi"``);
- `book.site` builds every language into ``site/<lang>/``, and the root;
- `book.cli` is the command line:
  ``python -m book execute | check [--update] | path | site | translations``.

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
