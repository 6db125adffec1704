"""The MkDocs hook (``hooks: [tools/book/mkdocs_hooks.py]`` in ``mkdocs.yml``).

- Before the pages are read: execute the chapters that are stale (`book.executor`), report
  every output that differs from its source as a warning (so a strict build fails), and
  point each chapter page at its executed notebook, which mkdocs-jupyter renders and offers
  for download.
- On each page: notebook pages become plain Material markup (`book.notebook_html`), every
  formula in the content and the table of contents is typeset (`book.typeset`), links
  between source files point at the built pages, and ``[title][identifier]``
  cross-references in notebook Markdown become autorefs tags.

Both page steps are cached in ``.cache/pages/`` by their input, so a rebuild with nothing
changed starts no Node process.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import posixpath
import re
import time
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.toc import AnchorLink

from book import ROOT, BookError, notebook_html, typeset
from book.checker import check
from book.executor import execute

log = logging.getLogger("mkdocs.hooks.book")

PAGES_CACHE = ROOT / ".cache" / "pages"
_mathjax = typeset.MathJax()
_used: set[Path] = set()  # the cached pages this build read or wrote
_dirty = False  # `mkdocs build --dirty` skips pages, so the cache is not pruned


def on_startup(command, dirty):
    """Note whether this is a ``--dirty`` build (``mkdocs build`` or ``serve``)."""
    global _dirty
    _dirty = dirty


def on_files(files, config):
    """Execute stale chapters, check their outputs, point each page at its notebook."""
    docs_dir = Path(config["docs_dir"]).resolve()
    for file in files:
        if not file.src_uri.endswith(".py"):
            continue
        chapter = docs_dir / file.src_uri
        start = time.perf_counter()
        try:
            path, ran = execute(chapter)
        except BookError as error:
            raise PluginError(str(error)) from None
        if ran:
            log.info("executed %s in %.1f s", file.src_uri, time.perf_counter() - start)
        # The page shows exactly these outputs, so they must be the ones the source states.
        for problem in check(chapter).errors:
            log.warning(problem)
        # mkdocs-jupyter renders, and offers for download, whatever this path points at.
        file.abs_src_path = str(path)
    return files


def _toc_items(items: list[AnchorLink]) -> list[AnchorLink]:
    return [entry for item in items for entry in (item, *_toc_items(item.children))]


@functools.cache
def _tooling_version() -> str:
    """Hash of what presents a page: MathJax's version and the modules that use it."""
    digest = hashlib.sha256(_mathjax.version().encode())
    for module in (notebook_html, typeset):
        digest.update(Path(module.__file__).read_bytes())
    digest.update(typeset.SCRIPT.read_bytes())
    return digest.hexdigest()


def present(html: str, titles: list[str], notebook: bool) -> tuple[str, list[str]]:
    """The page content and TOC titles as the reader gets them (cached by their input)."""
    key = hashlib.sha256(
        json.dumps([_tooling_version(), notebook, html, titles]).encode()
    ).hexdigest()[:24]
    cached = PAGES_CACHE / f"{key}.json"
    _used.add(cached)
    if cached.exists():
        result = json.loads(cached.read_text(encoding="utf-8"))
        return result["html"], result["titles"]
    if notebook:
        html = notebook_html.simplify(html)
    html, *titles = typeset.typeset([html, *titles], _mathjax)
    cached.parent.mkdir(parents=True, exist_ok=True)
    partial = cached.with_suffix(".partial")  # an interrupted build leaves no broken entry
    partial.write_text(json.dumps({"html": html, "titles": titles}), encoding="utf-8")
    partial.replace(cached)
    return html, titles


# Cross-references in notebook Markdown use the autorefs syntax, [title][identifier], which
# nbconvert leaves as text; turn them into the tag that autorefs resolves (or reports).
_CROSS_REFERENCE = re.compile(r"\[([^\[\]]+)\]\[(attention_mechanisms(?:\.\w+)+)\]")
# Links between pages are written to source files, as in Markdown pages (page.py, page.md);
# nbconvert leaves them as they are, so point them at the built pages here.
_LOCAL_LINK = re.compile(r'(?<![\w:])href="(?![a-z]+:|#|/)([^"#]+\.(?:py|md))(#[^"]*)?"')


def _link_to_page(match: re.Match, page, files) -> str:
    target = posixpath.normpath(posixpath.join(posixpath.dirname(page.file.src_uri), match[1]))
    file = files.get_file_from_path(target)
    if file is None:
        log.warning("%s links to %s, which is not a page of this site", page.file.src_uri, target)
        return match[0]
    return f'href="{file.url_relative_to(page.file)}{match[2] or ""}"'


def on_page_content(html, page, config, files):
    """Present the page (see the module doc); the search index is built from the result."""
    notebook = page.file.src_uri.endswith(".py")
    items = _toc_items(list(page.toc))
    try:
        html, titles = present(html, [item.title for item in items], notebook)
    except (notebook_html.NotebookHTMLError, typeset.TypesetError) as error:
        raise PluginError(f"{page.file.src_uri}: {error}") from None
    for item, title in zip(items, titles, strict=True):
        item.title = title
    if notebook:
        html = _LOCAL_LINK.sub(lambda match: _link_to_page(match, page, files), html)
        html = _CROSS_REFERENCE.sub(r'<autoref identifier="\2">\1</autoref>', html)
    return html


def on_post_build(config):
    """Stop MathJax and forget the presented pages that this build did not use."""
    _mathjax.close()
    if PAGES_CACHE.is_dir() and not _dirty:
        for stale in set(PAGES_CACHE.glob("*.json")) - _used:
            stale.unlink()
    _used.clear()
    _tooling_version.cache_clear()  # `mkdocs serve` may rebuild after an edit


def on_build_error(error):
    """Stop MathJax: a failed build must not leave a Node process behind."""
    _mathjax.close()
    _tooling_version.cache_clear()
