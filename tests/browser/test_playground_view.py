"""The playground as a reader sees it (issue 34): the arithmetic in view on a phone, the
queries, keys and values, labelled axes, contrast in both colour schemes and a focus ring on
every control. Typed numbers and refusals: test_playground_reading.py.

As in test_playground.py, the package's numbers come from `python -m book playground-cases`.
"""

from __future__ import annotations

import pytest
from browsing import (
    FIELD,
    LANGUAGES,
    PLAYGROUND,
    assert_shows,
    book_inputs,
    expected_cells,
    open_playground,
    package_results,
    shown_cells,
    type_value,
    words_of,
)


def in_view(page, selector: str) -> bool:
    """Whether all of the element is on the screen, below the page's sticky header."""
    return page.evaluate(
        """(selector) => {
          const box = document.querySelector(selector).getBoundingClientRect();
          const top = document.querySelector(".md-header").getBoundingClientRect().bottom;
          return box.height > 0 && box.top >= top && box.bottom <= window.innerHeight;
        }""",
        selector,
    )


@pytest.mark.parametrize("language", LANGUAGES)
def test_on_a_phone_a_tapped_weight_shows_its_arithmetic_on_the_screen(
    browser, base_url, language, screenshots
):
    context = browser.new_context(
        viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True
    )
    page = context.new_page()
    page.goto(base_url + f"{language}/{PLAYGROUND}")
    page.wait_for_selector('[data-control="stage"]')
    explain = ".playground-explain"
    taps = [
        ("3.3", "6", '[data-matrix="weights"][data-row="1"][data-col="0"]'),
        ("3.6", "8", '[data-matrix="weights"][data-head="1"][data-row="7"][data-col="3"]'),
        ("3.4", "8", '[data-matrix="weights"][data-row="0"][data-col="7"]'),
    ]
    for stage, tokens, cell in taps:
        page.select_option('[data-control="stage"]', stage)
        page.select_option('[data-control="tokens"]', tokens)
        page.evaluate("window.scrollTo(0, 0)")  # the widget's top: where a reader starts
        page.tap(cell)
        weight = page.text_content(cell)
        assert page.locator(explain).inner_text().rstrip().endswith(f"= {weight}")
        assert in_view(page, explain), (language, stage)
        assert in_view(page, cell), (language, stage)  # and the weight tapped, above it
        if language == "vi" and stage == "3.3":
            page.screenshot(path=str(screenshots / "playground-390-vi-explain.png"))
    # A refused value: its words are on the screen, under the field being typed in.
    page.tap(FIELD)
    page.keyboard.press("Control+A")
    page.keyboard.type("1,2,5")
    said = "#" + page.get_attribute(FIELD, "aria-describedby")
    assert in_view(page, said) and in_view(page, FIELD), language
    if language == "vi":
        page.screenshot(path=str(screenshots / "playground-390-vi-refused.png"))
    context.close()


@pytest.mark.parametrize("stage", ["3.4", "3.5", "3.6"])
def test_the_queries_keys_and_values_are_tables_with_the_packages_numbers(context, base_url, stage):
    page = open_playground(context, base_url, "en")
    page.select_option('[data-control="stage"]', stage)
    page.select_option('[data-control="tokens"]', "7")
    inputs = [*book_inputs(page)[:6], [-1.5, 2.25, 0.05]]
    page.fill('input[data-token="6"][data-dim="0"]', "-1.5")
    page.fill('input[data-token="6"][data-dim="1"]', "2.25")
    page.fill('input[data-token="6"][data-dim="2"]', "0.05")
    (result,) = package_results([{"stage": stage, "inputs": inputs}])
    expected, shown = expected_cells(result), shown_cells(page)
    heads = ["0", "1"] if stage == "3.6" else [None]
    for matrix in ("queries", "keys", "values"):
        keys = {key for key in expected if key[0] == matrix}
        assert {key[1] for key in keys} == set(heads)
        assert keys == {(matrix, h, i, d) for h in heads for i in range(7) for d in range(2)}
        assert {key for key in shown if key[0] == matrix} == keys
        captions = page.eval_on_selector_all(
            f"table.playground-{matrix} caption", "all => all.map(c => c.textContent)"
        )
        named = [f"Head {n}: {matrix.title()}" for n in (1, 2)] if stage == "3.6" else None
        assert captions == (named or [matrix.title()])
    assert_shows(page, result, f"{stage} with q, k, v")
    page.select_option('[data-control="stage"]', "3.3")
    assert page.locator('[data-matrix="queries"], [data-matrix="keys"]').count() == 0


MARKED = """() => Array.from(document.querySelectorAll("tr.is-query, tr.is-key")).map((tr) => {
  const cell = tr.querySelector("[data-matrix], [data-dim]");
  return [tr.className, cell.dataset.matrix || "embeddings", cell.dataset.head ?? null,
          Number(cell.dataset.row ?? cell.dataset.token)];
}).sort()"""


