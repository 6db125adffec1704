"""How each translation writes large whole numbers in its prose: the rule its home page
states, held by every page (code, formulas and addresses aside, which stay as in English)."""

from __future__ import annotations

import re
from pathlib import Path

import polib
import pytest

from attention_mechanisms.check.messages import LANGUAGES

DOCS = Path(__file__).parents[1] / "docs"
NBSP = "\u00a0"

# For each translation: how a whole number of four digits or more is written (the whole
# number must match), and the examples the home page gives with its rule. Years (1900 to
# 2099) are written solid everywhere. A new language adds its own.
RULES = {
    # four to six digits solid, seven and more grouped by three with a dot
    "vi": (r"\d{4,6}|\d{1,3}(?:\.\d{3}){2,}", ["1024", "131072", "2.360.064"]),
    # grouped by three with a comma from four digits on
    "zh": (r"\d{1,3}(?:,\d{3})+", ["1,024", "2,360,064"]),
    # four digits solid, five and more grouped by three with a no-break space
    "id": (
        rf"\d{{4}}|\d{{1,3}}(?:{NBSP}\d{{3}})+",
        ["1024", f"131{NBSP}072", f"2{NBSP}360{NBSP}064"],
    ),
}

# What is not prose: code spans, formulas, link targets, autolinks and HTML tags.
NOT_PROSE = re.compile(r"`[^`]*`|\$\$.*?\$\$|\$[^$]*\$|\]\([^)]*\)|<[^>]*>", re.S)
# A number as written: digits, perhaps in groups joined by a dot, a comma or a no-break space.
NUMBER = re.compile(rf"(?<![\w.,{NBSP}])\d+(?:[.,{NBSP}]\d+)*(?![\w])")


def whole_numbers(text: str) -> list[str]:
    """The whole numbers of four digits or more in ``text``'s prose, as written.

    A decimal (``0.4419``, ``37.5``) or a section number (``3.4.2``) is none: a group after
    the first must have three digits, and the first must not start with 0.
    """
    found = []
    for number in NUMBER.findall(NOT_PROSE.sub(" ", text)):
        first, *rest = re.split(rf"[.,{NBSP}]", number)
        grouped = all(len(group) == 3 for group in rest) and not (rest and first[0] == "0")
        digits = len(first) + 3 * len(rest)
        if grouped and len(first) <= (3 if rest else len(first)) and digits >= 4:
            found.append(number)
    return found


def test_whole_numbers_are_found_as_written_and_decimals_are_not():
    text = (
        f"`4096` x 131072, 2.360.064 và 1,024; 131{NBSP}072 tokens, 0.4419 và 37.5%, "
        "3.4.2, $2048$, [x](a/8192.md), <http://127.0.0.1:8000>, GPT-2, 8B, 2025, 0.238"
    )
    assert whole_numbers(text) == ["131072", "2.360.064", "1,024", f"131{NBSP}072", "2025"]


def is_year(number: str) -> bool:
    return re.fullmatch(r"(?:19|20)\d\d", number) is not None


@pytest.mark.parametrize("language", LANGUAGES[1:])
def test_every_page_writes_numbers_as_its_home_page_says(language):
    assert language in RULES, f"add to RULES how {language!r} writes large numbers"
    pattern, examples = RULES[language]
    home = " ".join(entry.msgstr for entry in polib.pofile(str(DOCS / language / "index.po")))
    assert [example for example in examples if example not in home] == [], (
        "the home page's note on numbers gives the rule's examples"
    )
    wrong = [
        f"{po.relative_to(DOCS)}: {number!r}"
        for po in sorted((DOCS / language).rglob("*.po"))
        for entry in polib.pofile(str(po))
        for number in whole_numbers(entry.msgstr)
        if not (re.fullmatch(pattern, number) or is_year(number))
    ]
    assert wrong == []
