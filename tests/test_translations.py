"""Translations (tools/book/translations.py and the hook): English code and outputs, own prose."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from types import SimpleNamespace

import nbformat
import pytest
from mkdocs.exceptions import PluginError

from book import ROOT, BookError, checker, cli, executor, mkdocs_hooks, translations

ENGLISH_CHAPTER = """
# %% [markdown]
# # A chapter
#
# Each weight is 0.5000. See [`causal_mask`][attention_mechanisms.functional.causal_mask]
# and [the API reference](../reference/index.md).

# %%
print(f"{0.5:.4f}")
# Out:
# 0.5000

# %% [markdown]
# The figure:

# %%
from attention_mechanisms.plotting import AttentionFigure

AttentionFigure(png=b"png", alt="A square.", caption="Figure 1. A square.")
"""

VI_CHAPTER = """
# %% [markdown]
# # Một chương
#
# Mỗi trọng số là 0.5000. Xem [`causal_mask`][attention_mechanisms.functional.causal_mask]
# và [tài liệu API](../reference/index.md).

# %%
print(f"{0.5:.4f}")
# Out:
# 0.5000

# %% [markdown]
# Hình vẽ:

# %% caption="Hình 1. Một hình vuông." alt="Một hình vuông \\"đen\\"."
from attention_mechanisms.plotting import AttentionFigure

