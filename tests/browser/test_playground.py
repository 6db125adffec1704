"""The playground page in a real browser: typed input against the package, in every language.

The browser tests run without torch, so the package's numbers come from the environment
that has it (`python -m book playground-cases`, run by the Python in ``BOOK_PACKAGE_PYTHON``,
which nox sets; else .nox/package's).
"""

from __future__ import annotations

import json
import random

import pytest
from browsing import (
    LANGUAGES,
    SCREENSHOTS,
    assert_shows,
    book_inputs,
    open_playground,
    package_results,
)

STAGES = ["3.3", "3.4", "3.5", "3.6"]
PAGE = "chapter-3/playground/"


def type_inputs(page, inputs: list[list[float]]) -> None:
    page.select_option('[data-control="tokens"]', str(len(inputs)))
    for i, row in enumerate(inputs):
        for d, value in enumerate(row):
            page.fill(f'input[data-token="{i}"][data-dim="{d}"]', str(value))


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("stage", STAGES)
def test_what_the_reader_types_shows_what_the_package_computes(context, base_url, language, stage):
    rng = random.Random(f"{language} {stage}")
    inputs = [[round(rng.uniform(-2, 2), 2) for _ in range(3)] for _ in range(rng.randint(2, 8))]
    page = open_playground(context, base_url, language)
    page.select_option('[data-control="stage"]', stage)
    type_inputs(page, inputs)
    (result,) = package_results([{"stage": stage, "inputs": inputs}])
    assert_shows(page, result, f"{language} {stage} {inputs}")
    # Fewer tokens, then more again: the values typed for the others come back.
    page.select_option('[data-control="tokens"]', "2")
    (two,) = package_results([{"stage": stage, "inputs": inputs[:2]}])
    assert_shows(page, two, f"{language} {stage}, two tokens")
    page.select_option('[data-control="tokens"]', str(len(inputs)))
    assert_shows(page, result, f"{language} {stage}, tokens restored")
    assert page.errors == []


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_default_view_is_the_books_example(context, base_url, language):
    page = open_playground(context, base_url, language)
    inputs = page.evaluate(
        """() => Array.from(document.querySelectorAll("tbody tr")).filter((row) =>
             row.querySelector("[data-dim]")).map((row) => Array.from(
             row.querySelectorAll("[data-dim]")).map((input) => Number(input.value)))"""
    )
    labels = page.eval_on_selector_all("input[data-label]", "all => all.map(i => i.value)")
    assert labels == ["Your", "journey", "starts", "with", "one", "step"]
    assert inputs[1] == [0.55, 0.87, 0.66]
    assert page.input_value('[data-control="stage"]') == "3.3"
    assert page.input_value('[data-control="tokens"]') == "6"
    results = package_results([{"stage": s, "inputs": inputs} for s in STAGES])
    for stage, result in zip(STAGES, results, strict=True):
        page.select_option('[data-control="stage"]', stage)
        assert_shows(page, result, f"{language} default {stage}")
    page.select_option('[data-control="stage"]', "3.3")
    journey = [
        page.text_content(f'[data-matrix="weights"][data-row="1"][data-col="{j}"]')
        for j in range(6)
    ]
    assert journey == ["0.1385", "0.2379", "0.2333", "0.1240", "0.1082", "0.1581"]  # 3.3.1


