"""Translations: the same pages in another language, the prose translated, the code English.

A translation is a language of ``extra.languages``, with a config ``mkdocs.<lang>.yml`` that
inherits ``mkdocs.yml``, and a folder ``docs/<lang>/`` of gettext PO catalogs, one per
English page (``docs/vi/chapter-3/01-why-attention.po`` translates
``docs/en/chapter-3/01-why-attention.py``), the API reference excepted (it stays English).
Any PO editor opens them (Poedit, Lokalize, Weblate); `polib` reads and writes them here.

- **What is translated.** Each English page is cut into *units* (`units`): each paragraph of
  prose (a heading, a list, a table, a fenced block and a display formula are one paragraph
  each), and each figure's caption and alt text. A catalog has one entry per unit, the
  English as ``msgid`` and the translation as ``msgstr``. The code exists once, in English:
  every page is composed from the English page (`book.compose`), a chapter from its single
  English execution.
- **Staleness is per paragraph.** An entry is *current* when it translates a unit of today's
  English and is not ``fuzzy``. When the English changes, `merged` gives the changed unit
  the closest old entry, as gettext's ``msgmerge`` does, marked fuzzy with the old English
  beside it (``#| msgid``); the page marks it *behind*, and `status` counts it.
  ``python -m book translations --update`` writes the merge into the files.
- **A current translation keeps the English's formulas**: the same TeX, in any order, with a
  large integer's digits grouped as its language does (`2{.}360{.}064`; `problems`); and
  every number its prose quotes is one that the page prints (`number_problems`).
- A catalog for a page the English lacks, or one that cannot be read, fails the build; a page
  with no catalog at all is shown in English, every paragraph marked, with a warning.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import polib

from book import BookError, expectations, source
from book.build import Build
from book.execute import executed

_FENCE = re.compile(r"^\s*(```|~~~)")
_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n+", re.S)
# A paragraph with nothing to translate: only HTML tags, or only a display formula.
_NOTHING = re.compile(r"\A\s*(?:(?:</?[a-zA-Z][^>]*>\s*)+|\$\$.*\$\$\s*)\Z", re.S)


@dataclass(frozen=True)
class Unit:
    """One thing to translate on an English page."""

    text: str  # the English, as the msgid
    line: int  # where it is in the English file, for the PO comments and messages
    note: str = ""  # what it is, when not prose: "figure caption", "figure alt text"


def paragraphs(markdown: str) -> list[str]:
    """Markdown cut at its blank lines, except inside fenced blocks and ``$$`` formulas."""
    result: list[list[str]] = [[]]
    fenced = math = False
    for line in markdown.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        if line.strip() == "$$" and not fenced:
            math = not math
        if line.strip() or fenced or math:
            result[-1].append(line)
        elif result[-1]:
            result.append([])
    return ["\n".join(lines) for lines in result if lines]


def translatable(paragraph: str) -> bool:
    return _NOTHING.match(paragraph) is None


def markdown_body(page: Path) -> str:
    """A Markdown page without its front matter: what is shown, and translated."""
    return _FRONT_MATTER.sub("", page.read_text(encoding="utf-8"))


def units(build: Build, english: Path) -> list[Unit]:
    """Every unit of an English page, in page order (see the module doc)."""
    if english.suffix == ".md":
        return [Unit(p, 0) for p in paragraphs(markdown_body(english)) if translatable(p)]
    found = []
    for cell in build.chapter(english).cells:
        if cell.kind == "markdown":
            found += [Unit(p, cell.line) for p in paragraphs(cell.source) if translatable(p)]
        elif cell.is_code:
            texts = source.figure_texts(cell.source)
            found += [Unit(text, cell.line, f"figure {key}") for key, text in texts]
    return found


def po_path(build: Build, language: str, page: str) -> Path:
    """The catalog of ``page`` (relative to ``docs/en/``) in ``language``."""
    return (build.docs / language / page).with_suffix(".po")


def load(build: Build, path: Path) -> polib.POFile:
    """Read a PO file (an empty catalog if there is none).

    Raises:
        BookError: If the file is not a PO file.
    """
    if not path.is_file():
        return polib.POFile(wrapwidth=0)
    try:
        return polib.pofile(str(path), wrapwidth=0)
    except (OSError, ValueError) as error:  # polib raises IOError for a malformed file
        raise BookError(f"{build.shown(path)}: not a PO file: {error}") from None


def _entry(unit: Unit, where: str, old: polib.POEntry | None, previous: str = "") -> polib.POEntry:
    flags = ["fuzzy"] if previous or (old is not None and old.fuzzy) else []
    entry = polib.POEntry(
        msgid=unit.text,
        msgstr=old.msgstr if old is not None else "",
        occurrences=[(where, str(unit.line))] if unit.line else [],
        comment=unit.note,
        tcomment=old.tcomment if old is not None else "",
        flags=flags,
    )
    entry.previous_msgid = previous or (
        old.previous_msgid if old is not None and old.fuzzy else None
    )
    return entry


def merged(build: Build, found: polib.POFile, english: Path) -> polib.POFile:
    """``catalog`` for the English of today, as ``msgmerge`` would make it.

    Each unit keeps the entry with its English; a unit that has none takes the closest
    unused old entry (difflib's ratio of at least 0.6), marked fuzzy with the old English as
    its ``previous_msgid``; a unit with neither is untranslated. Old entries that no unit
    took are kept at the end as obsolete (``#~``), so no translation is lost.
    """
    where = english.relative_to(build.english).as_posix()
    old = {entry.msgid: entry for entry in found if entry.msgid}
    old.update({entry.msgid: entry for entry in found.obsolete_entries()})
    todo = {unit.text: unit for unit in units(build, english)}  # a repeated paragraph: one entry
    taken = {text: old[text] for text in todo if text in old}  # obsolete ones revive
    spare = [text for text in old if text not in taken]
    result = polib.POFile(wrapwidth=0)
    result.header, result.metadata = found.header, found.metadata
    for text, unit in todo.items():
        if text in taken:
            result.append(_entry(unit, where, taken[text]))
            continue
        match = difflib.get_close_matches(text, spare, n=1, cutoff=0.6)
        if match:
            spare.remove(match[0])
            result.append(_entry(unit, where, old[match[0]], previous=match[0]))
        else:
            result.append(_entry(unit, where, None))
    for text in spare:
        entry = old[text]
        entry.obsolete, entry.occurrences = True, []
        result.append(entry)
    return result


def catalog(build: Build, language: str, page: str) -> polib.POFile:
    """The catalog of ``page`` (relative to ``docs/en/``) in ``language``, `merged` with the
    English of today, once per build."""
    if (language, page) not in build.catalogs:
        found = load(build, po_path(build, language, page))
        build.catalogs[language, page] = merged(build, found, build.english / page)
    return build.catalogs[language, page]


def current(entry: polib.POEntry | None) -> bool:
    """Whether an entry translates today's English: translated and not marked fuzzy."""
    return entry is not None and bool(entry.msgstr) and not entry.fuzzy and not entry.obsolete


def catalogs(build: Build, language: str) -> list[str]:
    """The PO files of ``language``, relative to ``docs/<language>/``."""
    folder = build.docs / language
    return sorted(path.relative_to(folder).as_posix() for path in folder.rglob("*.po"))


@dataclass
class Status:
    """How one language stands against the English."""

    language: str
    pages: list[str] = field(default_factory=list)  # the pages whose catalog was read
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


def problems(build: Build, language: str, page: str) -> list[str]:
    """Current entries whose formulas differ from their English (see the module doc)."""
    where = build.shown(po_path(build, language, page))
    return [
        f"{where}: the translation of {entry.msgid[:50]!r}... has the formulas "
        f"{_formulas(entry.msgstr)}, the English {_formulas(entry.msgid)}"
        for entry in catalog(build, language, page)
        if current(entry) and _formulas(entry.msgstr) != _formulas(entry.msgid)
    ]


def number_problems(build: Build, language: str, page: str) -> list[str]:
    """Numbers that the current translations of chapter ``page`` quote and that no output on
    its page prints (the English chapter's prose is held to the same rule by `book.check`)."""
    nb = nbformat.read(executed(build, build.english / page), as_version=4)
    shown_cells = source.shown_cells(nb.cells, language)
    outputs = [expectations.output_text(c) for c in shown_cells if c.cell_type == "code"]
    code = tuple(c.source for c in shown_cells if c.cell_type == "code")
    where = build.shown(po_path(build, language, page))
    return [
        f"{where}: the translation of {entry.msgid[:50]!r}... quotes {number}, which no "
        "output of the chapter prints"
        for entry in catalog(build, language, page)
        if current(entry)
        for number in expectations.prose_numbers(entry.msgstr)
        if not expectations.appears_in(number, outputs, code)
    ]


def status(build: Build, language: str) -> Status:
    """Compare the catalogs of ``language`` with the English pages of today."""
    result = Status(language)
    wanted, have = build.pages(), catalogs(build, language)
    named = {Path(page).with_suffix(".po").as_posix(): page for page in wanted}
    result.missing = [page for po, page in named.items() if po not in have]
    result.extra = [po for po in have if po not in named]
    for page in wanted:
        try:
            live = [entry for entry in catalog(build, language, page) if not entry.obsolete]
        except BookError as error:
            result.problems.append(str(error))
            continue
        result.pages.append(page)
        result.units += len(live)
        result.behind[page] = sum(not current(entry) for entry in live)
        result.problems += problems(build, language, page)
    return result


def _metadata(language: str) -> dict[str, str]:
    """What every catalog's header says, so that any PO tool (msgfmt --check) reads it."""
    return {
        "Project-Id-Version": "attention-mechanisms",
        "Language": language,
        "MIME-Version": "1.0",
        "Content-Type": "text/plain; charset=UTF-8",
        "Content-Transfer-Encoding": "8bit",
    }


def update(build: Build, status: Status) -> list[Path]:
    """Write each catalog that ``status`` read, merged with the English of today (`merged`),
    so that translators see which entries are behind, and why.

    Returns:
        The catalogs that changed.
    """
    changed = []
    for page in status.pages:
        merged = catalog(build, status.language, page)
        path = po_path(build, status.language, page)
        if not merged.header:
            english = build.shown(build.english / page)
            merged.header = f"The {status.language} translation of {english}: see translations/."
        merged.metadata = {**_metadata(status.language), **merged.metadata}
        text = str(merged).rstrip("\n") + "\n"
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            changed.append(path)
    return changed
