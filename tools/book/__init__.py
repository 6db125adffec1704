"""The book's tooling: execute every chapter once, check what it prints, publish it.

Chapters are Jupytext "percent" scripts (``docs/en/**/*.py``); translations are gettext
catalogs (``docs/<lang>/**/*.po``). One module per job:

- `book.paths` says where everything is, and the book's own language, once;
- `book.source` reads and writes chapter sources: cells, metadata, stated outputs, lines;
- `book.include` gives a package class as a chapter shows it (no docstrings, no hints);
- `book.executor` executes a chapter into a notebook with outputs, cached under
  ``.cache/book/`` with the key `book.keys` makes, and enforces the chapter rules (cells
  that must raise, include cells);
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

One chapter, from its source to its page (``python -m book site``, or ``nox -s docs``):

1. `book.site.build` first holds the playground's JavaScript to the package, then runs
   ``mkdocs build`` for English, then for each translation side by side. In each build, the
   hook's ``on_files`` (`book.mkdocs_hooks`) asks `book.site_pages` for each page.
2. `book.site_pages.english_chapter` has the chapter executed by `book.executor.execute`:
   `book.keys.cache_key` parses the source (`book.source.read`, the one parse that every
   later reader shares) and hashes it with the package, and the chapter executes only if
   ``.cache/book/`` has no notebook under that key.
3. It hands that notebook to `book.checker.check`, which holds every output to the source's
   ``# Out:`` block (a difference is a warning, so the strict build fails), and to
   `book.compose.notebook_path`, which gives the notebook the page shows; ``on_files``
   points the page's file at it.
4. mkdocs-jupyter turns the notebook into HTML; ``on_page_content`` hands it to
   `book.render.Presenter.present`: plain markup, links and marks, formulas typeset.
5. When every language is built, `book.figures.externalize` moves each figure into a file
   beside its page (``mkdocs serve`` keeps them inline).

A translated chapter takes steps 2 and 3 from `book.site_pages.translated`:
`book.translations.status` merges each of the language's catalogs with today's English once
(`book.catalog.of_page`), and that catalog and the English notebook, found by `execute`,
are handed to `book.translations.number_problems` and `book.compose.notebook_path`. Each
language builds in a process of its own, so each process parses a chapter once.

The package is installed editable into the documentation environment (``pip install -e
tools``, which ``nox`` does), so every caller imports it the ordinary way.
"""

from __future__ import annotations

from pathlib import Path

from book import paths
from book.paths import ROOT

__all__ = ["ROOT", "BookError", "shown"]


class BookError(RuntimeError):
    """A chapter failed to execute or broke one of the book's rules."""


def shown(path: Path) -> str:
    """``path`` relative to the repository when it is inside it, for messages."""
    path, root = path.resolve(), paths.ROOT
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
