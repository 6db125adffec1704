"""The MkDocs hook (``hooks: [tools/book/mkdocs_hooks.py]`` in ``mkdocs.yml``).

- Before the pages are read: execute the chapters that are stale (`book.executor`), report
  every output that differs from its source as a warning (so a strict build fails), and
  point each chapter page at its executed notebook, which mkdocs-jupyter renders and offers
  for download; for a chapter with code cells of one language (``lang="vi"``, `book.lang`),
  at a copy without the other languages' cells (`book.translations.write_composed`).
- On each page: notebook pages become plain Material markup (`book.notebook_html`), every
  formula in the content and the table of contents is typeset (`book.typeset`), links
  between source files point at the built pages, and ``[title][identifier]``
  cross-references in notebook Markdown become autorefs tags.

Both page steps are cached in ``.cache/pages/<lang>/`` by their input, so a rebuild with
nothing changed starts no Node process.

The same hook builds every language (``mkdocs.<lang>.yml``; the language is the name of
``docs_dir``). In a translation (`book.translations`):

- every English page must have its translated page, and a chapter's code must be the
  English code, or the build fails; a chapter page is composed from the English chapter's
  execution, so nothing is executed twice, and shows the code cells of no other language;
- links to the API reference, and cross-references to it, point at the English site;
- a page whose English prose changed since it was translated says so, in its language;
- the language switcher (``extra.alternate``, see ``partials/alternate.html``) leads to
  the same page in each language, or to that language's home for the API reference.
"""

from __future__ import annotations

import functools
import hashlib
import html as html_text
import importlib.util
import json
import logging
import posixpath
import re
import time
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.nav import Link
from mkdocs.structure.toc import AnchorLink
from pymdownx.slugs import slugify

from book import ROOT, BookError, notebook_html, translations, typeset
from book.checker import check
from book.executor import execute

log = logging.getLogger("mkdocs.hooks.book")

ENGLISH = "en"
PAGES_CACHE = ROOT / ".cache" / "pages"  # one folder per language
_mathjax = typeset.MathJax()
_used: set[Path] = set()  # the cached pages this build read or wrote
_dirty = False  # `mkdocs build --dirty` skips pages, so the cache is not pruned
# Languages that Material's search can only split into words with jieba installed.
SEGMENTED = {"zh": "jieba"}


def language(config) -> str:
    """The language being built: the name of its docs folder (docs/en, docs/vi, ...)."""
    return Path(config["docs_dir"]).name


def pages_cache(config) -> Path:
    return PAGES_CACHE / language(config)


def on_startup(command, dirty):
    """Note whether this is a ``--dirty`` build (``mkdocs build`` or ``serve``)."""
    global _dirty
    _dirty = dirty


def on_config(config):
    """Refuse to build a language whose search would silently lose its word splitting, and
    give each language a cache of rendered notebooks of its own."""
    module = SEGMENTED.get(config["theme"]["language"])
    if module and importlib.util.find_spec(module) is None:
        raise PluginError(
            f"search in {config['theme']['language']!r} needs {module!r} to split words, and it "
            f"is not installed; install the docs group (pip install --group docs)"
        )
    # mkdocs-jupyter forgets every cached page that its build did not render, so languages
    # sharing one folder would each evict the others' pages.
    jupyter = config["plugins"].get("mkdocs-jupyter") if "plugins" in config else None
    if jupyter is not None:
        jupyter.config["cache_dir"] = str(ROOT / ".cache" / "mkdocs-jupyter" / language(config))
    return config


def _execute(chapter: Path, name: str) -> Path:
    start = time.perf_counter()
    try:
        path, ran = execute(chapter)
    except BookError as error:
        raise PluginError(str(error)) from None
    if ran:
        log.info("executed %s in %.1f s", name, time.perf_counter() - start)
    return path


def on_files(files, config):
    """Execute stale chapters, check their outputs, point each page at its notebook."""
    docs_dir = Path(config["docs_dir"]).resolve()
    if language(config) != ENGLISH:
        return _translated_files(files, docs_dir)
    for file in files:
        if not file.src_uri.endswith(".py"):
            continue
        chapter = docs_dir / file.src_uri
        path = _execute(chapter, file.src_uri)
        # The page shows exactly these outputs, so they must be the ones the source states.
        for problem in check(chapter).errors:
            log.warning(problem)
        # mkdocs-jupyter renders, and offers for download, whatever this path points at:
        # the executed notebook, or a copy without the code cells of other languages.
        try:
            file.abs_src_path = str(translations.write_composed(chapter, path))
        except BookError as error:
            raise PluginError(str(error)) from None
    return files


