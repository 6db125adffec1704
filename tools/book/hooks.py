"""The MkDocs hook (``hooks: [tools/book/hooks.py]`` in ``mkdocs.yml``): it routes MkDocs'
events to the modules that do the work, each of which runs without MkDocs.

- ``on_config``: the `book.build.Build` of this build, for the checkout that holds the
  config;
- ``on_files``: each page's source (`book.compose`): English chapters executed and
  checked, translated pages composed from the English and the language's catalog; and the
  weights of the playground's trained model (`book.trained`);
- ``on_page_content``: the page presented (`Presenter`): notebook markup simplified
  (`book.notebook_html`), links, names and marks edited (`book.page`), formulas typeset
  (`book.typeset`), kept in the store ``.cache/pages/<lang>/``;
- ``on_page_markdown``: the playground's markup and data (`book.playground.widget`), where a
  page asks for it;
- ``on_nav``: in a translation, a last entry that leads to the English API reference;
- ``on_page_context``: the languages that have this page, for the switcher
  (``partials/alternate.html``).

The same hook builds every language (``mkdocs.<lang>.yml``); the language is the name of
``docs_dir`` (``docs/vi``), which holds that language's catalogs (`book.translate`).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.util
import json
import logging
from pathlib import Path

from bs4 import BeautifulSoup
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files
from mkdocs.structure.nav import Link
from mkdocs.structure.toc import AnchorLink

from book import BookError, compose, links, notebook_html, page, playground, trained, typeset
from book.build import ENGLISH, REFERENCE, Build, Store
from book.page import PageError, PageInfo, anchors, with_code
from book.typeset import TypesetError

log = logging.getLogger("mkdocs.hooks.book")

# Languages that Material's search can only split into words with jieba installed.
SEGMENTED = {"zh": "jieba"}


class Presenter:
    """Presents the pages of one build, once per change; one MathJax process for them all.

    A page's result is kept in the store by the key of its input, its `book.page.PageInfo`
    and the tooling's own version, so a rebuild with nothing changed starts no Node process.
    """

    def __init__(self, build: Build, store: Store) -> None:
        self.mathjax = typeset.MathJax(build.node_modules / "mathjax")
        self.store, self.used = store, set[Path]()

    @functools.cached_property
    def tooling(self) -> str:
        """Hash of what presents a page: MathJax's version and the modules that use it."""
        digest = hashlib.sha256(self.mathjax.version().encode())
        for module in (notebook_html, page, links, typeset):
            digest.update(Path(module.__file__ or "").read_bytes())
        digest.update(typeset.SCRIPT.read_bytes())
        return digest.hexdigest()

    def present(self, html: str, info: PageInfo) -> tuple[str, list[str], list[str]]:
        """The content and contents titles as the reader gets them, and the warnings."""
        key = json.dumps([self.tooling, html, dataclasses.asdict(info)])
        cached = self.store.folder / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.json"
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
        result = {"html": html, "titles": titles, "warnings": warnings}
        self.store.put(cached, json.dumps(result).encode())
        return html, titles, warnings


@dataclasses.dataclass
class _State:
    """What one build of one language holds between MkDocs' events."""

    build: Build
    language: str
    presenter: Presenter


_state: _State | None = None
_dirty = False  # `mkdocs build --dirty` skips pages, so the store is not pruned


def state() -> _State:
    if _state is None:
        raise PluginError("the book's hook got an event before on_config")
    return _state


def language(config) -> str:
    """The language being built: the name of its docs folder (docs/en, docs/vi, ...)."""
    return Path(config["docs_dir"]).name


def on_startup(command, dirty):
    global _dirty
    _dirty = dirty


def on_config(config):
    """Make this build's `Build` (see the module doc); refuse to build a language whose search
    would silently lose its word splitting; give each language a cache of rendered notebooks
    of its own."""
    global _state
    on_build_error(None)  # `mkdocs serve` builds again after an edit: a fresh start
    try:
        build = Build(Path(config.config_file_path).parent)
    except BookError as error:
        raise PluginError(str(error)) from None
    lang = language(config)
    if lang not in build.languages:
        raise PluginError(f"docs_dir {config['docs_dir']}: not a language of extra.languages")
    _state = _State(build, lang, Presenter(build, build.store(f"pages/{lang}")))
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
        jupyter.config["cache_dir"] = str(build.store("mkdocs-jupyter").folder / lang)
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
    build = state().build
    try:
        weights = trained.export(build)
        files.append(File.generated(config, f"assets/{trained.FILE}", content=weights))
        if state().language == ENGLISH:
            for file in files:
                if file.src_uri.endswith(".py"):
                    source, warnings = compose.english_chapter(build, file.src_uri)
                    file.abs_src_path = str(source.notebook)
                    for warning in warnings:
                        log.warning(warning)
            return files
        sources, warnings = compose.translated(build, state().language)
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
    """Put the playground (`book.playground.widget`) where a page asks for it."""
    if playground.MARKER not in markdown:
        return markdown
    assets = "../" * page.url.count("/") + "assets/"
    manifest = trained.manifest(state().build)
    widget = playground.widget(config["extra"]["playground"], assets, manifest)
    return markdown.replace(playground.MARKER, widget)


def on_nav(nav, config, files):
    """In a translation, end the navigation with a link to the English API reference."""
    if state().language != ENGLISH:
        title = config["extra"]["translation"]["reference"]
        nav.items.append(Link(title, f"../{ENGLISH}/{REFERENCE}/"))
    return nav


def _toc_items(items: list[AnchorLink]) -> list[AnchorLink]:
    return [entry for item in items for entry in (item, *_toc_items(item.children))]


def on_page_content(html, page, config, files):
    """Present the page (`Presenter`); the search index is built from the result."""
    items = _toc_items(list(page.toc))
    info = _info(page, config, files, with_code(html, tuple(item.title for item in items)))
    try:
        html, titles, warnings = state().presenter.present(html, info)
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
        language=state().language,
        english=str(state().build.english),
        notebook=page.file.src_uri.endswith(".py"),
        urls=urls,
        words=dict(config["extra"]["translation"]),
        titles=titles,
    )


def on_page_context(context, page, config, nav):
    """The languages that have this page, for the switcher (``partials/alternate.html``):
    every language, but from the API reference, which stays English, English only."""
    in_reference = page.file.src_uri.split("/")[0] == REFERENCE
    context["same_page_in"] = [
        lang for lang in state().build.languages if lang == ENGLISH or not in_reference
    ]
    return context


def on_post_build(config):
    """Stop MathJax and forget the presented pages that this build did not use."""
    if not _dirty:
        state().presenter.store.prune(state().presenter.used)
    on_build_error(None)


def on_build_error(error):
    """Stop MathJax: a failed build must not leave a Node process behind."""
    if _state is not None:
        _state.presenter.mathjax.close()
        _state.presenter.used.clear()