def test_without_javascript_the_page_shows_the_default_example_as_tables(browser, base_url):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(base_url + f"en/{PAGE}")
    stages = page.locator(".playground-static .playground-stage")
    assert stages.count() == 4
    static = page.evaluate(
        """() => Array.from(document.querySelectorAll(".playground-static table")).map(
             (t) => Array.from(t.querySelectorAll("tbody td")).map((c) => c.textContent))"""
    )
    context.close()
    live = browser.new_context()
    page = live.new_page()
    page.goto(base_url + f"en/{PAGE}")
    page.wait_for_selector('[data-control="stage"]')
    assert page.locator(".playground-static").count() == 0
    tables = []
    for stage in STAGES:
        page.select_option('[data-control="stage"]', stage)
        tables += page.evaluate(
            # Each table as the static view has it: 3.6's heads show no context of their own.
            """() => Array.from(document.querySelectorAll(".playground-results table")).filter(
                 (t) => !(t.closest(".playground-heads") && document.querySelectorAll(
                   ".playground-head").length > 1 && t.classList.contains("playground-context")))
               .map((t) => Array.from(t.querySelectorAll("tbody td")).map((c) => c.textContent))"""
        )
    live.close()
    assert static == tables


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_selected_weight_shows_its_arithmetic(context, base_url, language):
    page = open_playground(context, base_url, language)
    explain = page.locator(".playground-explain")
    assert explain.get_attribute("role") == "status"
    assert explain.get_attribute("aria-live") == "polite"
    page.click('[data-matrix="weights"][data-row="1"][data-col="0"]')
    text = explain.inner_text()
    # 3.3: x(journey) . x(Your), term by term, then the softmax of journey's row.
    times = "\u00d7"  # the multiplication sign
    assert f"0.5500 {times} 0.4300 + 0.8700 {times} 0.1500 + 0.6600 {times} 0.8900 = 0.9544" in text
    assert text.rstrip().endswith("= 2.5971 / 18.7453 = 0.1385")  # 3.3.1: 0.1385
    assert "/ 1.4142" not in text  # 3.3 does not scale
    page.select_option('[data-control="stage"]', "3.4")
    page.click('[data-matrix="weights"][data-row="1"][data-col="0"]')
    score = page.text_content('[data-matrix="scores"][data-row="1"][data-col="0"]')
    weight = page.text_content('[data-matrix="weights"][data-row="1"][data-col="0"]')
    text = explain.inner_text()
    assert f"= {score}" in text and f"{score} / 1.4142 = " in text
    assert text.rstrip().endswith(f"= {weight}")
    page.select_option('[data-control="stage"]', "3.5")
    hidden = page.locator('[data-matrix="weights"][data-row="1"][data-col="4"]')
    assert "is-hidden" in hidden.get_attribute("class")
    assert hidden.get_attribute("data-hidden") == ""
    hidden_cells = page.eval_on_selector_all(
        "[data-hidden]", "all => all.map(c => [c.dataset.row, c.dataset.col])"
    )
    assert len(hidden_cells) == 2 * 15 and all(int(c) > int(r) for r, c in hidden_cells)
    assert hidden.text_content() == "0.0000"
    hidden.click()
    words = json.loads(page.text_content("script.playground-data"))["words"]
    hidden_text = words["explain_hidden"].format(query="journey", key="one")
    assert explain.inner_text().strip() == hidden_text
    # The selection survives a change of stage, with the arithmetic of the new stage.
    page.click('[data-matrix="weights"][data-row="3"][data-col="2"]')
    page.select_option('[data-control="stage"]', "3.4")
    assert "is-selected" in page.get_attribute(
        '[data-matrix="weights"][data-row="3"][data-col="2"]', "class"
    )
    weight = page.text_content('[data-matrix="weights"][data-row="3"][data-col="2"]')
    assert explain.inner_text().rstrip().endswith(f"= {weight}")
    assert page.errors == []


def test_large_scores_are_explained_with_the_largest_subtracted(context, base_url):
    page = open_playground(context, base_url, "en")
    words = json.loads(page.text_content("script.playground-data"))["words"]
    for d in range(3):
        page.fill(f'input[data-token="1"][data-dim="{d}"]', "5")
    page.click('[data-matrix="weights"][data-row="1"][data-col="1"]')
    lines = page.locator(".playground-explain p").all_inner_texts()
    assert lines[2] == words["explain_softmax_shifted"].format(query="journey", max="75.0000")
    assert lines[3].startswith("exp(0.0000) / (") and "e+" not in lines[3]
    weight = page.text_content('[data-matrix="weights"][data-row="1"][data-col="1"]')
    assert lines[3].endswith(f"= {weight}")


