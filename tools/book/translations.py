"""Translations: the same pages in another language, the prose translated, the code English.

A translation is a language code with a config ``mkdocs.<lang>.yml`` that inherits
``mkdocs.yml``, and a folder ``docs/<lang>/`` holding one PO catalog per English page
(`book.catalog`), the API reference excepted (it stays English). The rules:

- **The code exists once, in English.** A catalog holds prose and figure texts only; every
  page is composed from the English page (`book.compose`), a chapter from its single
  English execution, so no translated chapter executes and no code is copied.
- **Staleness is per paragraph.** An English edit makes only the paragraphs it touched
  *behind*; the page marks those, and `status` counts them.
- **A current translation keeps the English's formulas**: the same TeX, in any order, with a
  large integer's digits grouped as its language does (`2{.}360{.}064`; `problems`); and
  every number its prose quotes is one that the page prints (`number_problems`). A paragraph
  that is behind is held to neither: the English moved.
- A catalog for a page the English lacks, or one that cannot be read, fails the build; a page
  with no catalog at all is shown in English, every paragraph marked, with a warning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import polib

from book import BookError, catalog, expectations, lang, links, paths, shown

UNTRANSLATED = (links.REFERENCE,)  # folders of docs/en/ that every language links to in English


def english_pages() -> list[str]:
    """Every English page that a translation translates, relative to ``docs/en/``."""
    english = paths.english()
    return sorted(
        path.relative_to(english).as_posix()
        for path in english.rglob("*")
        if path.suffix in (".md", ".py") and path.relative_to(english).parts[0] not in UNTRANSLATED
    )


def catalogs(language: str) -> list[str]:
    """The PO files of ``language``, relative to ``docs/<language>/``."""
    folder = paths.DOCS / language
    return sorted(path.relative_to(folder).as_posix() for path in folder.rglob("*.po"))


@dataclass
class Status:
    """How one language stands against the English."""

    language: str
    catalogs: dict[str, polib.POFile] = field(default_factory=dict)  # page -> merged catalog
    missing: list[str] = field(default_factory=list)  # English pages with no catalog
    extra: list[str] = field(default_factory=list)  # catalogs of no English page
    problems: list[str] = field(default_factory=list)  # what fails the build
    behind: dict[str, int] = field(default_factory=dict)  # page -> paragraphs behind
    units: int = 0  # paragraphs and figure texts, all pages

    @property
    def failed(self) -> bool:
        return bool(self.extra or self.problems)


# A digit group's separator in TeX, as each language writes it: 2{,}360{,}064, 2{.}360{.}064,
# 2\,360\,064. It separates groups of three digits; any other "{,}" is left alone.
_TEX_GROUP = re.compile(r"(?<=\d)(?:\{[,.]\}|\\,)(?=\d{3}(?!\d))")


def _formulas(text: str) -> list[str]:
    """A text's formulas, spacing and digit grouping normalised, in TeX order (translations may
    reorder them, and group a large integer's digits as their readers do)."""
    found = expectations.MATH.findall(" ".join(text.split()))
    return sorted(_TEX_GROUP.sub("", " ".join(f.split())) for f in found)


def problems(language: str, page: str, merged: polib.POFile) -> list[str]:
    """Current entries whose formulas differ from their English (see the module doc)."""
    where = shown(catalog.po_path(language, page))
    return [
        f"{where}: the translation of {entry.msgid[:50]!r}... has the formulas "
        f"{_formulas(entry.msgstr)}, the English {_formulas(entry.msgid)}"
        for entry in merged
        if catalog.current(entry) and _formulas(entry.msgstr) != _formulas(entry.msgid)
    ]


def number_problems(
    language: str, page: str, executed: Path, merged: polib.POFile | None = None
) -> list[str]:
    """Numbers that the current translations quote and that no output on the page prints (a
    code cell of another language is not shown, `book.lang`).

    ``merged`` is the page's catalog as `status` merged it (`book.catalog.of_page` if not
    given). The English chapter's prose is held to the same rule by `book.checker`.
    """
    nb = nbformat.read(executed, as_version=4)
    shown_cells = lang.shown_cells(nb.cells, language)
    outputs = [expectations.output_text(c) for c in shown_cells if c.cell_type == "code"]
    code = tuple(c.source for c in shown_cells if c.cell_type == "code")
    path = catalog.po_path(language, page)
    merged = catalog.of_page(language, page) if merged is None else merged
    return [
        f"{shown(path)}: the translation of {entry.msgid[:50]!r}... quotes {number}, which no "
        "output of the chapter prints"
        for entry in merged
        if catalog.current(entry)
        for number in expectations.prose_numbers(entry.msgstr)
        if not expectations.appears_in(number, outputs, code)
    ]


def status(language: str) -> Status:
    """Compare the catalogs of ``language`` with the English pages of today."""
    result = Status(language)
    wanted, have = english_pages(), catalogs(language)
    named = {Path(page).with_suffix(".po").as_posix(): page for page in wanted}
    result.missing = [page for po, page in named.items() if po not in have]
    result.extra = [po for po in have if po not in named]
    for page in wanted:
        try:
            merged = catalog.of_page(language, page)
        except BookError as error:
            result.problems.append(str(error))
            continue
        result.catalogs[page] = merged
        live = [entry for entry in merged if not entry.obsolete]
        result.units += len(live)
        result.behind[page] = sum(not catalog.current(entry) for entry in live)
        result.problems += problems(language, page, merged)
    return result


def update(status: Status) -> list[Path]:
    """Write each catalog that ``status`` merged with the English of today (see
    `book.catalog.merged`), so that translators see which entries are behind, and why.

    Returns:
        The catalogs that changed.
    """
    changed = []
    for page, merged in status.catalogs.items():
        path = catalog.po_path(status.language, page)
        if not merged.header:
            english = shown(paths.english() / page)
            merged.header = f"The {status.language} translation of {english}: see translations/."
        text = str(merged).rstrip("\n") + "\n"
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            changed.append(path)
    return changed
