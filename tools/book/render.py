"""Present a page as the reader gets it, once per change: simplify, edit, typeset; cached.

`present` takes the page content that MkDocs (or mkdocs-jupyter) rendered and returns it
with a chapter's notebook markup simplified (`book.notebook_html`), the page's links, names
and marks edited (`book.page`), all in one parsed tree, and then every formula typeset
(`book.typeset`), in the content and in the contents entries. The result is cached in a
folder per language, keyed by the input, the `book.page.PageInfo` and the tooling's own
version, so a rebuild with nothing changed starts no Node process; `Presenter.prune`
forgets the entries a build did not use.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from pathlib import Path

from bs4 import BeautifulSoup

from book import links, notebook_html, page, typeset


class Presenter:
    """Presents the pages of one build; one MathJax process for them all."""

    def __init__(self) -> None:
        self.mathjax = typeset.MathJax()
        self.used: set[Path] = set()

    @functools.cached_property
    def tooling(self) -> str:
        """Hash of what presents a page: MathJax's version and the modules that use it."""
        digest = hashlib.sha256(self.mathjax.version().encode())
        for module in (notebook_html, page, links, typeset):
            digest.update(Path(module.__file__ or "").read_bytes())
        digest.update(typeset.SCRIPT.read_bytes())
        return digest.hexdigest()

    def present(
        self, html: str, info: page.PageInfo, cache: Path
    ) -> tuple[str, list[str], list[str]]:
        """The content and contents titles as the reader gets them, and the warnings.

        Raises:
            book.notebook_html.NotebookHTMLError, book.page.PageError,
            book.typeset.TypesetError: If the page cannot be presented.
        """
        key = json.dumps([self.tooling, html, dataclasses.asdict(info)])
        cached = cache / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.json"
        self.used.add(cached)
        if cached.exists():
            result = json.loads(cached.read_text(encoding="utf-8"))
            return result["html"], result["titles"], result["warnings"]
        soup = BeautifulSoup(html, "html.parser")
        if info.notebook:  # the notebook's new markup, in place of the template's
            notebook = notebook_html.simplify(soup)
            soup.clear()
            soup.append(notebook)
        warnings = page.edit(soup, info)
        html, *titles = typeset.typeset([str(soup), *info.titles], self.mathjax)
        cached.parent.mkdir(parents=True, exist_ok=True)
        partial = cached.with_suffix(".partial")  # an interrupted build leaves no broken entry
        result = {"html": html, "titles": titles, "warnings": warnings}
        partial.write_text(json.dumps(result), encoding="utf-8")
        partial.replace(cached)
        return html, titles, warnings

    def prune(self, cache: Path) -> None:
        """Forget the cached pages of ``cache`` that this build did not use."""
        if cache.is_dir():
            for stale in set(cache.glob("*.json")) - self.used:
                stale.unlink()
        self.used.clear()

    def close(self) -> None:
        self.mathjax.close()
        self.__dict__.pop("tooling", None)  # `mkdocs serve` may rebuild after an edit