def test_the_keyboard_reaches_and_changes_every_control(context, base_url):
    page = open_playground(context, base_url, "en")
    page.focus('[data-control="stage"]')
    focused = []
    for _ in range(60):  # Tab through the widget; note what takes the focus
        focused.append(
            page.evaluate(
                "() => { const e = document.activeElement; return [e.dataset.control || '', "
                "e.dataset.token ?? '', e.dataset.dim ?? '', e.dataset.matrix || '', "
                "e.hasAttribute('data-label'), e.tagName]; }"
            )
        )
        page.keyboard.press("Tab")
    controls = {f[0] for f in focused}
    assert {"stage", "tokens", "slider"} <= controls
    assert any(f[5] == "BUTTON" for f in focused)  # reset
    assert {(f[1], f[2]) for f in focused if f[2] != ""} >= {
        (str(i), str(d)) for i in range(6) for d in range(3)
    }
    assert sum(f[4] for f in focused) == 6  # each token's label
    assert sum(f[3] == "weights" for f in focused) == 1  # one stop per weights table
    page.select_option('[data-control="stage"]', "3.6")
    page.focus('[data-control="stage"]')
    heads = set()
    for _ in range(60):
        page.keyboard.press("Tab")
        heads.add(page.evaluate("() => document.activeElement.dataset.head || ''"))
    assert {"0", "1"} <= heads  # each head's weights take the focus
    page.select_option('[data-control="stage"]', "3.3")
    # The stage changes from the keyboard; arrows move through the weights.
    page.focus('[data-control="stage"]')
    page.keyboard.press("ArrowDown")
    assert page.input_value('[data-control="stage"]') == "3.4"
    page.focus('[data-matrix="weights"][data-row="0"][data-col="0"]')
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowRight")
    active = page.evaluate(
        "() => [document.activeElement.dataset.row, document.activeElement.dataset.col]"
    )
    assert active == ["1", "1"]
    assert "journey" in page.locator(".playground-explain").inner_text()
    page.focus('input[data-token="1"][data-dim="0"]')
    page.keyboard.press("Control+A")
    page.keyboard.type("1.5")
    inputs = book_inputs(page)
    inputs[1][0] = 1.5
    (result,) = package_results([{"stage": "3.4", "inputs": inputs}])
    assert_shows(page, result, "typed from the keyboard")


def _taken(typed: str, before: float) -> float:
    """The last value a reader's keystrokes made that the page takes (within 5)."""
    taken = before
    for end in range(1, len(typed) + 1):
        try:
            value = float(typed[:end])
        except ValueError:
            continue
        if abs(value) <= 5:
            taken = value
    return taken


@pytest.mark.parametrize("typed", ["", "-", "5.01", "-7", "1e9"])
def test_a_value_that_the_page_does_not_take_is_refused_and_said_so(context, base_url, typed):
    page = open_playground(context, base_url, "en")
    field = page.locator('input[data-token="0"][data-dim="0"]')
    field.focus()  # typed as a reader types: "-" is on the way to a negative number
    page.keyboard.press("Control+A")
    page.keyboard.press("Backspace")
    page.keyboard.type(typed)
    assert field.get_attribute("aria-invalid") == "true"
    # Said in words beside the field (tests/browser/test_playground_view.py: every language).
    said = page.locator("#" + field.get_attribute("aria-describedby"))
    assert said.inner_text() == "Your, dimension 1: Type a number from -5 to 5."
    assert said.is_visible()
    # The matrices keep the last value the page took: "5" of "5.01", "1" of "1e9".
    book = book_inputs(page)
    inputs = [[_taken(typed, book[0][0]), *book[0][1:]], *book[1:]]
    (result,) = package_results([{"stage": "3.3", "inputs": inputs}])
    assert_shows(page, result, f"after typing {typed!r}")
    page.fill('input[data-token="0"][data-dim="0"]', "-5")
    assert field.get_attribute("aria-invalid") == "false"
    assert field.get_attribute("aria-describedby") is None and said.count() == 0
    (result,) = package_results([{"stage": "3.3", "inputs": [[-5, *book[0][1:]], *book[1:]]}])
    assert_shows(page, result, "after -5")


