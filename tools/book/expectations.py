"""Expected outputs in chapter sources: compare them with what ran.

A code cell states what it prints in a comment block at its end, headed ``# Out:``::

    # %%
    print(attn_scores_2)
    # Out:
    # tensor([0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865])

The block is stripped before the chapter executes (so neither the page nor the downloaded
notebook shows it twice) and compared with what the cell printed. A cell whose output cannot
be fixed (a dropout pattern, a timing) is marked instead, with the reason:
``# %% nondeterministic="the pattern depends on the PyTorch version and platform"``.

Comparison: text must match exactly (trailing spaces aside), except numbers. A number with
decimals matches within half a unit of its last printed decimal (plus 1e-9 relative slack
for float formatting); integers, shapes, dtypes and every other character must be equal.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass

# A number standing on its own: not part of a name (Backward0, float32, x^1 stays text).
_NUMBER = re.compile(r"(?<![\w.^])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w.])")
# Numbers a reader can compare with an output: at least three decimals.
_PROSE_NUMBER = re.compile(r"(?<![\w.$\\])[-+]?\d+\.\d{3,}(?![\w$])")


# --------------------------------------------------------------------------- outputs


def output_text(cell: dict) -> str:
    """Everything a code cell showed as text: streams and the plain-text form of results.

    Error outputs are left out: cells that must raise are checked by their ``raises`` tag.
    """
    parts = []
    for output in cell.get("outputs", []):
        kind = output.get("output_type")
        if kind == "stream":
            parts.append(output["text"])
        elif kind in ("execute_result", "display_data"):
            parts.append(output.get("data", {}).get("text/plain", "") + "\n")
    return _normalise("".join(parts))


def _normalise(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.rstrip("\n").splitlines())


def _unit(number: str) -> float:
    """Half of this is the rounding error a printed number can carry."""
    mantissa, _, exponent = number.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return 10.0 ** (int(exponent or 0) - decimals)


def numbers_match(expected: str, actual: str) -> bool:
    """``actual`` equals ``expected`` to the precision ``expected`` was printed with."""
    is_float = any(c in expected for c in ".eE")
    if not is_float or not any(c in actual for c in ".eE"):
        return expected.lstrip("+") == actual.lstrip("+")
    e, a = float(expected), float(actual)
    return abs(a - e) <= 0.5 * _unit(expected) + 1e-9 * abs(e)


@dataclass
class Mismatch:
    """Where an output first departs from its expectation."""

    line: int  # 1-based line of the output
    expected: str
    actual: str
    is_number: bool

    def describe(self) -> str:
        if self.is_number:
            return (
                f"first differing number, on output line {self.line}: expected {self.expected}, "
                f"got {self.actual} (tolerance {0.5 * _unit(self.expected):.1g})"
            )
        return (
            f"first difference, on output line {self.line}: expected {self.expected!r}, "
            f"got {self.actual!r}"
        )


def _tokens(line: str) -> list[tuple[str, bool]]:
    """A line as alternating text and number tokens."""
    tokens, position = [], 0
    for match in _NUMBER.finditer(line):
        tokens.append((line[position : match.start()], False))
        tokens.append((match.group(), True))
        position = match.end()
    tokens.append((line[position:], False))
    return tokens


def compare(expected: str, actual: str) -> Mismatch | None:
    """Return the first mismatch between an expected and an actual output, or None."""
    expected_lines = _normalise(expected).splitlines()
    actual_lines = _normalise(actual).splitlines()
    for number, (e_line, a_line) in enumerate(
        zip(expected_lines, actual_lines, strict=False), start=1
    ):
        e_tokens, a_tokens = _tokens(e_line), _tokens(a_line)
        if [n for _, n in e_tokens] != [n for _, n in a_tokens]:
            return Mismatch(number, e_line, a_line, is_number=False)
        for (e, is_number), (a, _) in zip(e_tokens, a_tokens, strict=True):
            if is_number and not numbers_match(e, a):
                return Mismatch(number, e, a, is_number=True)
            if not is_number and e != a:
                return Mismatch(number, e_line, a_line, is_number=False)
    if len(expected_lines) != len(actual_lines):
        line = min(len(expected_lines), len(actual_lines)) + 1
        e = expected_lines[line - 1] if line <= len(expected_lines) else "<end of output>"
        a = actual_lines[line - 1] if line <= len(actual_lines) else "<end of output>"
        return Mismatch(line, e, a, is_number=False)
    return None


def diff(expected: str, actual: str) -> str:
    lines = difflib.unified_diff(
        _normalise(expected).splitlines(),
        _normalise(actual).splitlines(),
        "expected (in the chapter)",
        "actual (executed)",
        lineterm="",
    )
    return "\n".join(lines)


MATH = re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$", re.S)


# A large integer written with its digits grouped as a language's readers expect: by
# commas (English: 2,360,064), by no-break or thin spaces (2 360 064), or by dots when there
# are two groups or more (Vietnamese, Indonesian: 2.360.064; a single dot is a decimal point,
# as Python prints it).
_SPACE = "\u00a0\u202f"
_GROUPED = re.compile(
    rf"(?<![\w.,{_SPACE}])\d{{1,3}}(?:(?:[,{_SPACE}]\d{{3}})+|(?:\.\d{{3}}){{2,}})(?![\w]|[.,{_SPACE}]\d)"
)


def prose_numbers(markdown: str) -> list[str]:
    """The numbers a Markdown cell quotes outside formulas, as written: those with three or
    more decimals, and large integers with grouped digits (`grouped`)."""
    text = MATH.sub(" ", markdown)
    grouped = _GROUPED.findall(text)
    return [*grouped, *_PROSE_NUMBER.findall(_GROUPED.sub(" ", text))]


def grouped(number: str) -> str | None:
    """The digits of an integer written with grouped digits (``2.360.064`` -> ``2360064``)."""
    return re.sub(r"\D", "", number) if _GROUPED.fullmatch(number) else None


def _integers(text: str) -> set[str]:
    """Every integer in ``text``, its grouped ones (``2,360,064``) as plain digits."""
    found = {grouped(m.group()) or "" for m in _GROUPED.finditer(text)}
    rest = _GROUPED.sub(" ", text)
    return found | {m.group().lstrip("+") for m in _NUMBER.finditer(rest)}


def appears_in(number: str, outputs: list[str], code: tuple[str, ...] = ()) -> bool:
    """A number quoted in prose matches a number of the chapter: a decimal, one that it
    prints, to the quoted precision; a grouped integer, one that it prints or that its
    ``code`` writes (``context_length=1024``), exactly."""
    digits = grouped(number)
    if digits is not None:
        return any(digits in _integers(text) for text in (*outputs, *code))
    for output in outputs:
        for match in _NUMBER.finditer(output):
            printed = match.group()
            if any(c in printed for c in ".eE") and math.isclose(
                float(printed), float(number), rel_tol=0, abs_tol=0.5 * _unit(number) + 1e-12
            ):
                return True
    return False