def test_a_selected_weight_marks_the_query_row_and_the_key_row_it_comes_from(context, base_url):
    page = open_playground(context, base_url, "en")
    page.click('[data-matrix="weights"][data-row="2"][data-col="4"]')
    assert page.evaluate(MARKED) == [
        ["is-key", "embeddings", None, 4],
        ["is-query", "embeddings", None, 2],
    ]
    page.select_option('[data-control="stage"]', "3.4")  # the selection stays: its rows move
    assert page.evaluate(MARKED) == [["is-key", "keys", None, 4], ["is-query", "queries", None, 2]]
    page.select_option('[data-control="stage"]', "3.6")
    page.click('[data-matrix="weights"][data-head="1"][data-row="3"][data-col="3"]')
    assert page.evaluate(MARKED) == [["is-key", "keys", "1", 3], ["is-query", "queries", "1", 3]]
    # Marked so that it shows: the marked row's cells are drawn unlike the others.
    look = """(selector) => { const s = getComputedStyle(document.querySelector(selector));
                              return [s.boxShadow, s.fontWeight]; }"""
    marked = page.evaluate(look, '[data-matrix="queries"][data-head="1"][data-row="3"]')
    plain = page.evaluate(look, '[data-matrix="queries"][data-head="1"][data-row="2"]')
    assert marked != plain and marked[0] != "none"
    page.select_option('[data-control="tokens"]', "3")  # the weight is gone: so are the marks
    assert page.evaluate(MARKED) == []


AXES = """() => Array.from(document.querySelectorAll(
    ".playground-results table.playground-scores, .playground-results table.playground-weights"))
  .map((t) => {
    const group = t.querySelector('thead th[scope="colgroup"]');
    const corner = t.querySelector('thead tr:last-child th:first-child');
    const visible = (e) => e.getBoundingClientRect().width * e.getBoundingClientRect().height > 0;
    return [group.textContent, Number(group.colSpan), corner.textContent, corner.scope,
            visible(group) && visible(corner), t.querySelectorAll('tbody th[scope="row"]').length,
            t.querySelectorAll('thead tr:last-child th[scope="col"]').length];
  })"""


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_rows_of_scores_and_weights_are_named_queries_and_their_columns_keys(
    context, base_url, language
):
    page = open_playground(context, base_url, language)
    words = words_of(page)
    for stage, tokens, tables in (("3.3", "6", 2), ("3.6", "4", 4)):
        page.select_option('[data-control="stage"]', stage)
        page.select_option('[data-control="tokens"]', tokens)
        n = int(tokens)
        row = [words["axis_keys"], n, words["axis_queries"], "col", True, n, n + 1]
        assert page.evaluate(AXES) == [row] * tables, (language, stage)


# WCAG 2's contrast of every cell's text against what is painted under it, from the
# computed styles: the cell's background colour over its ancestors' down to an opaque one,
# and each colour of a gradient (the stripes of hidden cells) over that.
CONTRAST = """(selector) => {
  const parse = (text) => {
    const rgb = text.match(/^rgba?\\(([^)]*)\\)$/), srgb = text.match(/^color\\(srgb ([^)]*)\\)$/);
    if (!rgb && !srgb) throw new Error("a colour this test does not read: " + text);
    const p = (rgb || srgb)[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number);
    const scale = rgb ? 255 : 1;
    return [p[0] / scale, p[1] / scale, p[2] / scale, p.length > 3 ? p[3] : 1];
  };
  const over = (top, under) =>
    [0, 1, 2].map((i) => top[i] * top[3] + under[i] * (1 - top[3])).concat([1]);
  const luminance = (c) => {
    const l = c.slice(0, 3).map((v) => (v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
    return 0.2126 * l[0] + 0.7152 * l[1] + 0.0722 * l[2];
  };
  const ratio = (a, b) => {
    const [low, high] = [luminance(a), luminance(b)].sort((x, y) => x - y);
    return (high + 0.05) / (low + 0.05);
  };
  const colours = /rgba?\\([^)]*\\)|color\\(srgb [^)]*\\)/g;
  const gradient = (image) => (image.match(colours) || []).map(parse);
  const under = (element) => {
    const chain = [];
    for (let e = element; e; e = e.parentElement) {
      chain.unshift(e);
      if (parse(getComputedStyle(e).backgroundColor)[3] === 1) break;
    }
    let found = [[1, 1, 1, 1]]; // the canvas, were nothing opaque (never, with Material)
    chain.forEach((e) => {
      const style = getComputedStyle(e), colour = parse(style.backgroundColor);
      found = found.map((c) => over(colour, c));
      const stripes = gradient(style.backgroundImage);
      if (stripes.length) found = found.flatMap((c) => stripes.map((s) => over(s, c)));
    });
    return found;
  };
  return Array.from(document.querySelectorAll(selector)).filter((e) => e.textContent.trim())
    .map((e) => {
      const backgrounds = under(e);
      const text = parse(getComputedStyle(e).color);
      const worst = Math.min(...backgrounds.map((b) => ratio(over(text, b), b)));
      return [e.dataset.matrix || e.tagName, e.dataset.row, e.dataset.col, e.textContent, worst,
              getComputedStyle(e).backgroundColor];
    });
}"""

