"""The playground's trained stage in a real browser: typed sequences against the package.

The page downloads the weights of the model that "What attention learns" trains and runs it
in JavaScript (induction.js); the package's numbers for the same sequence come from the
environment that has torch (`python -m book playground-cases`).
"""

from __future__ import annotations

import json

import pytest
from browsing import LANGUAGES, open_playground, package_results

# A weight shows two decimals: half of the last one, and float32's rounding.
SHOWN = 0.5e-2 + 1e-5

SHOWN_WEIGHTS = """() => Array.from(document.querySelectorAll(
  '[data-matrix="weights"][data-layer]')).map((cell) => [Number(cell.dataset.layer),
  Number(cell.dataset.head), Number(cell.dataset.row), Number(cell.dataset.col),
  cell.textContent.trim(), cell.hasAttribute("data-hidden"),
  cell.classList.contains("is-induction")])"""


def trained_data(page) -> dict:
    return json.loads(page.text_content("script.playground-data"))["trained"]


def open_trained(context, base_url: str, language: str):
    page = open_playground(context, base_url, language)
    page.select_option('[data-control="stage"]', "trained")
    page.wait_for_selector('[data-matrix="weights"][data-layer]')
    return page


def type_sequence(page, sequence: str) -> None:
    field = page.locator('[data-control="sequence"]')
    field.focus()
    page.keyboard.press("Control+A")
    page.keyboard.press("Backspace")
    page.keyboard.type(sequence)


def assert_shows(page, sequence: str, where: str) -> None:
    """Every head's weights as the package computes them, and its prediction."""
    (expected,) = package_results([{"stage": "trained", "sequence": sequence}])
    cells = page.evaluate(SHOWN_WEIGHTS)
    weights = expected["weights"]  # [layer][head][row][col]
    count = sum(len(h) * len(h[0]) * len(h[0][0]) for h in weights)
    assert len(cells) == count, f"{where}: {len(cells)} cells, not {count}"
    symbols = trained_data(page)["symbols"]
    ids = [None, *(symbols.index(c) for c in sequence)]
    for layer, head, row, col, text, hidden, induction in cells:
        value = weights[layer][head][row][col]
        if col > row:
            assert hidden and text == "", f"{where}: ({layer}, {head}, {row}, {col}) not hidden"
            continue
        assert len(text.partition(".")[2]) == 2, f"{where}: a weight shows {text!r}"
        assert abs(float(text) - value) <= SHOWN, f"{where}: {text}, not {value:.5f}"
        after_copy = 1 <= col <= row and ids[col - 1] is not None and ids[col - 1] == ids[row]
        assert induction == after_copy, f"{where}: ({layer}, {head}, {row}, {col}) outline"
    best = expected["predicted"][0]
    prediction = page.text_content(".playground-prediction")
    assert f"“{best['token']}”" in prediction and f"{best['probability']:.2f}" in prediction


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_trained_stage_shows_what_the_package_computes(context, base_url, language):
    page = open_trained(context, base_url, language)
    data = trained_data(page)
    assert page.input_value('[data-control="sequence"]') == data["default"]
    assert_shows(page, data["default"], f"{language} default")
    for sequence in ("kX9?kX9", "Ab" * 6, "z", "q3!" + "MNOpqr" * 3):
        type_sequence(page, sequence)
        assert_shows(page, sequence, f"{language} {sequence}")
    assert page.errors == []


def test_the_model_continues_a_copy_the_reader_types(context, base_url):
    page = open_trained(context, base_url, "en")
    type_sequence(page, "wR4tYu" + "wR4t")
    (expected,) = package_results([{"stage": "trained", "sequence": "wR4tYuwR4t"}])
    assert expected["predicted"][0]["token"] == "Y"  # the token after the earlier "t"
    assert "“Y”" in page.text_content(".playground-prediction")


