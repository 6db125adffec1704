"""Compose a translated page: the English page with each unit replaced by its translation.

The English chapter executes once; a translated chapter page is its executed notebook with
every Markdown paragraph, and every figure's caption and alt text, taken from the language's
catalog (`book.catalog`). The code cells and their outputs are the English ones: the code of
a chapter exists once, in English. A Markdown page is composed the same way from the English
Markdown.

A paragraph with no current translation (its English changed, or it is new) is *behind*.
It is shown as its last translation, or in English if it never had one (or if its
translation was the old English unchanged, as a command is), and marked: a
``<!-- book:behind -->`` comment goes before it, which the page turns into a visible note
linking to the English page (`book.page`). A reader of the translation thus keeps reading
their language, and sees exactly which paragraphs may say less than the English says now;
a figure's texts take the last translation there is, unmarked.

A code cell of one language (``lang="vi"``, `book.lang`) is shown on that language's page
only; an English chapter that has such cells is composed too, without the others'.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import nbformat
import polib
from bs4 import BeautifulSoup

from book import catalog, executor, lang, paths

BEHIND = "<!-- book:behind -->"
_PLACEHOLDER = re.compile(r"(\{[^{}]*\})")  # an f-string's {expression}, kept as a group


class Translator:
    """The translations of one page in one language, merged with the English of today."""

    def __init__(self, language: str, page: str, merged: polib.POFile | None = None) -> None:
        self.language = language
        self.catalog = catalog.of_page(language, page) if merged is None else merged
        self.entries = {entry.msgid: entry for entry in self.catalog if not entry.obsolete}
        self.behind = 0  # paragraphs shown without a current translation

    def paragraph(self, english: str) -> str:
        entry = self.entries.get(english)
        if entry is not None and catalog.current(entry):
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
            self.paragraph(p) if catalog.translatable(p) else p for p in catalog.paragraphs(english)
        )

    def text(self, template: str | None, english: str) -> str:
        """A figure's caption or alt text: its last translation, if it has one.

        ``template`` is the text as the code writes it (`book.catalog.figure_texts`); an
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
    for key, text in catalog.figure_texts(code):
        if not figures or key in figures[-1]:
            figures.append({})
        figures[-1][key] = text
    return figures


def notebook(
    page: str, language: str, executed: Path, merged: polib.POFile | None = None
) -> nbformat.NotebookNode:
    """The page of chapter ``page`` in ``language``, from the English ``executed`` notebook
    and the page's ``merged`` catalog (`book.catalog.of_page` if not given)."""
    nb = nbformat.read(executed, as_version=4)
    if language == paths.ENGLISH:
        nb.cells = lang.shown_cells(nb.cells, language)
        return nb
    translator = Translator(language, page, merged)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = translator.markdown(cell.source)
            continue
        figures = iter(_figures(cell.source))
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "<figcaption>" in data.get("text/html", ""):
                data["text/html"] = translator.figure(data["text/html"], next(figures, {}))
    nb.cells = lang.shown_cells(nb.cells, language)
    return nb


def markdown(page: str, language: str, merged: polib.POFile | None = None) -> str:
    """The Markdown page ``page`` in ``language`` (``merged`` as for `notebook`)."""
    english = catalog.markdown_body(paths.english() / page)
    return Translator(language, page, merged).markdown(english) + "\n"


def notebook_path(
    page: str, language: str, executed: Path, merged: polib.POFile | None = None
) -> Path:
    """The composed notebook, written once into ``.cache/translations/`` and reused while the
    execution, the catalog and this tooling stay the same.

    An English page whose code cells all belong to every language is ``executed`` itself.
    """
    if language == paths.ENGLISH and not lang.marked(paths.english() / page):
        return executed
    po = catalog.po_path(language, page)
    digest = hashlib.sha256(executed.read_bytes() + (po.read_bytes() if po.is_file() else b""))
    for module in (__file__, catalog.__file__, lang.__file__):
        digest.update(Path(module).read_bytes())
    digest.update(f"{polib.__version__} {nbformat.__version__}".encode())
    folder = paths.CACHE / "translations" / language / Path(page).with_suffix("")
    target = folder / digest.hexdigest()[:16] / Path(page).with_suffix(".ipynb").name
    if not target.exists():
        executor.store(notebook(page, language, executed, merged), target)
    return target
