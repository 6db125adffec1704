"""The playground reads numbers as the page's language writes them, and says in words, in
that language, what it does not take (issue 34).

As in test_playground.py, the package's numbers come from `python -m book playground-cases`.
"""

from __future__ import annotations

import pytest
from browsing import (
    FIELD,
    LANGUAGES,
    assert_cells,
    assert_shows,
    book_inputs,
    open_playground,
    package_results,
    shown_cells,
    type_value,
    with_first,
    words_of,
)

# What each language reads of what a reader types: a number, or a refusal ("invalid": not a
# number from -5 to 5; "grouping": could be thousands in that language).
COMMA = {"vi": ",", "id": ","}
TYPED = {
    "0,5": {"*": 0.5},
    "-0,25": {"*": -0.25},
    " 0.5 ": {"*": 0.5},
    ".5": {"*": 0.5},
    "1e-1": {"*": 0.1},
    "\u22120.5": {"*": -0.5},
    "1,250": {",": 1.25, ".": "grouping"},
    "1.250": {",": "grouping", ".": 1.25},
    "1.000,5": {"*": "invalid"},
    "abc": {"*": "invalid"},
    "": {"*": "invalid"},
}


@pytest.mark.parametrize("language", LANGUAGES)
def test_numbers_are_read_as_the_pages_language_writes_them(context, base_url, language):
    page = open_playground(context, base_url, language)
    words = words_of(page)
    decimal = COMMA.get(language, ".")
    assert words["decimal"] == decimal
    page.select_option('[data-control="stage"]', "3.4")
    field = page.locator(FIELD)
    last = book_inputs(page)[0][0]  # the last value the page took
    cases, shown = [], []
    for typed, reads in TYPED.items():
        expected = reads.get("*", reads.get(decimal))
        page.fill(FIELD, typed)  # at once: key by key, "1,25" of "1,250" is taken on the way
        refused = not isinstance(expected, float)
        assert field.get_attribute("aria-invalid") == str(refused).lower(), (language, typed)
        if refused:
            said = page.locator("#" + field.get_attribute("aria-describedby")).inner_text()
            if expected == "grouping":
                other = typed.replace(".", "\0").replace(",", ".").replace("\0", ",")
                message = words["invalid_grouping"].format(typed=typed, decimal=other)
            else:
                message = words["invalid"].format(limit=5)
            name = words["value_of"].format(token="Your", dim=1)
            assert said == words["field_error"].format(field=name, message=message)
        else:
            last = expected
        cases.append({"stage": "3.4", "inputs": with_first(page, last)})
        shown.append(shown_cells(page))
    # The package, once for every case: after each, the matrices are those of `last`.
    for typed, cells, result in zip(TYPED, shown, package_results(cases), strict=True):
        assert_cells(cells, result, f"{language}: {typed!r}")
    # "0,5" typed key by key, in every language: every cell as "0.5" gives.
    type_value(page, FIELD, "0,5")
    comma = shown_cells(page)
    type_value(page, FIELD, "0.5")
    assert comma == shown_cells(page)
    assert page.get_attribute(FIELD, "aria-invalid") == "false"
    assert page.errors == []


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_refused_value_is_said_beside_its_field_and_the_matrices_say_what_they_use(
    context, base_url, language
):
    page = open_playground(context, base_url, language)
    words = words_of(page)
    field = page.locator(FIELD)
    type_value(page, FIELD, "7")
    assert field.get_attribute("aria-invalid") == "true"
    said = page.locator("#" + field.get_attribute("aria-describedby"))
    name = words["value_of"].format(token="Your", dim=1)
    message = words["invalid"].format(limit=5)
    assert said.inner_text() == words["field_error"].format(field=name, message=message)
    assert said.is_visible()
    # Beside the field: right under its row, within the embeddings' box.
    box, under = field.bounding_box(), said.bounding_box()
    assert 0 <= under["y"] - (box["y"] + box["height"]) <= 20, (box, under)
    # The matrices keep 0.43, the last value taken ("7" was never), and say so.
    stale = page.locator(".playground-stale")
    assert stale.is_visible()
    assert stale.inner_text() == words["stale"].format(field=name, value="0.43")
    assert "is-stale" in page.get_attribute(".playground-results", "class")
    (result,) = package_results([{"stage": "3.3", "inputs": book_inputs(page)}])
    assert_shows(page, result, f"{language}: 7 refused")
    page.select_option('[data-control="stage"]', "trained")  # not about its tables
    assert not stale.is_visible()
    assert "is-stale" not in page.get_attribute(".playground-results", "class")
    page.select_option('[data-control="stage"]', "3.3")
    assert stale.is_visible()
    # A second refused field on the same row: both said, each under its row.
    type_value(page, 'input[data-token="0"][data-dim="2"]', "x")
    assert page.locator(".playground-refused p").count() == 2
    assert page.locator(".playground-stale p").count() == 2
    type_value(page, 'input[data-token="0"][data-dim="2"]', "0.89")
    type_value(page, FIELD, "-1")
    assert field.get_attribute("aria-invalid") == "false"
    assert field.get_attribute("aria-describedby") is None
    assert page.locator(".playground-refused").count() == 0
    assert not stale.is_visible()
    assert "is-stale" not in page.get_attribute(".playground-results", "class")
    (result,) = package_results([{"stage": "3.3", "inputs": with_first(page, -1.0)}])
    assert_shows(page, result, f"{language}: -1 taken")
    # Refused, then fewer tokens while the field has the focus: the fields are drawn again
    # from the values taken, and nothing is left refused.
    type_value(page, FIELD, "-")
    page.select_option('[data-control="tokens"]', "5")
    assert page.input_value(FIELD) == "-1"
    assert page.locator(".playground-refused, [aria-invalid='true']").count() == 0
    assert not stale.is_visible()
    assert page.errors == []
