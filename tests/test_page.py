"""book.page: a page's last edits in one parsed pass; and the hook's routing around it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from bs4 import BeautifulSoup
from checkouts import make_checkout
from mkdocs.exceptions import PluginError

from book import hooks
from book.build import TOOLING, Build
from book.page import PageError, PageInfo, anchors, edit, with_code

ENGLISH = str(Build(TOOLING).english)  # the real book's, whose API reference pages it links to

WORDS = {
    "source": "Full source, with docstrings: {name} in the API reference.",
    "behind": "Behind the English. Read the English page",
    "stale": "Parts of this page are behind the English.",
    "english": "Read the English page",
    "permalink": "Liên kết cố định",
    "solution": "Lời giải",
    "whole_class": "Toàn bộ lớp",
}


def edited(html: str, **info) -> tuple[BeautifulSoup, list[str]]:
    soup = BeautifulSoup(html, "html.parser")
    defaults = {
        "uri": "chapter-3/chapter.py",
        "language": "en",
        "english": ENGLISH,
        "notebook": True,
        "words": WORDS,
    }
    warnings = edit(soup, PageInfo(**{**defaults, **info}))
    return soup, warnings


def test_links_to_sources_lead_to_the_built_pages_or_warn():
    html = (
        '<p><a href="next.py#part">next</a> <a href="../index.md">home</a> '
        '<a href="gone.py">gone</a> <a href="https://x.org/a.py">out</a></p>'
    )
    urls = {"chapter-3/next.py": "../next/", "index.md": "../../"}
    soup, warnings = edited(html, urls=urls)
    assert [a["href"] for a in soup.find_all("a")] == [
        "../next/#part",
        "../../",
        "gone.py",
        "https://x.org/a.py",
    ]
    assert warnings == [
        "chapter-3/chapter.py links to chapter-3/gone.py, which is not a page of this site"
    ]


def test_from_a_translation_links_into_the_reference_lead_to_the_english_site():
    soup, warnings = edited('<p><a href="../reference/index.md">API</a></p>', language="vi")
    assert soup.a["href"] == "../../../en/reference/"
    assert warnings == []


CROSS = (
    "<p>See [<code>causal_mask</code>][attention_mechanisms.functional.causal_mask] and "
    "[the wrapper][attention_mechanisms.multihead.MultiHeadAttentionWrapper], "
    "not <code>[x][attention_mechanisms.functional.y]</code>.</p>"
)


def test_cross_references_become_autorefs_with_their_markup():
    soup, _ = edited(CROSS)
    refs = soup.find_all("autoref")
    assert [(r["identifier"], r.decode_contents()) for r in refs] == [
        ("attention_mechanisms.functional.causal_mask", "<code>causal_mask</code>"),
        ("attention_mechanisms.multihead.MultiHeadAttentionWrapper", "the wrapper"),
    ]
    assert (
        soup.p.get_text()
        == "See causal_mask and the wrapper, not [x][attention_mechanisms.functional.y]."
    )


def test_on_a_translated_page_they_link_to_the_english_reference():
    soup, _ = edited(CROSS, language="zh")
    assert [a["href"] for a in soup.find_all("a")] == [
        "../../../en/reference/functional/#attention_mechanisms.functional.causal_mask",
        "../../../en/reference/multihead/#attention_mechanisms.multihead.MultiHeadAttentionWrapper",
    ]
    soup, warnings = edited("<p>[x][attention_mechanisms.nowhere.x]</p>", language="zh")
    assert soup.p.get_text() == "[x][attention_mechanisms.nowhere.x]"
    assert warnings == [
        "chapter-3/chapter.py refers to attention_mechanisms.nowhere.x, which has no reference page"
    ]


def test_a_class_from_the_package_gets_a_line_to_its_full_source():
    html = '<div class="nb-cell" data-include="attention_mechanisms.causal.CausalAttention"></div>'
    soup, _ = edited(html)
    line = soup.select_one("div.nb-cell + p.nb-source")
    assert line.get_text() == "Full source, with docstrings: CausalAttention in the API reference."
    assert line.autoref["identifier"] == "attention_mechanisms.causal.CausalAttention"
    soup, _ = edited(html, language="vi")
    assert soup.select_one("p.nb-source a")["href"].endswith(
        "en/reference/causal/#attention_mechanisms.causal.CausalAttention"
    )


def test_paragraphs_behind_the_english_are_marked_and_the_page_says_so():
    html = (
        '<h1 id="x">Một chương<a class="headerlink" href="#x" title="Permanent link">¶</a></h1>'
        "<p>current</p><!-- book:behind --><p>old translation</p><p>current</p>"
    )
    soup, _ = edited(html, language="vi", titles=("Một chương",))
    (marked,) = soup.select(".book-behind")
    assert marked.get_text() == "old translation"
    note = marked.find_previous_sibling()
    assert (
        "book-behind-note" in note["class"] and note.a["href"] == "../../../en/chapter-3/chapter/"
    )
    assert soup.h1.find_next_sibling()["class"] == ["admonition", "warning", "book-stale"]
    assert soup.h1["id"] == "một-chương" and soup.h1.a["href"] == "#một-chương"
    assert soup.h1.a["title"] == "Liên kết cố định"
    assert "book:behind" not in str(soup)
    soup, _ = edited(html.replace("<!-- book:behind -->", ""), language="vi", titles=("x",))
    assert soup.select(".book-stale, .book-behind") == []


def test_a_translated_page_titles_its_solution_folds_in_its_own_language():
    html = (
        '<h1 id="x">Bài tập</h1><details class="success book-solution"><summary>Solution'
        "</summary><p>a</p></details><details><summary>Solution</summary></details>"
    )
    soup, _ = edited(html, language="vi", titles=("Bài tập",))
    assert [s.get_text() for s in soup.select("summary")] == ["Lời giải", "Solution"]
    soup, _ = edited(html, titles=("Bài tập",))
    assert [s.get_text() for s in soup.select("summary")] == ["Solution", "Solution"]


def test_a_translated_page_titles_its_whole_class_folds_in_its_own_language():
    html = (
        '<h1 id="x">Lớp</h1><details class="book-whole-class"><summary>The whole class'
        "</summary><pre>class A: ...</pre></details>"
    )
    soup, _ = edited(html, language="vi", titles=("Lớp",))
    assert [s.get_text() for s in soup.select("summary")] == ["Toàn bộ lớp"]
    soup, _ = edited(html, titles=("Lớp",))
    assert [s.get_text() for s in soup.select("summary")] == ["The whole class"]


def test_translated_headings_get_anchors_from_their_own_words():
    titles = ("练习", "练习 3.2\uff1a返回", "练习 3.2\uff1a返回", "<code>x</code> and y")
    assert anchors(titles) == ["练习", "练习-32返回", "练习-32返回_1", "x-and-y"]
    with pytest.raises(PageError, match="2 headings but 1 contents entries"):
        edited('<h1 id="a">练习</h1><h2 id="b">练习</h2>', language="zh", titles=("练习",))


def test_a_heading_with_code_keeps_the_code_in_its_contents_entry_and_anchor():
    # mkdocs-jupyter's contents entry for the second heading lost its code.
    content = (
        '<h2 id="a">Masks<a class="anchor-link" href="#a">\u00b6</a></h2>'
        '<h3 id="b">完整的 <code>MultiHeadAttention</code> 类'
        '<a class="anchor-link" href="#b">\u00b6</a></h3>'
    )
    titles = with_code(content, ("Masks", "完整的 类"))
    assert titles == ("Masks", "完整的 MultiHeadAttention 类")
    assert anchors(titles) == ["masks", "完整的-multiheadattention-类"]
    assert with_code(content, ("Masks",)) == ("Masks",)  # counts differ: _heading_ids says so


class Config(dict):
    """What the hook reads of a MkDocs config: its items and the file it was loaded from."""

    def __init__(self, build: Build, language: str, site_url: str | None = None) -> None:
        super().__init__(
            docs_dir=str(build.docs / language), site_url=site_url, theme={"language": language}
        )
        self.config_file_path = str(build.config(language))


@pytest.fixture
def book(tmp_path, monkeypatch):
    """A checkout in English, Vietnamese and Chinese; the hook's state is the test's own."""
    monkeypatch.setattr(hooks, "_state", None)
    return make_checkout(tmp_path / "book", languages=("en", "vi", "zh"))


def test_the_switcher_leads_to_the_same_page_except_from_the_reference(book):
    config = Config(book, "en", book.site_url("en"))
    assert hooks.on_config(config) is config
    page = SimpleNamespace(file=SimpleNamespace(src_uri="chapter-3/exercises.py"))
    context = hooks.on_page_context({}, page=page, config=config, nav=None)
    assert context["same_page_in"] == ["en", "vi", "zh"]
    page = SimpleNamespace(file=SimpleNamespace(src_uri="reference/functional.md"))
    context = hooks.on_page_context({}, page=page, config=config, nav=None)
    assert context["same_page_in"] == ["en"]


def test_chinese_search_without_its_word_splitter_fails_the_build(book, monkeypatch):
    config = Config(book, "zh")
    assert hooks.on_config(config) is config  # jieba is in the docs group
    monkeypatch.setattr(hooks.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(PluginError, match="'jieba'"):
        hooks.on_config(config)
    assert hooks.on_config(Config(book, "vi"))


def test_the_references_source_listings_stay_out_of_the_search_index():
    html = (
        '<div class="doc"><p>Docstring prose.</p>'
        '<details class="mkdocstrings-source"><summary>Source code</summary>'
        "<pre><code>def f(): ...</code></pre></details>"
        '<details class="example"><summary>Example</summary></details></div>'
    )
    soup, _ = edited(html, uri="reference/gated.md", notebook=False)
    source, example = soup.find_all("details")
    assert source.has_attr("data-search-exclude")
    assert not example.has_attr("data-search-exclude")
    assert not soup.find("p").has_attr("data-search-exclude")