def test_a_script_that_sets_values_without_bubbling_events_is_heard(context, base_url):
    page = open_playground(context, base_url, "en")
    page.evaluate(
        """() => {
          const set = (selector, value, type) => {
            const field = document.querySelector(selector);
            field.value = value;
            field.dispatchEvent(new Event(type));  // bubbles: false
          };
          set('[data-control="stage"]', "3.5", "change");
          set('[data-control="tokens"]', "3", "change");
          set('input[data-token="2"][data-dim="1"]', "-1.25", "input");
        }"""
    )
    book = book_inputs(page)
    inputs = [book[0], book[1], [book[2][0], -1.25, book[2][2]]]
    (result,) = package_results([{"stage": "3.5", "inputs": inputs}])
    assert_shows(page, result, "set by a script")
    page.click('[data-control="reset"]')
    (reset,) = package_results([{"stage": "3.5", "inputs": book}])
    assert page.input_value('[data-control="tokens"]') == "6"
    assert_shows(page, reset, "after reset")


@pytest.mark.parametrize("language", LANGUAGES)
def test_on_a_phone_only_the_matrices_scroll_sideways(browser, base_url, language):
    context = browser.new_context(
        viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True
    )
    page = context.new_page()
    page.goto(base_url + f"{language}/{PAGE}")
    page.wait_for_selector('[data-control="stage"]')
    for stage in STAGES:
        page.select_option('[data-control="stage"]', stage)
        page.select_option('[data-control="tokens"]', "8")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, (language, stage)
        boxes = page.evaluate(
            """() => Array.from(document.querySelectorAll(".attention-playground table")).map(
                 (t) => [getComputedStyle(t.parentElement).overflowX,
                         t.parentElement.classList.contains("playground-box")])"""
        )
        assert boxes and all(box == ["auto", True] for box in boxes), (language, stage)
    page.click('[data-matrix="weights"][data-head="1"][data-row="7"][data-col="3"]')
    if language in ("en", "vi"):
        page.locator(".attention-playground").screenshot(
            path=str(SCREENSHOTS / f"playground-390-{language}.png")
        )
    context.close()


