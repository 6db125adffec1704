"""Site-wide behaviour: search, the colour toggle, code copy, and the 404 page."""

from __future__ import annotations

import pytest
from browsing import RAW_TEX, search


def test_search_for_softmax_lists_the_chapter_and_opens_it(context, base_url):
    page, results = search(context, base_url, "softmax")
    hrefs = results.evaluate_all("(links) => links.map((link) => link.getAttribute('href'))")
    assert any("02-simple-self-attention" in href for href in hrefs), hrefs
    # Found by its address, not its position: a locator that holds if the list is redrawn.
    results.and_(page.locator("a[href*='02-simple-self-attention']")).first.click()
    page.wait_for_url("**/02-simple-self-attention/**")
    # The heading's permalink (¶) is part of its text, as on every page.
    assert page.locator("h1").inner_text().removesuffix("¶") == "Simplified self-attention"


@pytest.mark.parametrize("key", [None, "/"], ids=["search-box-clicked", "search-key"])
def test_the_search_index_loads_when_the_reader_turns_to_search(context, base_url, key):
    page = context.new_page()
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    page.goto(f"{base_url}en/chapter-3/playground/")
    page.wait_for_load_state("networkidle")
    assert not [url for url in asked if "search_index" in url], asked
    with page.expect_request("**/search/search_index.json"):
        if key is None:
            page.locator("input[data-md-component='search-query']").click()
        else:
            page.keyboard.press(key)
    page.close()


def test_search_finds_the_api_reference(context, base_url):
    _, results = search(context, base_url, "MultiHeadAttentionWrapper")
    hrefs = results.evaluate_all("(links) => links.map((link) => link.getAttribute('href'))")
    assert any("reference/multihead/" in href for href in hrefs)


def test_search_results_show_math_as_text_not_tex(context, base_url):
    """The section "Second way: -inf before the softmax" has a formula in its title."""
    page, results = search(context, base_url, "Second way")
    page.locator(".md-search-result__more summary").first.click()  # unfold the sections
    # The results' text outside code (which may quote TeX in a docstring).
    texts = results.evaluate_all(
        """(links) => links.map((link) => {
          const copy = link.cloneNode(true);
          copy.querySelectorAll("code, pre").forEach((code) => code.remove());
          return copy.textContent;
        })"""
    )
    section = next(text for text in texts if "before the softmax" in text)
    assert "Second way: \u2212\u221e before the softmax" in section  # minus sign, infinity
    assert [text for text in texts if RAW_TEX.search(text)] == []


def test_light_dark_toggle(context, base_url):
    page = context.new_page()
    page.goto(base_url + "en/")
    scheme = "document.body.getAttribute('data-md-color-scheme')"
    assert page.evaluate(scheme) == "default"
    page.locator("form[data-md-component='palette'] label:visible").first.click()
    assert page.evaluate(scheme) == "slate"
    page.locator("form[data-md-component='palette'] label:visible").first.click()
    assert page.evaluate(scheme) == "default"


def test_copy_button_copies_a_code_block(browser, base_url):
    context = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
    page = context.new_page()
    page.goto(base_url + "en/")
    block = page.locator(".md-typeset pre:visible").first
    block.hover()
    block.locator("button[data-md-type='copy']").click()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.strip() == block.locator("code").inner_text().strip()
    assert "pip install" in copied
    context.close()


def test_unknown_url_shows_the_404_page(context, base_url):
    page = context.new_page()
    failed = []
    page.on("requestfailed", lambda request: failed.append(request.url))
    response = page.goto(base_url + "no/such/page/")
    assert response.status == 404
    assert "404" in page.locator("h1").inner_text()
    page.wait_for_load_state("networkidle")
    assert failed == []
    assert page.locator("link[rel=stylesheet]").count() > 0
    assert page.evaluate("getComputedStyle(document.body).fontFamily") != ""
