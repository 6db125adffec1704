"""The book's tooling: execute every chapter once, check what it prints, publish it.

Chapters are Jupytext "percent" scripts (``docs/en/**/*.py``); translations are gettext
catalogs (``docs/<lang>/**/*.po``). A build is explicit stages over one `book.build.Build`,
which holds the checkout's places and facts and what the stages found (parsed chapters,
executions, catalogs); what outlives a build is in one on-disk store, ``.cache/``
(`book.build.Store`). The stages stand on floors, each importing only those below it
(`tests/test_book_layers.py` holds them):

1. `book.source` (the chapter format: cells, stated outputs, ``lang=`` cells, figure texts),
   `book.expectations` (outputs compared at their printed precision), `book.include` (a
   package class as a chapter shows it), `book.typeset`, `book.notebook_html`,
   `book.playground` (the playground's data and markup);
2. `book.build`;
3. `book.execute`: **execute** a chapter into a notebook, once per change; `book.links`;
   `book.publish`: **publish** the site (every language, figures as files, the root);
4. `book.check`: **check** every output against the source; `book.translate`: **translate**
   (the catalogs); `book.trained` (the model the playground shows); `book.page`;
5. `book.compose` (each page of each language, from its execution and its catalog),
   `book.playground_check` (the **playground**'s JavaScript held to the package);
6. `book.hooks` (MkDocs' events: **present** each page), `book.cli` (the command line).

One chapter, from its source to its page (``python -m book site``, or ``nox -s docs``):

1. ``python -m book site`` holds the playground's JavaScript to the package, then
   `book.publish.build_site` runs ``mkdocs build`` for English, then for each translation
   side by side. In each build, the hook's ``on_config`` makes the `Build` of the checkout
   that holds the config, and ``on_files`` asks `book.compose` for each page.
2. `book.compose.english_chapter` checks the chapter (`book.check.check`), which takes its
   execution from `book.execute.execute`: the chapter is parsed once
   (`book.build.Build.chapter`), keyed by its source, the package, the tooling and the
   environment, and executed only if ``.cache/book/`` has no notebook under that key.
   Every output that differs from the source's ``# Out:`` block is a warning, so the
   strict build fails.
3. `book.compose.notebook_path` gives the notebook the page shows (the execution itself,
   or a copy without other languages' cells); ``on_files`` points the page at it.
4. mkdocs-jupyter turns the notebook into HTML; the hook's ``on_page_content`` presents it
   (`book.hooks.Presenter`): plain markup, links and marks, formulas typeset.
5. When every language is built, `book.publish.externalize` moves each figure into a file
   beside its page, and `book.publish.write_root` writes the site's root.

A translated chapter takes steps 2 and 3 from `book.compose.translated`: each catalog is
merged with today's English once (`book.translate.catalog`), its prose numbers are held to
the English execution's outputs, and `book.compose` makes its page from both.

The package is installed editable (``pip install -e tools``, which ``nox`` does), so MkDocs,
the tests and the command line import it the ordinary way.
"""

from __future__ import annotations


class BookError(RuntimeError):
    """A chapter failed to execute or broke one of the book's rules."""
