"""Every language of the site: the root, the switcher, 404 pages, search, shared outputs."""

from __future__ import annotations

import itertools
import re

import pytest
from browsing import LANGUAGES, SITE, notebook_pages, search, site_pages

TRANSLATIONS = LANGUAGES[1:]
CHAPTER = "chapter-3/04-causal-attention/"

# What a reader of each language types to find the causal attention chapter (a new
# language adds its own).
QUERIES = {
    "en": ["causal"],
    "vi": ["nhân quả"],
    "zh": ["因果", "注意力"],
    "id": ["kausal"],
}

# The outputs a reader sees, figure captions and alt text aside (those are translated).
# The cells every language shows; a cell of one language's page has a data-lang attribute.
OUTPUTS = """() => Array.from(document.querySelectorAll(".nb-cell:not([data-lang]) .nb-output"))
  .map((output) => {
  const copy = output.cloneNode(true);
  copy.querySelectorAll("figcaption").forEach((caption) => caption.remove());
  copy.querySelectorAll("img").forEach((image) => image.removeAttribute("alt"));
  return copy.innerHTML;
})"""
CODE = """() => Array.from(document.querySelectorAll(".nb-cell:not([data-lang]) pre code"))
  .map((code) => code.textContent)"""
# The theme's own words: labels for screen readers, placeholders, the search box's state.
THEME_WORDS = """() => Array.from(
  document.querySelectorAll("[aria-label], [placeholder], .md-search-result__meta"))
  .map((e) => e.getAttribute("aria-label") || e.getAttribute("placeholder") || e.textContent)"""
LANGUAGE_CELLS = """() => Array.from(document.querySelectorAll(".nb-cell[data-lang]"))
  .map((cell) => cell.dataset.lang)"""


def test_every_language_is_built_with_every_english_page():
    assert TRANSLATIONS, "no translation in mkdocs.yml's extra.languages"
    english = {page.removeprefix("en/") for page in site_pages("en") if "/reference/" not in page}
    for language in TRANSLATIONS:
        pages = {page.removeprefix(f"{language}/") for page in site_pages(language)}
        assert pages == english, language


def test_the_root_sends_readers_to_english(context, base_url):
    page = context.new_page()
    page.goto(base_url)
    page.wait_for_url(f"{base_url}en/")
    assert page.evaluate("document.documentElement.lang") == "en"


def test_addresses_from_before_the_translations_still_work(context, base_url):
    page = context.new_page()
    page.goto(base_url + CHAPTER)
    page.wait_for_url(f"{base_url}en/{CHAPTER}")
    assert page.locator("h1").inner_text().removesuffix("¶") == "Causal attention"


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_missing_page_under_each_language_shows_its_404_page(context, base_url, language):
    """The host serves the root's 404.html for every missing URL, as GitHub Pages does."""
    page = context.new_page()
    url = f"{base_url}{language}/no/such/page/"
    errors, bad = [], []
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    # The root's 404 page swaps itself for the language's: a request of the page it replaced
    # may be cut short then (net::ERR_ABORTED), and nothing is missing for the reader.
    page.on(
        "requestfailed",
        lambda request: request.failure != "net::ERR_ABORTED" and errors.append(request.url),
    )
    page.on("response", lambda r: r.status >= 400 and r.url != url and bad.append(r.url))
    response = page.goto(url)
    assert response.status == 404
    page.wait_for_function(f"document.documentElement.lang === {language!r}")
    page.wait_for_load_state("networkidle")
    assert "404" in page.locator("h1").inner_text()
    assert page.locator("link[rel=stylesheet]").count() > 0
    assert page.evaluate("getComputedStyle(document.body).fontFamily") != ""
    # The only error is the page's own status, which Chromium logs.
    assert bad == []
    assert [e for e in errors if "status of 404" not in e] == []
    # Its switcher leads to each language's home page.
    links = page.locator("a.md-select__link")
    hrefs = {
        links.nth(i).get_attribute("hreflang"): links.nth(i).evaluate("a => a.href")
        for i in range(links.count())
    }
    assert hrefs == {lang: f"{base_url}{lang}/" for lang in LANGUAGES}


def _switch(page, language: str) -> None:
    page.locator(".md-header__option .md-select").hover()
    page.locator(f"a.md-select__link[hreflang={language}]").click()


def every_switch_once(languages: list[str]) -> list[str]:
    """Languages in the order that switches from each one to each other one exactly once,
    from the first back to it: a walk through every edge of the complete directed graph."""
    left = {language: [o for o in languages if o != language] for language in languages}
    path, walk = [languages[0]], []
    while path:  # Hierholzer's algorithm
        if left[path[-1]]:
            path.append(left[path[-1]].pop())
        else:
            walk.append(path.pop())
    return walk[::-1]


def test_the_walk_switches_between_every_two_languages_both_ways():
    walk = every_switch_once(LANGUAGES)
    switches = list(itertools.pairwise(walk))
    assert sorted(switches) == sorted((a, b) for a in LANGUAGES for b in LANGUAGES if a != b)


