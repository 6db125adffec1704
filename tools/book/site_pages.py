"""What each page of a language is rendered from: the work behind the hook's ``on_files``.

- An English chapter executes if it is stale (`book.executor`); every output that differs
  from what its source states is a warning (so a strict build fails); its page is the
  executed notebook, or a copy without other languages' code cells (`book.compose`).
- A translated page is composed from the English page and the language's catalog
  (`book.compose`): a chapter from the English execution, a Markdown page from the English
  Markdown, its links into the API reference pointed at the English site (`book.links`).
  A catalog that fails its checks fails the build (`book.translations.status`); a page with
  no catalog, or whose prose quotes a number that no output prints, is a warning.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polib

from book import BookError, compose, links, paths, shown, translations
from book.checker import check
from book.executor import execute


@dataclass(frozen=True)
class Source:
    """A page of a language: its ``src_uri``, and the notebook or the Markdown it shows."""

    uri: str
    notebook: Path | None = None
    markdown: str | None = None


def english_chapter(uri: str) -> tuple[Source, list[str]]:
    """The English chapter ``uri`` (relative to ``docs/en/``), executed, and its warnings."""
    chapter = paths.english() / uri
    executed, _ = execute(chapter)
    # The page shows these outputs: they must be the ones its source states.
    warnings = check(chapter, executed=executed).errors
    return Source(uri, compose.notebook_path(uri, paths.ENGLISH, executed)), warnings


def _translated(uri: str, language: str, merged: polib.POFile) -> tuple[Source, list[str]]:
    if uri.endswith(".py"):
        executed, _ = execute(paths.english() / uri)
        warnings = translations.number_problems(language, uri, executed, merged)
        return Source(uri, compose.notebook_path(uri, language, executed, merged)), warnings
    composed = compose.markdown(uri, language, merged)
    markdown, warnings = links.translated_markdown(composed, uri)
    return Source(uri, markdown=markdown), warnings


def translated(language: str) -> tuple[list[Source], list[str]]:
    """Every page of ``language``, and the warnings.

    Raises:
        BookError: If a catalog cannot be read, keeps formulas other than the English's, or
            translates no English page.
    """
    status = translations.status(language)
    if status.failed:
        extra = [
            f"{shown(paths.DOCS / language / po)} translates no English page" for po in status.extra
        ]
        raise BookError("\n".join([*extra, *status.problems]))
    warnings = [
        f"{shown(paths.DOCS / language)} has no catalog for {shown(paths.english() / page)}"
        for page in status.missing
    ]
    sources = []
    for uri, merged in status.catalogs.items():
        page, found = _translated(uri, language, merged)
        sources.append(page)
        warnings += found
    return sources, warnings
