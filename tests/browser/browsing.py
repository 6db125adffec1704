"""What the browser tests share: where the built site is and which pages it has."""

from __future__ import annotations

import atexit
import functools
import json
import math
import os
import re
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "site"
SCREENSHOTS = ROOT / "build" / "screenshots"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# The book's facts, read where the tooling reads them (book.build.Build), without importing
# it: these tests run without the tooling's dependencies. mkdocs.yml holds English's
# site_url (.../en/) and the languages (extra.languages: English, then each translation).
_MKDOCS = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
_site_url = re.search(r"^site_url:\s*(\S+)", _MKDOCS, re.M).group(1)
# The English site is one folder of the site, beside every translation: /<prefix>/en/.
PREFIX = urlsplit(_site_url).path.removesuffix("en/")  # "/attention-mechanisms/"
assert _site_url.endswith(f"{PREFIX}en/"), f"mkdocs.yml: site_url must end in /en/: {_site_url}"
# English, then each translation, as the switcher lists them; each in site/<lang>/.
_languages = re.search(r"^  languages:\n((?:    .*\n)+)", _MKDOCS, re.M).group(1)
LANGUAGES = re.findall(r"^\s+lang:\s*(\S+)", _languages, re.M)
assert LANGUAGES[:1] == ["en"], f"mkdocs.yml: extra.languages must start with en: {LANGUAGES}"

# TeX that was not typeset: \commands, \( \) \[ \] and $...$ delimiters.
RAW_TEX = re.compile(r"\\[A-Za-z]{2,}|\\[()\[\]]|\$\$|\$[^$\s][^$]*\$")

# The most a page may transfer on a cold load: every response body (its figures too),
# uncompressed, as a static server sends it.
PAGE_LIMIT = 600 * 1024


def site_pages(language: str | None = None) -> list[str]:
    """Every page of every language (or of one), relative to the site root: "vi/", "vi/x/"."""
    pages = []
    for lang in [language] if language else LANGUAGES:
        folder = SITE / lang
        found = sorted(p.parent.relative_to(folder).as_posix() for p in folder.rglob("index.html"))
        pages += [f"{lang}/" if page == "." else f"{lang}/{page}/" for page in found]
    return pages


@functools.cache
def notebook_pages() -> list[str]:
    """The pages rendered from chapter notebooks (read once per run: a hundred files)."""
    return [
        page
        for page in site_pages()
        if '<div class="notebook">' in (SITE / page / "index.html").read_text()
    ]


def search(context, base_url, query: str, language: str = "en"):
    """Type ``query`` into the search box of a language's home page, as a reader does.

    Returns:
        The page and its result links.
    """
    page = context.new_page()
    page.goto(f"{base_url}{language}/")
    box = page.locator("input[data-md-component='search-query']")
    box.click()
    # The index loads in a web worker; a query typed before it is ready is dropped. Until
    # then the results say "Initializing search", in the page's language.
    home = (SITE / language / "index.html").read_text(encoding="utf-8")
    waiting = re.search(r'class="md-search-result__meta">\s*([^<]*?)\s*<', home)[1]
    page.wait_for_function(
        "(waiting) => document.querySelector('.md-search-result__meta').textContent.trim()"
        " !== waiting",
        arg=waiting,
    )
    # Material searches on key events. Typed key by key, the query would be answered once
    # per keystroke, and the answers arrive in turn: the whole query goes in at once, and
    # one key (End, as the commit key of a Chinese input method is) asks for its answer.
    box.fill(query)
    box.press("End")
    results = page.locator(".md-search-result__item > a")
    results.first.wait_for()
    return page, results


PLAYGROUND = "chapter-3/playground/"


def package_python() -> str:
    found = os.environ.get("BOOK_PACKAGE_PYTHON") or str(
        ROOT / ".nox" / "package" / "bin" / "python"
    )
    if not Path(found).exists():
        pytest.fail(
            f"no Python with the package at {found}: run `nox -s docs` (which makes "
            ".nox/package), or set BOOK_PACKAGE_PYTHON",
            pytrace=False,
        )
    return found