def _luminance(rgb: str) -> float:
    values = [float(v) / 255 for v in rgb[rgb.index("(") + 1 : rgb.index(")")].split(",")[:3]]
    linear = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in values]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_playground_reads_in_both_colour_schemes(browser, base_url, scheme, screenshots):
    context = browser.new_context(color_scheme=scheme, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(base_url + f"en/{PAGE}")
    page.wait_for_selector('[data-control="stage"]')
    page.select_option('[data-control="stage"]', "3.6")
    page.click('[data-matrix="weights"][data-head="1"][data-row="2"][data-col="1"]')
    colours = page.evaluate(
        """() => {
          const pick = (s) => { const c = getComputedStyle(document.querySelector(s));
                                return [c.color, c.backgroundColor]; };
          return [pick('input[data-dim]'), getComputedStyle(document.body).backgroundColor,
                  getComputedStyle(document.querySelector('[data-matrix="scores"]')).color];
        }"""
    )
    (text, field), body, cell = colours
    ratio = (max(_luminance(text), _luminance(field)) + 0.05) / (
        min(_luminance(text), _luminance(field)) + 0.05
    )
    assert ratio >= 4.5, colours
    dark = _luminance(body) < 0.2
    assert dark == (scheme == "dark")
    assert (_luminance(cell) > 0.5) == dark  # light text on the dark page, dark on the light
    page.locator(".attention-playground").screenshot(
        path=str(screenshots / f"playground-1280-{scheme}.png")
    )
    context.close()


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_chapters_lead_to_the_playground(context, base_url, language):
    page = context.new_page()
    for chapter in (
        "02-simple-self-attention",
        "03-trainable-self-attention",
        "04-causal-attention",
        "05-multi-head-attention",
    ):
        page.goto(base_url + f"{language}/chapter-3/{chapter}/")
        links = page.eval_on_selector_all(".md-content a[href]", "all => all.map(a => a.href)")
        assert any(link.endswith(f"/{language}/{PAGE}") for link in links), (language, chapter)
    nav = page.eval_on_selector_all(".md-nav a[href]", "all => all.map(a => a.href)")
    assert any(link.endswith(f"/{language}/{PAGE}") for link in nav)


# Words that are sentences or plain words in every language; the others (a stage's name,
# "Head {n}", "Token") may keep the English term, as a glossary says.
SENTENCES = ["stage", "reset", "embeddings", "value_of", "slider", "invalid", "scores", "weights"]
SENTENCES += ["context", "joined", "hidden", "hint", "explain_score", "explain_scale"]
SENTENCES += ["explain_softmax", "explain_softmax_shifted", "explain_hidden", "no_script"]
SENTENCES += ["no_script_trained", "sequence", "sequence_invalid", "sequence_empty"]
SENTENCES += ["sequence_long", "loading", "load_failed", "predicted", "induction_legend"]
SENTENCES += ["invalid_grouping", "stale", "queries", "keys", "values"]
INTERFACE = """() => ({
  labels: Array.from(document.querySelectorAll(".playground-controls label, .playground-slider"))
    .map((l) => l.firstChild.textContent.trim()),
  options: Array.from(document.querySelectorAll('[data-control="stage"] option'))
    .map((o) => o.text),
  captions: Array.from(document.querySelectorAll(".playground-results caption"))
    .map((c) => c.textContent),
  embeddings: document.querySelector(".playground-embeddings caption").textContent,
  button: document.querySelector(".playground-controls button").textContent,
  explain: Array.from(document.querySelectorAll(".playground-explain p:not(.playground-math)"))
    .map((p) => p.textContent),
})"""


def interface(context, base_url: str, language: str) -> tuple[dict, dict]:
    """The page's own words (its JSON), and the interface's text at stage 3.6 with a weight
    of "journey" for "Your" selected in head 2."""
    page = open_playground(context, base_url, language)
    words = json.loads(page.text_content("script.playground-data"))["words"]
    page.select_option('[data-control="stage"]', "3.6")
    page.click('[data-matrix="weights"][data-head="1"][data-row="1"][data-col="0"]')
    shown = page.evaluate(INTERFACE)
    page.close()
    return words, shown


@pytest.mark.parametrize("language", [language for language in LANGUAGES if language != "en"])
def test_the_interface_speaks_each_language(context, base_url, language):
    english, _ = interface(context, base_url, "en")
    words, shown = interface(context, base_url, language)
    assert sorted(words) == sorted(english)
    untranslated = [key for key in SENTENCES if words[key] == english[key]]
    assert untranslated == [], language
    names = {"query": "journey", "key": "Your"}
    assert shown["labels"] == [
        words["stage"],
        words["tokens"],
        words["slider"].format(token="journey", dim=1).strip(),
    ]
    assert shown["options"] == [words[f"stage_{stage}"] for stage in [*STAGES, "trained"]]
    assert shown["button"] == words["reset"]
    assert shown["embeddings"] == words["embeddings"]
    assert shown["captions"] == [
        words["head_matrix"].format(head=words["head"].format(n=n), matrix=words[matrix])
        for n in (1, 2)
        for matrix in ("queries", "keys", "values", "scores", "weights", "context")
    ] + [words["joined"]]
    assert shown["explain"] == [
        words["head"].format(n=2),
        words["explain_score"].format(**names),
        words["explain_scale"].format(d=2),
        words["explain_softmax"].format(**names),
    ]


def test_values_typed_key_by_key_then_a_new_stage_show_the_package(context, base_url):
    # Unlike the other cases: every value typed a key at a time, three decimals, labels
    # renamed, seven tokens, and the stage chosen after the values.
    page = open_playground(context, base_url, "zh")
    rng = random.Random("key by key")
    page.select_option('[data-control="tokens"]', "7")
    inputs = [[round(rng.uniform(-3, 3), 3) for _ in range(3)] for _ in range(7)]
    for i, row in enumerate(inputs):
        page.fill(f'input[data-label][data-token="{i}"]', f"t{i}")
        for d, value in enumerate(row):
            page.focus(f'input[data-token="{i}"][data-dim="{d}"]')
            page.keyboard.press("Control+A")
            page.keyboard.press("Backspace")
            page.keyboard.type(str(value))
    for stage in ("3.6", "3.4"):
        page.select_option('[data-control="stage"]', stage)
        (result,) = package_results([{"stage": stage, "inputs": inputs}])
        assert_shows(page, result, f"typed key by key, {stage}")
    rows = page.eval_on_selector_all(
        ".playground-scores tbody th", "all => all.map(h => h.textContent)"
    )
    assert rows == [f"t{i}" for i in range(7)]
    assert page.errors == []
