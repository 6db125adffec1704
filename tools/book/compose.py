"""Compose a translated page: the English page with each unit replaced by its translation.

The English chapter executes once; a translated chapter page is its executed notebook with
every Markdown paragraph, and every figure's caption and alt text, taken from the language's
catalog (`book.translate`). The code cells and their outputs are the English ones: the code of
a chapter exists once, in English. A Markdown page is composed the same way from the English
Markdown.

A paragraph with no current translation (its English changed, or it is new) is *behind*.
It is shown as its last translation, or in English if it never had one (or if its
translation was the old English unchanged, as a command is), and marked: a
``<!-- book:behind -->`` comment goes before it, which the page turns into a visible note
linking to the English page (`book.page`). A reader of the translation thus keeps reading
their language, and sees exactly which paragraphs may say less than the English says now;
a figure's texts take the last translation there is, unmarked.

A code cell of one language (``lang="vi"``, `book.source`) is shown on that language's page
only; an English chapter that has such cells is composed too, without the others'. Composed
notebooks are kept in the store ``.cache/translations/``.

What each page of a language is made from (`english_chapter`, `translated`, which the hook's
``on_files`` calls): an English chapter is checked (`book.check`: every output that differs
from what its source states is a warning, so a strict build fails), and its page is its
execution; a translated chapter's prose numbers are held to the outputs it shows, and a
translated Markdown page has its links into the API reference pointed at the English site
(`book.links`). A catalog that fails its checks fails the build (`book.translate.status`); a
page with no catalog is a warning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import nbformat
import polib
from bs4 import BeautifulSoup

from book import BookError, links, source, translate
from book.build import ENGLISH, Build, digest
from book.check import check
from book.execute import executed

BEHIND = "<!-- book:behind -->"
_PLACEHOLDER = re.compile(r"(\{[^{}]*\})")  # an f-string's {expression}, kept as a group


class Translator:
    """The translations of one page in one language, merged with the English of today."""

    def __init__(self, build: Build, language: str, page: str) -> None:
        self.language = language
        found = translate.catalog(build, language, page)
        self.entries = {entry.msgid: entry for entry in found if not entry.obsolete}
        self.behind = 0  # paragraphs shown without a current translation

    def paragraph(self, english: str) -> str:
        entry = self.entries.get(english)
        if entry is not None and translate.current(entry):
            return entry.msgstr
        self.behind += 1
        text = entry.msgstr if entry is not None and entry.msgstr else english
        if entry is not None and entry.msgstr == entry.previous_msgid:
            text = english  # kept as the English was (a command, say): the English of today
        indent = english[: len(english) - len(english.lstrip(" "))]
        return f"{indent}{BEHIND}\n\n{text}"

    def markdown(self, english: str) -> str:
        """English Markdown with each paragraph translated (see the module doc)."""
        return "\n\n".join(
            self.paragraph(p) if translate.translatable(p) else p
            for p in translate.paragraphs(english)
        )

    def text(self, template: str | None, english: str) -> str:
        """A figure's caption or alt text: its last translation, if it has one.

        ``template`` is the text as the code writes it (`book.source.figure_texts`); an
        f-string's values, ``{expression}``, are taken from the English output ``english``
        and put where the translation has the same ``{expression}``.
        """
        template = english if template is None else template
        entry: polib.POEntry | None = self.entries.get(template)
        if entry is None or not entry.msgstr:
            return english
        pieces = _PLACEHOLDER.split(template)  # text, {expression}, text, ...
        pattern = "".join("(.*?)" if i % 2 else re.escape(piece) for i, piece in enumerate(pieces))
        values = re.fullmatch(pattern, english, re.S)
        translated = entry.msgstr
        for placeholder, value in zip(
            pieces[1::2], values.groups() if values else (), strict=False
        ):
            translated = translated.replace(placeholder, value)
        return translated

    def figure(self, html: str, templates: dict[str, str]) -> str:
        """A figure's HTML (`attention_mechanisms.plotting`) with its texts translated."""
        soup = BeautifulSoup(html, "html.parser")
        for image in soup.find_all("img", alt=True):
            image["alt"] = self.text(templates.get("alt"), str(image["alt"]))
        for caption in soup.find_all("figcaption"):
            caption.string = self.text(templates.get("caption"), caption.get_text())
        return str(soup)