AttentionFigure(png=b"png", alt="A square.", caption="Figure 1. A square.")
"""


def write(path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")


@pytest.fixture
def docs(tmp_path, monkeypatch):
    """A book of one chapter and one Markdown page, in English and in Vietnamese."""
    root = tmp_path / "docs"
    monkeypatch.setattr(translations, "DOCS", root)
    monkeypatch.setattr(translations, "ENGLISH", root / "en")
    monkeypatch.setattr(executor, "CACHE", tmp_path / "cache")
    monkeypatch.setattr(translations, "ROOT", tmp_path)
    (tmp_path / "mkdocs.vi.yml").write_text("INHERIT: mkdocs.yml\n")
    write(root / "en" / "chapter-3" / "chapter.py", ENGLISH_CHAPTER)
    write(root / "en" / "index.md", "# Home\n\nThe [API](reference/index.md).\n")
    write(root / "en" / "reference" / "index.md", "# API\n")
    write(root / "en" / "reference" / "functional.md", "# functional\n")
    write(root / "vi" / "chapter-3" / "chapter.py", VI_CHAPTER)
    write(root / "vi" / "index.md", "# Trang chủ\n\n[API](reference/index.md).\n")
    return root


def chapter(docs):
    """The English chapter of the fixture book and its Vietnamese translation."""
    return docs / "en" / "chapter-3" / "chapter.py", docs / "vi" / "chapter-3" / "chapter.py"


def edit(path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_a_faithful_translation_has_no_problems(docs):
    assert translations.code_problems(docs / "vi" / "chapter-3" / "chapter.py") == []
    status = translations.status("vi")
    assert (status.missing, status.extra, status.problems) == ([], [], [])
    assert status.stale == ["chapter-3/chapter.py", "index.md"]  # nothing recorded yet


def test_the_page_is_the_english_execution_with_the_translated_prose(docs):
    english, page = chapter(docs)
    executed, _ = executor.execute(english)
    nb = translations.compose(page, executed)
    original = nbformat.read(executed, as_version=4)
    assert [c.cell_type for c in nb.cells] == [c.cell_type for c in original.cells]
    assert nb.cells[0].source.startswith("# Một chương")
    assert nb.cells[2].source == "Hình vẽ:"
    for cell, english_cell in zip(nb.cells, original.cells, strict=True):
        if cell.cell_type == "code":
            assert cell.source == english_cell.source
    assert nb.cells[1].outputs == original.cells[1].outputs  # printed by the English run
    figure = nb.cells[3].outputs[0]["data"]
    english_figure = original.cells[3].outputs[0]["data"]
    assert "<figcaption>Hình 1. Một hình vuông.</figcaption>" in figure["text/html"]
    assert 'alt="Một hình vuông &quot;đen&quot;."' in figure["text/html"]
    assert figure["text/html"].split('alt="')[0] == english_figure["text/html"].split('alt="')[0]
    assert figure["image/png"] == english_figure["image/png"]
    nbformat.validate(nb)


def test_a_changed_english_code_cell_is_named_and_can_be_copied_over(docs):
    english, page = chapter(docs)
    edit(english, 'print(f"{0.5:.4f}")', 'print(f"{0.25:.4f}")')
    (problem,) = translations.code_problems(page)
    problem = problem.replace(f"{docs.parent}/", "")  # the tree is outside the repository
    assert problem.startswith("docs/vi/chapter-3/chapter.py, line 8: code differs from the English")
    assert "(docs/en/chapter-3/chapter.py, line 8)" in problem
    assert "'print(f\"{0.5:.4f}\")' where the English has 'print(f\"{0.25:.4f}\")'" in problem
    with pytest.raises(BookError, match="code differs"):
        translations.compose(page, executor.execute(english)[0])

    assert translations.sync_code(page)
    assert translations.code_problems(page) == []
    text = page.read_text(encoding="utf-8")
    assert 'print(f"{0.25:.4f}")' in text and "# # Một chương" in text
    assert '# %% caption="Hình 1. Một hình vuông." alt="Một hình vuông \\"đen\\"."' in text
    assert not translations.sync_code(page)  # nothing left to copy


def test_code_cells_added_in_english_need_a_translator(docs):
    english, page = chapter(docs)
    edit(english, "# %% [markdown]\n# The figure:", "# %%\nx = 1\n\n# %% [markdown]\n# The figure:")
    (problem,) = translations.code_problems(page)
    problem = problem.replace(f"{docs.parent}/", "")
    assert problem.endswith(
        "2 code cells, but docs/en/chapter-3/chapter.py has 3; add or remove "
        "the changed cells as in the English, then run --sync-code"
    )
    with pytest.raises(BookError, match="by hand"):
        translations.sync_code(page)


def test_an_english_prose_change_makes_the_page_stale_not_broken(docs):
    """A new paragraph, a changed formula, a new caption: the page says it is behind."""
    english, page = chapter(docs)
    translations.stamp(page)
    assert translations.status("vi").problems == []
    edit(english, "# The figure:", "# The figure of $A = XW$:\n\n# %% [markdown]\n# More.")
    edit(english, 'caption="Figure 1. A square."', 'caption="Figure 1. The square."')
    assert translations.sync_code(page)  # the caption is in the code, which is the English
    status = translations.status("vi")
    assert (status.problems, status.stale) == ([], ["chapter-3/chapter.py", "index.md"])
    assert len(translations.prose_problems(page)) == 2  # what the translator will find
    # The page still shows the translation, where it stands among the English code.
    nb = translations.compose(page, executor.execute(english)[0])
    assert [c.cell_type for c in nb.cells] == ["markdown", "code", "markdown", "code"]
    assert nb.cells[2].source == "Hình vẽ:"
    assert (
        "<figcaption>Hình 1. Một hình vuông.</figcaption>"
        in nb.cells[3].outputs[0].data["text/html"]
    )
    # Stamped as current, the same differences are a translator's mistakes: they fail.
    translations.stamp(page)
    assert len(translations.status("vi").problems) == 2


def test_a_figure_needs_its_caption_and_alt_text_translated(docs):
    page = docs / "vi" / "chapter-3" / "chapter.py"
    edit(page, ' alt="Một hình vuông \\"đen\\"."', "")
    (problem,) = translations.prose_problems(page)
    assert "line 15" in problem and "caption and alt text are not translated" in problem
    edit(page, "# %%\nprint", '# %% caption="x" alt="y"\nprint')
    assert any("draws no figure" in p for p in translations.prose_problems(page))
    assert translations.code_problems(page) == []


def test_a_caption_may_hold_a_backslash(docs):
    english, page = chapter(docs)
    edit(page, 'caption="Hình 1. Một hình vuông."', 'caption="Hình 1. Chia cho \\\\sqrt{d_k}."')
    nb = translations.compose(page, executor.execute(english)[0])
    assert (
        "<figcaption>Hình 1. Chia cho \\sqrt{d_k}.</figcaption>"
        in nb.cells[3].outputs[0].data["text/html"]
    )


def test_a_translated_section_keeps_the_english_math(docs):
    english, page = chapter(docs)
    edit(english, "# The figure:", "# The figure of $A =\n# XW$:")
    edit(page, "# Hình vẽ:", "# Hình vẽ của $A = XW$:")  # wrapped differently: the same math
    assert translations.prose_problems(page) == []
    edit(page, "$A = XW$", "$A = X W_q$")
    (problem,) = translations.prose_problems(page)
    assert problem.endswith(
        "the formulas differ from the English: the English has ['$A = XW$'], the translation "
        "['$A = X W_q$']"
    )


def test_only_a_translated_page_is_stamped(docs):
    with pytest.raises(BookError, match="not a page of a translation"):
        translations.stamp(docs / "en" / "index.md")


def test_the_english_prose_hash_follows_the_prose_and_the_figures_not_the_code(docs):
    english = docs / "en" / "chapter-3" / "chapter.py"
    first = translations.prose_hash(english)
    edit(
        english,
        'print(f"{0.5:.4f}")\n# Out:\n# 0.5000',
        'print(f"{0.5:.4f}")  # same\n# Out:\n# 0.5000',
    )
    assert translations.prose_hash(english) == first
    edit(english, 'caption="Figure 1. A square."', 'caption="Figure 1. The square."')
    second = translations.prose_hash(english)
    assert second != first
    edit(english, "The figure:", "The figure below:")
    assert translations.prose_hash(english) not in (first, second)


def test_stamping_records_the_english_prose_and_a_change_makes_the_page_stale(docs):
    page, home = docs / "vi" / "chapter-3" / "chapter.py", docs / "vi" / "index.md"
    assert translations.stamp(page) and translations.stamp(home)
    assert not translations.stamp(page)  # already current
    assert page.read_text().startswith('# %% [markdown] english="')
    assert home.read_text().startswith(
        f"---\nenglish: {translations.prose_hash(docs / 'en' / 'index.md')}\n---\n"
    )
    assert translations.code_problems(page) == []  # the stamp is the translation's own
    status = translations.status("vi")
    assert (status.stale, status.current) == ([], ["chapter-3/chapter.py", "index.md"])

    edit(docs / "en" / "index.md", "The [API]", "The [API reference]")
    assert translations.status("vi").stale == ["index.md"]
    assert translations.stamp(home)
    assert home.read_text().count("english:") == 1
    assert translations.status("vi").stale == []


def test_missing_and_extra_pages_are_reported(docs):
    (docs / "vi" / "index.md").rename(docs / "vi" / "home.md")
    status = translations.status("vi")
    assert (status.missing, status.extra, status.failed) == (["index.md"], ["home.md"], True)


def test_translated_prose_may_quote_only_numbers_the_chapter_prints(docs):
    english, page = chapter(docs)
    executed, _ = executor.execute(english)
    assert translations.number_problems(page, executed) == []
    edit(page, "là 0.5000", "là 0.7500")
    (problem,) = translations.number_problems(page, executed)
    assert problem.endswith(
        "line 1: the prose quotes 0.7500, which no output of the chapter prints"
    )


# --------------------------------------------------------------------------- one language's cells

LANGUAGE_CELLS = """
# %% lang="en"
print("Each weight: 0.2500")
# Out:
# Each weight: 0.2500