@pytest.mark.parametrize("path", ["", CHAPTER, "chapter-3/check-your-code/"])
def test_the_switcher_keeps_the_reader_on_the_same_page(context, base_url, path):
    """From every language to every other one, by the switcher; Back returns, as it should."""
    walk = every_switch_once(LANGUAGES)
    page = context.new_page()
    page.goto(f"{base_url}{walk[0]}/{path}")
    for language in walk[1:]:
        _switch(page, language)
        page.wait_for_url(f"{base_url}{language}/{path}")
        assert page.evaluate("document.documentElement.lang") == language
    page.go_back()
    page.wait_for_url(f"{base_url}{walk[-2]}/{path}")


def test_from_the_english_api_reference_the_switcher_leads_home(context, base_url):
    page = context.new_page()
    page.goto(f"{base_url}en/reference/causal/")
    for language in TRANSLATIONS:
        _switch(page, language)
        page.wait_for_url(f"{base_url}{language}/")
        page.go_back()


@pytest.mark.parametrize("language", TRANSLATIONS)
def test_each_language_has_its_own_title_and_navigation(context, base_url, language):
    page = context.new_page()
    page.goto(f"{base_url}en/{CHAPTER}")
    english_tabs = page.locator(".md-tabs__link").all_inner_texts()
    english_title = page.title()
    page.goto(f"{base_url}{language}/{CHAPTER}")
    tabs = page.locator(".md-tabs__link").all_inner_texts()
    assert len(tabs) == len(english_tabs)
    assert [t for t, e in zip(tabs, english_tabs, strict=True) if t.strip() == e.strip()] == []
    assert page.title() != english_title
    # The last tab is the API reference, which stays English: it leads there.
    page.locator(".md-tabs__link").last.click()
    page.wait_for_url(f"{base_url}en/reference/")


@pytest.mark.parametrize("language", TRANSLATIONS)
def test_the_theme_speaks_each_language(context, base_url, language):
    page = context.new_page()
    page.goto(f"{base_url}en/{CHAPTER}")
    english = set(page.evaluate(THEME_WORDS))
    page.goto(f"{base_url}{language}/{CHAPTER}")
    assert set(page.evaluate(THEME_WORDS)) & english == set()


@pytest.mark.parametrize(
    ("language", "query"), [(lang, q) for lang in LANGUAGES for q in QUERIES.get(lang, [None])]
)
def test_search_in_each_language_finds_its_chapter_and_only_its_pages(
    context, base_url, language, query
):
    assert query, f"add to QUERIES what a reader types to find the chapter in {language!r}"
    _, results = search(context, base_url, query, language)
    hrefs = results.evaluate_all("(links) => links.map((link) => link.href)")
    assert any(href.startswith(f"{base_url}{language}/{CHAPTER}") for href in hrefs), hrefs
    assert [h for h in hrefs if not h.startswith(f"{base_url}{language}/")] == []


@pytest.mark.parametrize(
    "path",
    [p.removeprefix("en/") for p in notebook_pages() if p.startswith("en/")],
)
def test_translated_chapters_show_the_english_code_and_outputs(context, base_url, path):
    page = context.new_page()
    page.goto(f"{base_url}en/{path}")
    outputs, code = page.evaluate(OUTPUTS), page.evaluate(CODE)
    own = page.evaluate(LANGUAGE_CELLS)  # a page shows its own language's cells, and no other
    folds = page.locator("article details > summary").all_inner_texts()  # solutions, titled
    assert code and (outputs or own)
    assert set(own) <= {"en"}
    for language in TRANSLATIONS:
        page.goto(f"{base_url}{language}/{path}")
        assert page.evaluate(CODE) == code, language
        assert page.evaluate(OUTPUTS) == outputs, language
        assert page.evaluate(LANGUAGE_CELLS) == [language] * len(own), language
        titles = page.locator("article details > summary").all_inner_texts()
        assert len(titles) == len(folds) and set(titles).isdisjoint(folds), (language, titles)
        captions = page.locator("figcaption").all_inner_texts()
        english = (SITE / "en" / path / "index.html").read_text(encoding="utf-8")
        assert len(captions) == english.count("<figcaption>"), language
        assert [c for c in captions if f"<figcaption>{c}</figcaption>" in english] == [], (
            f"{language}: figure captions left in English"
        )


def test_chinese_is_drawn_with_a_chinese_font(context, base_url):
    """Every character of a Chinese heading comes from a CJK font of the book's font stack."""
    page = context.new_page()
    page.goto(f"{base_url}zh/{CHAPTER}")
    session = context.new_cdp_session(page)
    session.send("DOM.enable")
    session.send("CSS.enable")
    root = session.send("DOM.getDocument")["root"]["nodeId"]
    heading = session.send("DOM.querySelector", {"nodeId": root, "selector": "h1"})["nodeId"]
    fonts = session.send("CSS.getPlatformFontsForNode", {"nodeId": heading})["fonts"]
    stack = page.evaluate("getComputedStyle(document.querySelector('h1')).fontFamily")
    han = sum(1 for ch in page.locator("h1").inner_text() if "\u4e00" <= ch <= "\u9fff")
    cjk = [f for f in fonts if re.search(r"CJK|Hei|PingFang|YaHei|Han", f["familyName"])]
    assert han > 0 and cjk, fonts
    assert sum(f["glyphCount"] for f in cjk) >= han
    assert any(f'"{f["familyName"]}"' in stack for f in cjk), (fonts, stack)