def _figures(code: str) -> list[dict[str, str]]:
    """The texts of each figure a code cell draws, in order: ``{"caption": ..., "alt": ...}``."""
    figures: list[dict[str, str]] = []
    for key, text in source.figure_texts(code):
        if not figures or key in figures[-1]:
            figures.append({})
        figures[-1][key] = text
    return figures


def notebook(build: Build, page: str, language: str) -> nbformat.NotebookNode:
    """The page of chapter ``page`` in ``language``, from the English execution."""
    nb = nbformat.read(executed(build, build.english / page), as_version=4)
    if language != ENGLISH:
        translator = Translator(build, language, page)
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                cell.source = translator.markdown(cell.source)
                continue
            figures = iter(_figures(cell.source))
            for output in cell.get("outputs", []):
                data = output.get("data", {})
                if "<figcaption>" in data.get("text/html", ""):
                    data["text/html"] = translator.figure(data["text/html"], next(figures, {}))
    nb.cells = source.shown_cells(nb.cells, language)
    return nb


def markdown(build: Build, page: str, language: str) -> str:
    """The Markdown page ``page`` in ``language``."""
    english = translate.markdown_body(build.english / page)
    return Translator(build, language, page).markdown(english) + "\n"


def notebook_path(build: Build, page: str, language: str) -> Path:
    """The composed notebook, kept in the store while the execution, the catalog and this
    tooling stay the same. An English page whose code cells all belong to every language is
    its execution itself."""
    english = executed(build, build.english / page)
    chapter = build.chapter(build.english / page)
    if language == ENGLISH and not any(source.LANG in c.metadata for c in chapter.cells):
        return english
    po = translate.po_path(build, language, page)
    key = digest(
        [
            english.read_bytes(),
            po.read_bytes() if po.is_file() else b"",
            *(
                Path(module).read_bytes()
                for module in (__file__, translate.__file__, source.__file__)
            ),
            f"{polib.__version__} {nbformat.__version__}",
        ]
    )
    store, name = build.store("translations"), Path(page).with_suffix("")
    target = store.path(f"{language}/{name.as_posix()}", key, f"{name.name}.ipynb")
    if not target.exists():
        store.put(target, nbformat.writes(notebook(build, page, language)).encode())
    return target


@dataclass(frozen=True)
class Source:
    """A page of a language: its ``src_uri``, and the notebook or the Markdown it shows."""

    uri: str
    notebook: Path | None = None
    markdown: str | None = None


def english_chapter(build: Build, uri: str) -> tuple[Source, list[str]]:
    """The English chapter ``uri`` (relative to ``docs/en/``), executed, and its warnings."""
    # The page shows these outputs: they must be the ones its source states.
    warnings = check(build, build.chapter(build.english / uri)).errors
    return Source(uri, notebook_path(build, uri, ENGLISH)), warnings


def _translated(build: Build, uri: str, language: str) -> tuple[Source, list[str]]:
    if uri.endswith(".py"):
        warnings = translate.number_problems(build, language, uri)
        return Source(uri, notebook_path(build, uri, language)), warnings
    composed, warnings = links.translated_markdown(
        build.english, markdown(build, uri, language), uri
    )
    return Source(uri, markdown=composed), warnings


def translated(build: Build, language: str) -> tuple[list[Source], list[str]]:
    """Every page of ``language``, and the warnings.

    Raises:
        BookError: If a catalog cannot be read, keeps formulas other than the English's, or
            translates no English page.
    """
    status = translate.status(build, language)
    if status.failed:
        folder = build.docs / language
        extra = [f"{build.shown(folder / po)} translates no English page" for po in status.extra]
        raise BookError("\n".join([*extra, *status.problems]))
    warnings = [
        f"{build.shown(build.docs / language)} has no catalog for "
        f"{build.shown(build.english / page)}"
        for page in status.missing
    ]
    sources = []
    for uri in status.pages:
        page, found = _translated(build, uri, language)
        sources.append(page)
        warnings += found
    return sources, warnings