_package: subprocess.Popen | None = None  # `book playground-cases`, started once per process


def package_results(cases: list[dict]) -> list[dict]:
    """What the package computes for each case ({stage, inputs}), in float32.

    One `book playground-cases` answers every call of this test process, a line for each:
    it imports torch and loads the trained model once, not once per test.
    """
    global _package
    if _package is None or _package.poll() is not None:
        _package = subprocess.Popen(
            [package_python(), "-m", "book", "--root", str(ROOT), "playground-cases"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT / "tools",
        )
        atexit.register(_package.kill)
    assert _package.stdin and _package.stdout
    _package.stdin.write(json.dumps(cases) + "\n")
    _package.stdin.flush()
    answer = _package.stdout.readline()
    if not answer:
        raise RuntimeError(f"book playground-cases stopped (status {_package.wait()})")
    return json.loads(answer)


def open_playground(context, base_url: str, language: str):
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(base_url + f"{language}/{PLAYGROUND}")
    page.wait_for_selector('[data-control="stage"]')
    page.errors = errors
    return page


# What a shown value may differ from the package's float32 one by: half of its last
# printed decimal (four are shown), and float32's rounding (torch.testing's atol).
SHOWN = 0.5e-4 + 1e-5


def expected_cells(result: dict) -> dict[tuple[str, str | None, int, int], float]:
    """Every cell the page must show, keyed as its markup names it."""
    many = len(result["heads"]) > 1
    cells = {}
    for h, head in enumerate(result["heads"]):
        for matrix, values in head.items():
            for i, row in enumerate(values):
                for j, value in enumerate(row):
                    cells[matrix, str(h) if many else None, i, j] = float(value)
    if many:
        for i, row in enumerate(result["context"]):
            for j, value in enumerate(row):
                cells["context", None, i, j] = float(value)
    return cells


SHOWN_CELLS = """() => Array.from(document.querySelectorAll("[data-matrix]")).map((cell) => [
  cell.dataset.matrix, cell.dataset.head ?? null, Number(cell.dataset.row),
  Number(cell.dataset.col), cell.textContent.trim()])"""


def shown_cells(page) -> dict[tuple[str, str | None, int, int], str]:
    cells = {}
    for matrix, head, row, col, text in page.evaluate(SHOWN_CELLS):
        key = (matrix, head, row, col)
        assert key not in cells, f"two cells are {key}"
        cells[key] = text
    return cells


def assert_shows(page, result: dict, where: str) -> None:
    assert_cells(shown_cells(page), result, where)


def assert_cells(shown: dict, result: dict, where: str) -> None:
    """The cells shown (`shown_cells`) are the package's ``result``, as the page writes it."""
    expected = expected_cells(result)
    assert set(shown) == set(expected), f"{where}: cells {sorted(set(shown) ^ set(expected))[:5]}"
    for key, value in expected.items():
        text = shown[key]
        if math.isinf(value):
            assert text == "-inf", f"{where}: {key} shows {text}, not -inf"
            continue
        assert len(text.partition(".")[2]) == 4, f"{where}: {key} shows {text!r}"
        assert abs(float(text) - value) <= SHOWN, f"{where}: {key} shows {text}, not {value:.6f}"


def book_inputs(page) -> list[list[float]]:
    """The book's embeddings, as the page received them from the build (the package's)."""
    return json.loads(page.text_content("script.playground-data"))["inputs"]


# The first embedding value: "Your", dimension 1.
FIELD = 'input[data-token="0"][data-dim="0"]'


def words_of(page) -> dict[str, str]:
    return json.loads(page.text_content("script.playground-data"))["words"]


def type_value(page, selector: str, text: str) -> None:
    """Type ``text`` key by key into an emptied field, as a reader does."""
    page.focus(selector)
    page.keyboard.press("Control+A")
    page.keyboard.press("Backspace")
    page.keyboard.type(text)


def with_first(page, value: float) -> list[list[float]]:
    """The book's embeddings with the first value replaced."""
    inputs = book_inputs(page)
    return [[value, *inputs[0][1:]], *inputs[1:]]