@pytest.mark.parametrize(("typed", "word"), [("ab cd", "sequence_invalid"), ("", "sequence_empty")])
def test_a_sequence_the_model_cannot_read_is_refused_and_said_so(context, base_url, typed, word):
    page = open_trained(context, base_url, "en")
    type_sequence(page, "xyzxy")
    type_sequence(page, typed)
    field = page.locator('[data-control="sequence"]')
    assert field.get_attribute("aria-invalid") == "true"
    message = page.locator(".playground-message")
    assert message.is_visible() and "is-error" in message.get_attribute("class")
    words = json.loads(page.text_content("script.playground-data"))["words"]
    text = message.inner_text()
    assert text.startswith(words[word].split("{")[0].strip()), text
    if word == "sequence_invalid":
        assert "The model does not know" in text and " " in text
    # What stays drawn is the last sequence it could read, keystroke by keystroke.
    assert_shows(page, typed.partition(" ")[0] or "xyzxy", f"after typing {typed!r}")
    type_sequence(page, "xyzxy")
    assert field.get_attribute("aria-invalid") == "false"
    assert message.inner_text().strip() == ""


def test_the_field_takes_no_more_than_the_context(context, base_url):
    page = open_trained(context, base_url, "en")
    limit = trained_data(page)["config"]["context_length"] - 1
    type_sequence(page, "a" * (limit + 5))
    assert len(page.input_value('[data-control="sequence"]')) == limit
    assert page.locator('[data-matrix="weights"][data-layer="0"][data-head="0"]').count() == (
        (limit + 1) ** 2
    )


def test_the_chapter_stages_come_back_as_they_were(context, base_url):
    page = open_playground(context, base_url, "en")
    page.select_option('[data-control="stage"]', "3.5")
    page.fill('input[data-token="0"][data-dim="0"]', "1.5")
    page.select_option('[data-control="stage"]', "trained")
    page.wait_for_selector('[data-matrix="weights"][data-layer]')
    assert not page.locator('input[data-token="0"][data-dim="0"]').is_visible()
    assert not page.locator('[data-control="tokens"]').is_visible()
    page.select_option('[data-control="stage"]', "3.5")
    assert page.locator('[data-matrix="weights"][data-layer]').count() == 0
    assert page.input_value('input[data-token="0"][data-dim="0"]') == "1.5"
    assert not page.locator('[data-control="sequence"]').is_visible()
    assert page.errors == []


def test_reset_brings_back_the_default_sequence(context, base_url):
    page = open_trained(context, base_url, "en")
    type_sequence(page, "abcabc")
    page.click('[data-control="reset"]')
    assert page.input_value('[data-control="sequence"]') == trained_data(page)["default"]


@pytest.mark.parametrize("language", LANGUAGES)
def test_on_a_phone_the_stage_fits_and_scrolls_in_its_boxes(browser, base_url, language):
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    page = context.new_page()
    page.goto(base_url + f"{language}/chapter-3/playground/")
    page.select_option('[data-control="stage"]', "trained")
    page.wait_for_selector('[data-matrix="weights"][data-layer]')
    overflow = page.evaluate("() => document.documentElement.scrollWidth")
    assert overflow <= 390, f"the page scrolls sideways: {overflow} px"
    for control in ('[data-control="sequence"]', '[data-control="stage"]'):
        box = page.locator(control).bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390, (language, control)
    boxes = page.evaluate(
        """() => Array.from(document.querySelectorAll(".playground-trained-box")).map(
             (b) => getComputedStyle(b).overflowX)"""
    )
    assert boxes and set(boxes) == {"auto"}
    context.close()


def test_the_keyboard_reaches_the_stage_the_sequence_and_every_heatmap(context, base_url):
    page = open_playground(context, base_url, "en")
    page.focus('[data-control="stage"]')
    for _ in range(4):  # 3.3 -> 3.4 -> 3.5 -> 3.6 -> trained
        page.keyboard.press("ArrowDown")
    assert page.input_value('[data-control="stage"]') == "trained"
    page.wait_for_selector('[data-matrix="weights"][data-layer]')
    focused = []
    for _ in range(12):
        page.keyboard.press("Tab")
        focused.append(
            page.evaluate(
                "() => [document.activeElement.dataset.control || '', "
                "document.activeElement.classList.contains('playground-trained-box')]"
            )
        )
    assert ["sequence", False] in focused
    assert sum(box for _, box in focused) == 4  # each head's heatmap, once
    page.focus('[data-control="sequence"]')
    page.keyboard.press("End")
    page.keyboard.type("K")
    assert page.input_value('[data-control="sequence"]') == trained_data(page)["default"] + "K"
    assert_shows(page, trained_data(page)["default"] + "K", "typed from the keyboard")
