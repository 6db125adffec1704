"""The MkDocs hook (``hooks: [tools/book/mkdocs_hooks.py]`` in ``mkdocs.yml``): it routes
MkDocs' events to the modules that do the work, each of which runs without MkDocs.

- ``on_files``: each page's source (`book.site_pages`): English chapters executed and
  checked, translated pages composed from the English and the language's catalog; and the
  weights of the playground's trained model (`book.trained`);
- ``on_page_content``: the page presented (`book.render`): notebook markup simplified,
  links, names and marks edited, formulas typeset, all cached in ``.cache/pages/<lang>/``;
- ``on_page_markdown``: the playground's markup and data (`book.playground_html`), where a
  page asks for it;
- ``on_nav``: in a translation, a last entry that leads to the English API reference;
- ``on_page_context``: the languages that have this page, for the switcher
  (``partials/alternate.html``).

The same hook builds every language (``mkdocs.<lang>.yml``); the language is the name of
``docs_dir`` (``docs/vi``), which holds that language's catalogs (`book.catalog`).
"""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files
from mkdocs.structure.nav import Link
from mkdocs.structure.toc import AnchorLink

from book import BookError, links, notebook_html, paths, playground_html, render, site_pages
from book.page import PageError, PageInfo, anchors, with_code
from book.typeset import TypesetError

log = logging.getLogger("mkdocs.hooks.book")

# Languages that Material's search can only split into words with jieba installed.
SEGMENTED = {"zh": "jieba"}
_presenter: render.Presenter | None = None
_dirty = False  # `mkdocs build --dirty` skips pages, so the cache is not pruned


def language(config) -> str:
    """The language being built: the name of its docs folder (docs/en, docs/vi, ...)."""
    return Path(config["docs_dir"]).name


def presenter() -> render.Presenter:
    global _presenter
    if _presenter is None:
        _presenter = render.Presenter()
    return _presenter


def on_startup(command, dirty):
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
        jupyter.config["cache_dir"] = str(paths.CACHE / "mkdocs-jupyter" / language(config))
    return config


def _notebook(config, uri: str, notebook: Path) -> File:
    """A page rendered from ``notebook``: a file that mkdocs-jupyter takes as one of its own.

    mkdocs-jupyter wraps each notebook file, and the wrapper works out its source path from
    the docs folder, so the path is set on the wrapper.
    """
    file = File.generated(config, uri, abs_src_path=str(notebook))
    (wrapped,) = config["plugins"]["mkdocs-jupyter"].on_files(Files([file]), config)
    wrapped.abs_src_path = str(notebook)
    return wrapped


def on_files(files, config):
    """Point each chapter at its notebook; in a translation, compose every page.

    This runs after mkdocs-jupyter's ``on_files`` (plugins come before hooks), which has
    wrapped the English chapters already.
    """
    from book import trained  # imports torch, which only this file needs

    trained.forget()
    files.append(File.generated(config, f"assets/{trained.FILE}", content=trained.export()))
    try:
        if language(config) == paths.ENGLISH:
            for file in files:
                if file.src_uri.endswith(".py"):
                    source, warnings = site_pages.english_chapter(file.src_uri)
                    file.abs_src_path = str(source.notebook)
                    for warning in warnings:
                        log.warning(warning)
            return files
        sources, warnings = site_pages.translated(language(config))
    except BookError as error:
        raise PluginError(str(error)) from None
    for warning in warnings:
        log.warning(warning)
    kept = [file for file in files if not file.src_uri.endswith(".po")]
    made = [
        _notebook(config, s.uri, s.notebook)
        if s.notebook
        else File.generated(config, s.uri, content=s.markdown or "")
        for s in sources
    ]
    return Files([*kept, *made])


def on_page_markdown(markdown, page, config, files):
    """Put the playground (`book.playground_html`) where a page asks for it."""
    if playground_html.MARKER not in markdown:
        return markdown
    assets = "../" * page.url.count("/") + "assets/"
    widget = playground_html.widget(config["extra"]["playground"], assets)
    return markdown.replace(playground_html.MARKER, widget)


def on_nav(nav, config, files):
    """In a translation, end the navigation with a link to the English API reference."""
    if language(config) != paths.ENGLISH:
        title = config["extra"]["translation"]["reference"]
        nav.items.append(Link(title, f"../{paths.ENGLISH}/{links.REFERENCE}/"))
    return nav


def _toc_items(items: list[AnchorLink]) -> list[AnchorLink]:
    return [entry for item in items for entry in (item, *_toc_items(item.children))]


def on_page_content(html, page, config, files):
    """Present the page (`book.render`); the search index is built from the result."""
    items = _toc_items(list(page.toc))
    info = _info(page, config, files, with_code(html, tuple(item.title for item in items)))
    try:
        html, titles, warnings = presenter().present(
            html, info, paths.CACHE / "pages" / language(config)
        )
    except (notebook_html.NotebookHTMLError, PageError, TypesetError) as error:
        raise PluginError(f"{page.file.src_uri}: {error}") from None
    for warning in warnings:
        log.warning(warning)
    ids = anchors(info.titles) if info.translated else [item.id for item in items]
    for item, title, anchor in zip(items, titles, ids, strict=True):
        item.title, item.id = title, anchor
    return html


def _info(page, config, files, titles: tuple[str, ...]) -> PageInfo:
    urls = {file.src_uri: file.url_relative_to(page.file) for file in files.documentation_pages()}
    return PageInfo(
        uri=page.file.src_uri,
        language=language(config),
        notebook=page.file.src_uri.endswith(".py"),
        urls=urls,
        words=dict(config["extra"]["translation"]),
        titles=titles,
    )


def on_page_context(context, page, config, nav):
    """The languages that have this page, for the switcher (``partials/alternate.html``):
    every language, but from the API reference, which stays English, English only."""
    in_reference = page.file.src_uri.split("/")[0] == links.REFERENCE
    context["same_page_in"] = [
        entry["lang"]
        for entry in config["extra"]["languages"]
        if entry["lang"] == paths.ENGLISH or not in_reference
    ]
    return context


def on_post_build(config):
    """Stop MathJax and forget the presented pages that this build did not use."""
    if not _dirty:
        presenter().prune(paths.CACHE / "pages" / language(config))
    on_build_error(None)


def on_build_error(error):
    """Stop MathJax: a failed build must not leave a Node process behind."""
    global _presenter
    if _presenter is not None:
        _presenter.close()
        _presenter = None