CELLS = ".attention-playground td, .attention-playground th"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_cell_reads_at_4_5_to_1_in_both_schemes(browser, base_url, scheme):
    context = browser.new_context(color_scheme=scheme, viewport={"width": 1280, "height": 900})
    page = open_playground(context, base_url, "en")
    # Large values of both signs, a selected weight, its rows marked, hidden cells.
    type_value(page, FIELD, "-4.5")
    type_value(page, 'input[data-token="1"][data-dim="1"]', "5")
    type_value(page, 'input[data-token="2"][data-dim="2"]', "-3")
    type_value(page, 'input[data-token="3"][data-dim="0"]', "x")  # refused: its words too
    page.select_option('[data-control="tokens"]', "8")
    cells = 0
    for stage in ("3.3", "3.4", "3.5", "3.6"):
        page.select_option('[data-control="stage"]', stage)
        page.click('[data-matrix="weights"][data-row="5"][data-col="2"]')
        found = page.evaluate(CONTRAST, CELLS)
        low = [cell for cell in found if cell[4] < 4.5]
        assert low == [], (scheme, stage, low[:5])
        cells += len(found)
        # Scores and context vectors are on a scale, as the weights: colours differ.
        for matrix in ("scores", "weights", "context"):
            colours = {c[5] for c in found if c[0] == matrix}
            assert len(colours) > 10, (stage, matrix)
    assert cells > 4 * 100
    page.select_option('[data-control="stage"]', "trained")
    page.wait_for_selector('[data-matrix="weights"][data-layer]')
    trained = page.evaluate(CONTRAST, CELLS)
    assert len(trained) > 50 and [c for c in trained if c[4] < 4.5] == [], scheme
    context.close()


# Every control the reader can reach by Tab, and how its focus ring is drawn, focused or not.
RING = """(probe) => { const e = document.activeElement;
  if (!e.closest(".attention-playground")) return null;
  e.setAttribute("data-focus-probe", probe);
  const s = getComputedStyle(e);
  return [e.tagName, e.type || "", e.dataset.control || e.dataset.matrix || "",
          s.outlineStyle, parseFloat(s.outlineWidth), s.outlineColor, s.boxShadow]; }"""
UNFOCUSED = """(probe) => { const s = getComputedStyle(document.querySelector(
  `[data-focus-probe="${probe}"]`)); return [s.outlineStyle, parseFloat(s.outlineWidth),
  s.outlineColor, s.boxShadow]; }"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_control_shows_a_focus_ring(browser, base_url, scheme):
    context = browser.new_context(color_scheme=scheme, viewport={"width": 1280, "height": 900})
    page = open_playground(context, base_url, "en")
    page.select_option('[data-control="stage"]', "3.4")
    page.focus('[data-control="stage"]')
    focused = []
    for probe in range(40):
        found = page.evaluate(RING, probe)
        if found is None:
            break
        focused.append((probe, found))
        page.keyboard.press("Tab")
    kinds = {(tag, kind, name) for _, (tag, kind, name, *_) in focused}
    assert kinds >= {("SELECT", "select-one", "stage"), ("SELECT", "select-one", "tokens")}
    assert kinds >= {
        ("BUTTON", "button", "reset"),
        ("INPUT", "text", ""),
        ("INPUT", "range", "slider"),
    }
    assert ("TD", "", "weights") in kinds
    page.evaluate("document.activeElement.blur()")
    body = colour_of(page.evaluate("getComputedStyle(document.body).backgroundColor"))
    for probe, (tag, kind, name, style, width, colour, shadow) in focused:
        assert style != "none" and width >= 2, (tag, kind, name, style, width)
        assert page.evaluate(UNFOCUSED, probe) != [style, width, colour, shadow], (tag, name)
        # A focus ring needs 3:1 against what is beside it: the page.
        assert contrast(colour_of(colour), body) >= 3, (tag, name, colour)
    context.close()


def colour_of(text: str) -> tuple[float, ...]:
    """A computed colour, rgb(a) or color(srgb ...), as red, green, blue, alpha in [0, 1]."""
    inner = text[text.index("(") + 1 : text.rindex(")")].replace("srgb", "")
    parts = [float(p) for p in inner.replace(",", " ").replace("/", " ").split()]
    scale = 255 if text.startswith("rgb") else 1
    return (*(v / scale for v in parts[:3]), parts[3] if len(parts) > 3 else 1.0)


def contrast(colour: tuple[float, ...], background: tuple[float, ...]) -> float:
    """WCAG 2's contrast of ``colour`` (its alpha over it) against an opaque ``background``."""

    def luminance(c):
        lin = [v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4 for v in c[:3]]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    alpha = colour[3]
    shown = [colour[i] * alpha + background[i] * (1 - alpha) for i in range(3)]
    high, low = sorted([luminance(shown), luminance(background)], reverse=True)
    return (high + 0.05) / (low + 0.05)
