"""What a translator translates, and where the translations are kept: gettext PO catalogs.

The English pages are cut into *units* (`units`): each paragraph of prose, paragraph by
paragraph (a heading, a list, a table, a fenced block and a display formula are one
paragraph each), and each figure's caption and alt text. A unit is translated as a whole.

Each translated page is a PO file, ``docs/<lang>/<page>.po`` (``docs/vi/chapter-3/
01-why-attention.po`` translates ``docs/en/chapter-3/01-why-attention.py``), the format of
Sphinx projects and the Python documentation: one entry per unit, the English as ``msgid``
and the translation as ``msgstr``. Any PO editor opens it (Poedit, Lokalize, Weblate), and so
does a text editor; `polib` reads and writes it here.

An entry is *current* when it translates a unit of today's English and is not marked
``fuzzy``. When the English changes, the unit it changed no longer matches its entry:
`merged` finds the closest old entry, as gettext's ``msgmerge`` does, and marks it fuzzy,
keeping the old English beside it (``#| msgid``). Every other entry stays current. A
translator updates the text and removes the ``fuzzy`` flag; ``python -m book translations
--update`` writes the merge into the files, so the translator sees what changed.
"""

from __future__ import annotations

import ast
import difflib
import re
from dataclasses import dataclass
from pathlib import Path

import polib

from book import BookError, paths, shown, source

FIGURE_TEXTS = ("caption", "alt")  # keyword arguments of a figure call: prose in code
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


def _text(node: ast.expr) -> str | None:
    """A string argument as a translator sees it: a constant as it is; an f-string with each
    value as ``{expression}``, which `book.compose` fills in from the English output."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if not isinstance(node, ast.JoinedStr):
        return None
    parts = []
    for part in node.values:
        if isinstance(part, ast.FormattedValue):
            parts.append(f"{{{ast.unparse(part.value)}}}")
        elif isinstance(part, ast.Constant):
            parts.append(str(part.value))
    return "".join(parts)


def figure_texts(code: str) -> list[tuple[str, str]]:
    """``(keyword, text)`` of each ``caption=`` and ``alt=`` string in a code cell."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    found = [
        (keyword.arg, _text(keyword.value))
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        for keyword in node.keywords
        if keyword.arg in FIGURE_TEXTS
    ]
    return [(str(key), text) for key, text in found if text is not None]


def markdown_body(page: Path) -> str:
    """A Markdown page without its front matter: what is shown, and translated."""
    return _FRONT_MATTER.sub("", page.read_text(encoding="utf-8"))


def units(english: Path) -> list[Unit]:
    """Every unit of an English page, in page order (see the module doc)."""
    if english.suffix == ".md":
        return [Unit(p, 0) for p in paragraphs(markdown_body(english)) if translatable(p)]
    found = []
    for cell in source.read(english).cells:
        if cell.kind == "markdown":
            found += [Unit(p, cell.line) for p in paragraphs(cell.source) if translatable(p)]
        elif cell.is_code:
            texts = figure_texts(cell.source)
            found += [Unit(text, cell.line, f"figure {key}") for key, text in texts]
    return found


def po_path(language: str, page: str) -> Path:
    """The catalog of ``page`` (relative to ``docs/en/``) in ``language``."""
    return (paths.DOCS / language / page).with_suffix(".po")


def load(path: Path) -> polib.POFile:
    """Read a PO file (an empty catalog if there is none).

    Raises:
        BookError: If the file is not a PO file.
    """
    if not path.is_file():
        return polib.POFile(wrapwidth=0)
    try:
        return polib.pofile(str(path), wrapwidth=0)
    except (OSError, ValueError) as error:  # polib raises IOError for a malformed file
        raise BookError(f"{shown(path)}: not a PO file: {error}") from None


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


def merged(catalog: polib.POFile, english: Path) -> polib.POFile:
    """``catalog`` for the English of today, as ``msgmerge`` would make it.

    Each unit keeps the entry with its English; a unit that has none takes the closest
    unused old entry (difflib's ratio of at least 0.6), marked fuzzy with the old English as
    its ``previous_msgid``; a unit with neither is untranslated. Old entries that no unit
    took are kept at the end as obsolete (``#~``), so no translation is lost.
    """
    where = english.relative_to(paths.english()).as_posix()
    old = {entry.msgid: entry for entry in catalog if entry.msgid}
    old.update({entry.msgid: entry for entry in catalog.obsolete_entries()})
    todo = {unit.text: unit for unit in units(english)}  # a repeated paragraph: one entry
    taken = {text: old[text] for text in todo if text in old}  # obsolete ones revive
    spare = [text for text in old if text not in taken]
    result = polib.POFile(wrapwidth=0)
    result.header, result.metadata = catalog.header, catalog.metadata
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


def of_page(language: str, page: str) -> polib.POFile:
    """The catalog of ``page`` (relative to ``docs/en/``) in ``language``, `merged` with the
    English of today."""
    return merged(load(po_path(language, page)), paths.english() / page)


def current(entry: polib.POEntry | None) -> bool:
    """Whether an entry translates today's English: translated and not marked fuzzy."""
    return entry is not None and bool(entry.msgstr) and not entry.fuzzy and not entry.obsolete