# %% tags=["wrap-output"] lang="vi"
print("Mỗi trọng số: 0.7500")
# Out:
# Mỗi trọng số: 0.7500

# %% [markdown]
# {end}
"""


def add_language_cells(docs) -> None:
    """One code cell for English and one for Vietnamese, in both chapters, then prose."""
    english, page = chapter(docs)
    for path, end in ((english, "The end."), (page, "Hết.")):
        text = path.read_text(encoding="utf-8") + LANGUAGE_CELLS.format(end=end)
        path.write_text(text, encoding="utf-8")


def code_sources(nb) -> list[str]:
    return [cell.source for cell in nb.cells if cell.cell_type == "code"]


def test_the_english_page_leaves_out_the_code_cells_of_other_languages(docs):
    add_language_cells(docs)
    english, _ = chapter(docs)
    files = [SimpleNamespace(src_uri="chapter-3/chapter.py", abs_src_path="")]
    mkdocs_hooks.on_files(files, config=hook_config(docs, "en"))
    executed, ran = executor.execute(english)
    assert not ran  # one execution, of every cell
    marked = [c.metadata.get("lang") for c in nbformat.read(executed, as_version=4).cells]
    assert marked == [None, None, None, None, "en", "vi", None]
    assert files[0].abs_src_path == str(translations.composed_path(english, executed))
    nb = nbformat.read(files[0].abs_src_path, as_version=4)
    sources = code_sources(nb)
    assert len(sources) == 3 and sources[2] == 'print("Each weight: 0.2500")'
    assert sources[:2] == code_sources(nbformat.read(executed, as_version=4))[:2]
    assert [c.source for c in nb.cells if c.cell_type == "markdown"][-1] == "The end."
    assert nb.cells[-2].outputs[0]["text"] == "Each weight: 0.2500\n"
    assert nb.cells[-2].metadata.tags == ["lang-en"]  # the page marks it (data-lang="en")
    nbformat.validate(nb)


def test_a_chapter_without_cells_of_one_language_renders_its_execution(docs):
    english, _ = chapter(docs)
    files = [SimpleNamespace(src_uri="chapter-3/chapter.py", abs_src_path="")]
    mkdocs_hooks.on_files(files, config=hook_config(docs, "en"))
    assert files[0].abs_src_path == str(executor.execute(english)[0])
    assert not (docs.parent / ".cache" / "translations").exists()  # no copy made


def test_a_translated_page_shows_its_own_code_cells_and_the_shared_ones(docs):
    add_language_cells(docs)
    english, page = chapter(docs)
    assert translations.code_problems(page) == []  # the page holds every English code cell
    nb = translations.compose(page, executor.execute(english)[0])
    kinds = ["markdown", "code", "markdown", "code", "code", "markdown"]
    assert [c.cell_type for c in nb.cells] == kinds
    assert code_sources(nb)[2] == 'print("Mỗi trọng số: 0.7500")'
    assert nb.cells[4].outputs[0]["text"] == "Mỗi trọng số: 0.7500\n"
    assert "lang-vi" in nb.cells[4].metadata.tags  # the page marks it (data-lang="vi")
    assert (nb.cells[2].source, nb.cells[5].source) == ("Hình vẽ:", "Hết.")
    files = [SimpleNamespace(src_uri="chapter-3/chapter.py", abs_src_path="")]
    mkdocs_hooks.on_files(files, config=hook_config(docs, "vi"))
    assert code_sources(nbformat.read(files[0].abs_src_path, as_version=4)) == code_sources(nb)


def test_translated_prose_may_quote_only_numbers_its_page_prints(docs):
    add_language_cells(docs)
    english, page = chapter(docs)
    executed, _ = executor.execute(english)
    edit(page, "# Hết.", "# Hết: 0.7500.")
    assert translations.number_problems(page, executed) == []
    edit(page, "# Hết: 0.7500.", "# Hết: 0.2500.")  # printed by the English cell only
    (problem,) = translations.number_problems(page, executed)
    assert "the prose quotes 0.2500, which no output of the chapter prints" in problem


def test_a_lang_that_is_not_a_language_of_the_book_fails_naming_file_line_and_value(
    docs, monkeypatch, capsys
):
    add_language_cells(docs)
    english, page = chapter(docs)
    for path in (english, page):
        edit(path, '# %% lang="en"', '# %% lang="fr"')
    message = (
        r"docs/en/chapter-3/chapter\.py, line 20: lang='fr' is not a language of the book "
        r"\(en, vi\)"
    )
    files = [SimpleNamespace(src_uri="chapter-3/chapter.py", abs_src_path="")]
    with pytest.raises(PluginError, match=message):
        mkdocs_hooks.on_files(files, config=hook_config(docs, "en"))
    with pytest.raises(PluginError, match=message):
        mkdocs_hooks.on_files(files, config=hook_config(docs, "vi"))
    monkeypatch.setattr(cli, "check_docstrings", lambda: checker.Report("docstrings"))
    assert cli.main(["check", str(english)]) == 1
    assert re.search(message, capsys.readouterr().err)


# --------------------------------------------------------------------------- the hook


def hook_config(docs, language: str) -> dict:
    return {
        "docs_dir": str(docs / language),
        "theme": {"language": language},
        "extra": {
            "translation": {
                "stale": "Bản tiếng Anh đã thay đổi.",
                "english": "Đọc bản tiếng Anh",
                "permalink": "Liên kết cố định",
            },
            "alternate": [{"lang": lang} for lang in ("en", "vi", "zh")],
        },
    }


def test_a_translated_page_links_to_the_english_reference_and_says_when_it_is_stale(
    docs, monkeypatch
):
    # Presenting the page (tested in test_site_glue.py) needs mkdocs-jupyter's real HTML.
    monkeypatch.setattr(mkdocs_hooks, "present", lambda html, titles, *_: (html, titles))
    heading = SimpleNamespace(title="Một chương", id="mot-chuong", children=[])
    page = SimpleNamespace(
        file=SimpleNamespace(src_uri="chapter-3/chapter.py"),
        url="chapter-3/chapter/",
        toc=[heading],
    )
    html = (
        '<h1 id="mot-chuong">Một chương</h1><p><a href="../reference/index.md">API</a> '
        "[<code>causal_mask</code>][attention_mechanisms.functional.causal_mask]</p>"
    )
    config = hook_config(docs, "vi")
    out = mkdocs_hooks.on_page_content(
        html, page=page, config=config, files=SimpleNamespace(get_file_from_path=lambda path: None)
    )
    assert '<a href="../../../en/reference/">API</a>' in out
    reference = "../../../en/reference/functional/#attention_mechanisms.functional.causal_mask"
    assert f'<a href="{reference}"><code>causal_mask</code></a>' in out
    notice = (
        '<p class="admonition-title">Bản tiếng Anh đã thay đổi.</p><p><a '
        'href="../../../en/chapter-3/chapter/" hreflang="en">Đọc bản tiếng Anh</a></p>'
    )
    assert out.index("</h1>") < out.index(notice)

    translations.stamp(docs / "vi" / "chapter-3" / "chapter.py")
    out = mkdocs_hooks.on_page_content(
        html, page=page, config=config, files=SimpleNamespace(get_file_from_path=lambda path: None)
    )
    assert "book-stale" not in out


def test_a_translated_markdown_page_links_to_the_english_reference(docs):
    page = SimpleNamespace(file=SimpleNamespace(src_uri="index.md"), url="")
    markdown = (
        "See [the API](reference/index.md) and "
        "[`causal_mask`][attention_mechanisms.functional.causal_mask]."
    )
    out = mkdocs_hooks.on_page_markdown(
        markdown, page=page, config=hook_config(docs, "vi"), files=None
    )
    assert out == (
        "See [the API](../en/reference/) and "
        "[`causal_mask`](../en/reference/functional/#attention_mechanisms.functional.causal_mask)."
    )
    english = mkdocs_hooks.on_page_markdown(
        markdown, page=page, config=hook_config(docs, "en"), files=None
    )
    assert english == markdown


def test_a_translation_whose_code_differs_fails_the_build_naming_the_file(docs):
    edit(docs / "en" / "chapter-3" / "chapter.py", 'print(f"{0.5:.4f}")', 'print(f"{0.25:.4f}")')
    files = [SimpleNamespace(src_uri="chapter-3/chapter.py", abs_src_path="")]
    with pytest.raises(PluginError, match=r"/docs/vi/chapter-3/chapter\.py, line 8: code differs"):
        mkdocs_hooks.on_files(files, config=hook_config(docs, "vi"))


def test_a_translated_chapter_page_shows_the_composed_notebook(docs):
    files = [SimpleNamespace(src_uri="chapter-3/chapter.py", abs_src_path="")]
    mkdocs_hooks.on_files(files, config=hook_config(docs, "vi"))
    nb = nbformat.read(files[0].abs_src_path, as_version=4)
    assert nb.cells[0].source.startswith("# Một chương")
    assert nb.cells[1].outputs[0]["text"] == "0.5000\n"


def test_the_switcher_knows_which_languages_have_the_page(docs):
    page = SimpleNamespace(file=SimpleNamespace(src_uri="index.md"))
    context = mkdocs_hooks.on_page_context({}, page=page, config=hook_config(docs, "vi"), nav=None)
    assert context["same_page_in"] == ["en", "vi"]
    page = SimpleNamespace(file=SimpleNamespace(src_uri="reference/functional.md"))
    context = mkdocs_hooks.on_page_context({}, page=page, config=hook_config(docs, "en"), nav=None)
    assert context["same_page_in"] == ["en"]


def test_chinese_search_without_its_word_splitter_fails_the_build(monkeypatch):
    config = {"theme": {"language": "zh"}}
    assert mkdocs_hooks.on_config(config) is config  # jieba is in the docs group
    monkeypatch.setattr(mkdocs_hooks.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(PluginError, match="'jieba'"):
        mkdocs_hooks.on_config(config)
    assert mkdocs_hooks.on_config({"theme": {"language": "vi"}})


# --------------------------------------------------------------------------- the book


@pytest.mark.parametrize("language", translations.languages())
def test_every_language_has_every_page_with_the_english_code(language):
    status = translations.status(language)
    assert status.missing == []
    assert status.extra == []
    assert status.problems == []
    unrecorded = [
        p
        for p in translations.translated_pages(language)
        if translations.recorded_hash(translations.DOCS / language / p) is None
    ]
    assert unrecorded == [], "pages that record no English revision: run --stamp on them"


def _config(name: str) -> dict:
    import yaml

    return yaml.load((ROOT / name).read_text(encoding="utf-8"), Loader=yaml.BaseLoader)


def _nav_files(nav) -> list[str]:
    if isinstance(nav, str):
        return [nav] if nav.endswith((".md", ".py")) else []
    if isinstance(nav, dict):
        return [f for value in nav.values() for f in _nav_files(value)]
    return [f for item in nav for f in _nav_files(item)]


def test_every_language_has_a_config_a_glossary_and_a_place_in_the_switcher():
    english = _config("mkdocs.yml")
    switcher = [entry["lang"] for entry in english["extra"]["alternate"]]
    assert sorted(switcher) == sorted(["en", *translations.languages()])
    pages = [f for f in _nav_files(english["nav"]) if not f.startswith("reference/")]
    for language in translations.languages():
        config = _config(f"mkdocs.{language}.yml")
        # Served from the folder beside English's, as site.py builds it.
        assert config["site_url"] == english["site_url"].removesuffix("en/") + f"{language}/"
        assert (config["docs_dir"], config["site_dir"]) == (f"docs/{language}", f"site/{language}")
        assert config["theme"]["language"] == language
        assert _nav_files(config["nav"]) == pages, "the navigation lists the English pages"
        assert set(config["extra"]["translation"]) == {
            "stale", "english", "reference", "permalink", "download"
        }  # fmt: skip
        glossary = ROOT / "translations" / f"{language}.md"
        assert glossary.read_text(encoding="utf-8").count("\n|") >= 20


def test_the_translations_command_lists_each_language():
    result = subprocess.run(
        [sys.executable, "-m", "book", "translations"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    pages = len(translations.english_pages())
    for language in translations.languages():
        assert f"{language}: {pages} of {pages} pages" in result.stdout


def test_translated_headings_get_anchors_from_their_own_words():
    html = (
        '<h1 id="">练习<a class="headerlink" href="#" title="Permanent link">¶</a></h1>'
        '<p>x</p><h2 id="32">练习 3.2\uff1a返回<a class="headerlink" href="#32">¶</a></h2>'
        '<h2 id="32">练习 3.2\uff1a返回<a class="headerlink" href="#32">¶</a></h2>'
    )
    items = [SimpleNamespace(id="_1"), SimpleNamespace(id="32"), SimpleNamespace(id="32_1")]
    titles = ["练习", "练习 3.2\uff1a返回", "练习 3.2\uff1a返回"]
    page = SimpleNamespace(file=SimpleNamespace(src_uri="chapter-3/exercises.py"))
    out = mkdocs_hooks._heading_ids(html, items, titles, page)
    assert [item.id for item in items] == ["练习", "练习-32返回", "练习-32返回_1"]
    for anchor in ("练习", "练习-32返回", "练习-32返回_1"):
        assert f'id="{anchor}">' in out and f'href="#{anchor}"' in out
    with pytest.raises(PluginError, match="3 headings but 2 contents entries"):
        mkdocs_hooks._heading_ids(html, items[:2], titles[:2], page)


def test_the_site_root_sends_readers_to_english_and_keeps_old_addresses(tmp_path):
    from book import site

    english = tmp_path / "en"
    (english / "chapter-3" / "pitfalls").mkdir(parents=True)
    (english / "index.html").write_text("<html><head></head><body>home</body></html>")
    (english / "chapter-3" / "pitfalls" / "index.html").write_text("pitfalls")
    (english / "404.html").write_text('<html lang="en"><head><title>404</title></head></html>')
    site.write_root(tmp_path)
    assert 'content="0; url=en/"' in (tmp_path / "index.html").read_text()
    old = (tmp_path / "chapter-3" / "pitfalls" / "index.html").read_text()
    assert 'url=../../en/chapter-3/pitfalls/"' in old
    assert 'location.replace("../../en/chapter-3/pitfalls/" + location.hash)' in old
    page_404 = (tmp_path / "404.html").read_text()
    assert page_404.startswith('<html lang="en"><head>\n<script>')
    assert '"/attention-mechanisms/"' in page_404 and '["id", "vi", "zh"]' in page_404
    assert page_404.endswith("<title>404</title></head></html>")