def _translated_files(files, docs_dir: Path):
    """A translation's pages: all there, English code, composed from the English execution."""
    status = translations.status(docs_dir.name)
    for page in status.missing:
        log.warning("%s has no translation of docs/en/%s", docs_dir.name, page)
    for page in status.extra:
        log.warning("docs/%s/%s has no English page docs/en/%s", docs_dir.name, page, page)
    if status.problems:
        raise PluginError("\n".join(status.problems))
    for file in files:
        if not file.src_uri.endswith(".py") or file.src_uri in status.extra:
            continue
        page = docs_dir / file.src_uri
        executed = _execute(translations.ENGLISH / file.src_uri, f"en/{file.src_uri}")
        try:
            composed = translations.write_composed(page, executed)
        except BookError as error:
            raise PluginError(str(error)) from None
        for problem in translations.number_problems(page, executed):
            log.warning(problem)
        file.abs_src_path = str(composed)
    return files


def on_nav(nav, config, files):
    """In a translation, end the navigation with a link to the English API reference."""
    if language(config) != ENGLISH:
        title = config["extra"]["translation"]["reference"]
        nav.items.append(Link(title, f"../{ENGLISH}/{translations.UNTRANSLATED[0]}/"))
    return nav


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


def present(html: str, titles: list[str], notebook: bool, cache: Path) -> tuple[str, list[str]]:
    """The page content and TOC titles as the reader gets them (cached in ``cache``)."""
    key = hashlib.sha256(
        json.dumps([_tooling_version(), notebook, html, titles]).encode()
    ).hexdigest()[:24]
    cached = cache / f"{key}.json"
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


def _english_url(page, target: str) -> str:
    """The URL, from ``page`` of a translation, of the English page built from ``target``.

    Every language sits in its own folder beside English (site/vi/, site/en/).
    """
    name = posixpath.splitext(target)[0]
    url = "" if name == "index" else name.removesuffix("/index") + "/"
    return f"{'../' * page.url.count('/')}../{ENGLISH}/{url}"


def _reference_url(page, identifier: str) -> str | None:
    """The English API reference's URL of ``attention_mechanisms.<module>.<name>``."""
    module = identifier.split(".")[1]
    target = f"{translations.UNTRANSLATED[0]}/{module}.md"
    if not (translations.ENGLISH / target).is_file():
        log.warning(
            "%s refers to %s, which the API reference has no page for",
            page.file.src_uri,
            identifier,
        )
        return None
    return f"{_english_url(page, target)}#{identifier}"


def _in_reference(page, target: str) -> str | None:
    """``target`` (a link in ``page``) relative to the docs folder, if it is in the reference."""
    path = posixpath.normpath(posixpath.join(posixpath.dirname(page.file.src_uri), target))
    return path if path.split("/")[0] in translations.UNTRANSLATED else None


def _link_to_page(match: re.Match, page, files, config) -> str:
    target = posixpath.normpath(posixpath.join(posixpath.dirname(page.file.src_uri), match[1]))
    file = files.get_file_from_path(target)
    if file is None and language(config) != ENGLISH and _in_reference(page, match[1]):
        return f'href="{_english_url(page, target)}{match[2] or ""}"'
    if file is None:
        log.warning("%s links to %s, which is not a page of this site", page.file.src_uri, target)
        return match[0]
    return f'href="{file.url_relative_to(page.file)}{match[2] or ""}"'


# A relative Markdown link, [text](target#anchor).
_MARKDOWN_LINK = re.compile(r"\]\((?![a-z]+:|#|/)([^)\s#]+)(#[^)\s]*)?\)")


def on_page_markdown(markdown, page, config, files):
    """In a translation, point the reference's links and cross-references at the English."""
    if language(config) == ENGLISH:
        return markdown

    def link(match: re.Match) -> str:
        target = _in_reference(page, match[1])
        if target is None:
            return match[0]
        return f"]({_english_url(page, target)}{match[2] or ''})"

    def reference(match: re.Match) -> str:
        url = _reference_url(page, match[2])
        return match[0] if url is None else f"[{match[1]}]({url})"

    return _CROSS_REFERENCE.sub(reference, _MARKDOWN_LINK.sub(link, markdown))


def _stale_notice(page, config) -> str:
    """The notice on a translated page whose English prose changed (empty if it did not)."""
    source = Path(config["docs_dir"]) / page.file.src_uri
    english = translations.english_of(source)
    if not english.is_file() or translations.recorded_hash(source) == translations.prose_hash(
        english
    ):
        return ""  # a page the English lacks fails the build already
    words = config["extra"]["translation"]
    return (
        '<div class="admonition warning book-stale" data-search-exclude>'
        f'<p class="admonition-title">{html_text.escape(words["stale"])}</p>'
        f'<p><a href="{_english_url(page, page.file.src_uri)}" hreflang="{ENGLISH}">'
        f"{html_text.escape(words['english'])}</a></p></div>"
    )


_HEADING = re.compile(r"<h([1-6])([^>]*\bid=\"[^\"]*\"[^>]*)>(.*?)</h\1>", re.S)
_SLUG = slugify(case="lower")


def _heading_ids(html: str, items: list[AnchorLink], titles: list[str], page) -> str:
    """Give every heading, and its contents entry, an anchor made from its own words.

    mkdocs-jupyter's anchors keep ASCII only, so a Chinese heading gets an empty one, which
    its contents entry (``_1``) does not match. Headings and entries pair up in order.
    """
    headings = list(_HEADING.finditer(html))
    if len(headings) != len(items):
        raise PluginError(
            f"{page.file.src_uri}: {len(headings)} headings but {len(items)} contents entries"
        )
    used: set[str] = set()
    parts, start = [], 0
    for heading, item, title in zip(headings, items, titles, strict=True):
        text = html_text.unescape(re.sub(r"<[^>]+>", "", title))
        base = _SLUG(text, "-") or "section"
        anchor, number = base, 0
        while anchor in used:
            number += 1
            anchor = f"{base}_{number}"
        used.add(anchor)
        item.id = anchor
        level, attributes, inner = heading.groups()
        attributes = re.sub(r'\bid="[^"]*"', f'id="{anchor}"', attributes)
        inner = re.sub(r'(<a class="headerlink" href=)"#[^"]*"', rf'\1"#{anchor}"', inner)
        parts += [html[start : heading.start()], f"<h{level}{attributes}>{inner}</h{level}>"]
        start = heading.end()
    return "".join([*parts, html[start:]])


def on_page_content(html, page, config, files):
    """Present the page (see the module doc); the search index is built from the result."""
    notebook = page.file.src_uri.endswith(".py")
    items = _toc_items(list(page.toc))
    written = [item.title for item in items]
    try:
        html, titles = present(html, written, notebook, pages_cache(config))
    except (notebook_html.NotebookHTMLError, typeset.TypesetError) as error:
        raise PluginError(f"{page.file.src_uri}: {error}") from None
    for item, title in zip(items, titles, strict=True):
        item.title = title
    translated = language(config) != ENGLISH
    if translated:
        html = _heading_ids(html, items, written, page)
    if notebook:
        html = _LOCAL_LINK.sub(lambda match: _link_to_page(match, page, files, config), html)
        if translated:
            html = _CROSS_REFERENCE.sub(
                lambda m: f'<a href="{_reference_url(page, m[2]) or "#"}">{m[1]}</a>', html
            )
        else:
            html = _CROSS_REFERENCE.sub(r'<autoref identifier="\2">\1</autoref>', html)
    if translated:  # the headings' link titles, in the page's language
        permalink = html_text.escape(config["extra"]["translation"]["permalink"], quote=True)
        html = html.replace('title="Permanent link"', f'title="{permalink}"')
    if translated and (notice := _stale_notice(page, config)):
        heading_end = html.find("</h1>")
        cut = heading_end + len("</h1>") if heading_end >= 0 else 0
        html = html[:cut] + notice + html[cut:]
    return html


def on_page_context(context, page, config, nav):
    """The languages that have this page, for the switcher (``partials/alternate.html``)."""
    context["same_page_in"] = [
        alternate["lang"]
        for alternate in config["extra"].get("alternate", [])
        if (translations.DOCS / alternate["lang"] / page.file.src_uri).is_file()
    ]
    return context


# Material's switcher script fetches the sitemap of every language named in these head
# links, and sends a reader to that language's home page unless the site is served at
# exactly site_url (host, port and path). The switcher's own links already lead to the same
# page on any host (partials/alternate.html), so the head links go.
_HEAD_ALTERNATE = re.compile(r'\s*<link rel="alternate" href="[^"]*" hreflang="[^"]*">')


def on_post_page(output, page, config):
    return _HEAD_ALTERNATE.sub("", output)


def on_post_template(output_content, template_name, config):
    return _HEAD_ALTERNATE.sub("", output_content)


def on_post_build(config):
    """Stop MathJax and forget the presented pages that this build did not use."""
    _mathjax.close()
    cache = pages_cache(config)
    if cache.is_dir() and not _dirty:
        for stale in set(cache.glob("*.json")) - _used:
            stale.unlink()
    _used.clear()
    _tooling_version.cache_clear()  # `mkdocs serve` may rebuild after an edit


def on_build_error(error):
    """Stop MathJax: a failed build must not leave a Node process behind."""
    _mathjax.close()
    _tooling_version.cache_clear()
