"""Translations: catalogs of prose and their upkeep (book.translate), composed pages
(book.compose), and the real book's catalogs."""

from __future__ import annotations

import textwrap

import nbformat
import polib
import pytest
import yaml
from checkouts import make_checkout

from book import BookError, cli, compose, execute, links, publish, translate
from book.build import TOOLING, Build

ROOT = TOOLING
TRANSLATIONS = Build(ROOT).translations  # the real book's

ENGLISH_CHAPTER = """
# %% [markdown]
# # A chapter
#
# Each weight is 0.5000. See [`causal_mask`][attention_mechanisms.functional.causal_mask]
# and [the API reference](../reference/index.md).
#
# $$
# a = b
# $$
#
# A formula $x^2$ inside.

# %%
print(f"{0.5:.4f}")
# Out:
# 0.5000

# %% [markdown]
# The figure:

# %%
from attention_mechanisms.plotting import AttentionFigure

AttentionFigure(png=b"png", alt="A square.", caption="Figure 1. A square.")

# %% lang="vi"
print("chỉ tiếng Việt")
# Out:
# chỉ tiếng Việt
"""

VIETNAMESE = {
    "# A chapter": "# Một chương",
    "Each weight is 0.5000. See [`causal_mask`][attention_mechanisms.functional.causal_mask]\n"
    "and [the API reference](../reference/index.md).": "Mỗi trọng số là 0.5000. Xem "
    "[`causal_mask`][attention_mechanisms.functional.causal_mask] và "
    "[tài liệu API](../reference/index.md).",
    "A formula $x^2$ inside.": "Một công thức $x^2$ ở giữa.",
    "The figure:": "Hình vẽ:",
    "A square.": "Một hình vuông.",
    "Figure 1. A square.": "Hình 1. Một hình vuông.",
    "# Home": "# Trang chủ",
    "The [API](reference/index.md).": "[API](reference/index.md).",
}


def write(path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")


def write_catalog(path, table: dict[str, str]) -> None:
    po = polib.POFile(wrapwidth=0)
    for english, translated in table.items():
        po.append(polib.POEntry(msgid=english, msgstr=translated))
    path.parent.mkdir(parents=True, exist_ok=True)
    po.save(str(path))


@pytest.fixture
def book(tmp_path) -> Build:
    """A book of one chapter and one Markdown page, in English and in Vietnamese."""
    book = make_checkout(tmp_path / "book", languages=("en", "vi"))
    book.config("vi").write_text("INHERIT: mkdocs.yml\n", encoding="utf-8")
    write(book.english / "chapter-3" / "chapter.py", ENGLISH_CHAPTER)
    write(book.english / "index.md", "# Home\n\nThe [API](reference/index.md).\n")
    write(book.english / "reference" / "index.md", "# API\n")
    write(book.english / "reference" / "functional.md", "# functional\n")
    chapter = book.english / "chapter-3" / "chapter.py"
    chapter_units = {u.text for u in translate.units(book, chapter)}
    write_catalog(
        book.docs / "vi" / "chapter-3" / "chapter.po",
        {k: v for k, v in VIETNAMESE.items() if k in chapter_units},
    )
    write_catalog(
        book.docs / "vi" / "index.po",
        {k: VIETNAMESE[k] for k in ("# Home", "The [API](reference/index.md).")},
    )
    return book


def edit(path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def status(book: Build, language: str = "vi") -> translate.Status:
    """The language's status in a new build: the files as they are now."""
    return translate.status(Build(book.root), language)


def update(book: Build, language: str = "vi") -> list:
    """``translations --update`` in a new build: the catalogs it rewrote."""
    build = Build(book.root)
    return translate.update(build, translate.status(build, language))


def composed(book: Build, language: str = "vi") -> nbformat.NotebookNode:
    build = Build(book.root)  # the files as they are now
    return nbformat.read(compose.notebook_path(build, "chapter-3/chapter.py", language), 4)


# --------------------------------------------------------------------------- units


def test_prose_is_cut_into_paragraphs_fences_and_formulas_whole():
    markdown = (
        "# Title\n\nOne\nparagraph.\n\n```python\nx = 1\n\ny = 2\n```\n\n"
        "$$\na\n\nb\n$$\n\n<div>\n\n- a\n- b"
    )
    assert translate.paragraphs(markdown) == [
        "# Title",
        "One\nparagraph.",
        "```python\nx = 1\n\ny = 2\n```",
        "$$\na\n\nb\n$$",
        "<div>",
        "- a\n- b",
    ]
    assert [translate.translatable(p) for p in translate.paragraphs(markdown)] == [
        True, True, True, False, False, True
    ]  # fmt: skip


def test_a_chapters_units_are_its_paragraphs_and_figure_texts_not_its_code(book):
    units = translate.units(book, book.english / "chapter-3" / "chapter.py")
    assert [u.text for u in units] == [
        k for k in VIETNAMESE if k not in ("# Home", "The [API](reference/index.md).")
    ]
    assert [u.note for u in units][-2:] == ["figure alt", "figure caption"]
    assert not any("print(" in u.text for u in units)


# --------------------------------------------------------------------------- staleness


def test_editing_one_english_paragraph_makes_only_that_paragraph_behind(book):
    english = book.english / "chapter-3" / "chapter.py"
    edit(english, "# The figure:", "# The figure, drawn:")
    found = translate.load(book, book.docs / "vi" / "chapter-3" / "chapter.po")
    merged = translate.merged(book, found, english)
    behind = [e for e in merged if not e.obsolete and not translate.current(e)]
    assert [(e.msgid, e.msgstr, e.previous_msgid, e.fuzzy) for e in behind] == [
        ("The figure, drawn:", "Hình vẽ:", "The figure:", True)
    ]
    assert status(book).behind == {"chapter-3/chapter.py": 1, "index.md": 0}


def test_a_new_paragraph_is_untranslated_and_a_removed_one_kept_as_obsolete(book):
    english = book.english / "chapter-3" / "chapter.py"
    edit(english, "# A formula $x^2$ inside.", "# Completely different words here.")
    found = translate.load(book, book.docs / "vi" / "chapter-3" / "chapter.po")
    merged = translate.merged(book, found, english)
    new = merged.find("Completely different words here.")
    assert new is not None and new.msgstr == "" and not translate.current(new)
    (obsolete,) = merged.obsolete_entries()
    assert obsolete.msgid == "A formula $x^2$ inside."
    assert obsolete.msgstr == "Một công thức $x^2$ ở giữa."
    # The English changes back: the old translation is current again.
    edit(english, "# Completely different words here.", "# A formula $x^2$ inside.")
    again = translate.merged(Build(book.root), merged, english)
    assert translate.current(again.find("A formula $x^2$ inside."))


def test_update_writes_the_merge_for_translators_and_then_changes_nothing(book):
    update(book)  # the fixture's catalogs, as update writes them
    assert update(book) == []
    edit(book.english / "chapter-3" / "chapter.py", "# The figure:", "# The figure, drawn:")
    changed = update(book)
    assert changed == [book.docs / "vi" / "chapter-3" / "chapter.po"]
    text = changed[0].read_text(encoding="utf-8")
    assert '#, fuzzy\n#| msgid "The figure:"\nmsgid "The figure, drawn:"\nmsgstr "Hình vẽ:"' in text
    assert "#: chapter-3/chapter.py:" in text and "#. figure caption" in text
    assert update(book) == []
    # The translator updates the text and removes the mark: the paragraph is current.
    po = polib.pofile(str(changed[0]))
    entry = po.find("The figure, drawn:")
    entry.msgstr, entry.flags, entry.previous_msgid = "Hình vẽ đây:", [], None
    po.save()
    assert status(book).behind["chapter-3/chapter.py"] == 0


# --------------------------------------------------------------------------- pages


def test_the_page_is_the_english_execution_with_the_translated_prose(book):
    nb = composed(book)
    markdown = [c.source for c in nb.cells if c.cell_type == "markdown"]
    assert markdown[0].startswith("# Một chương\n\nMỗi trọng số là 0.5000.")
    assert "$$\na = b\n$$" in markdown[0]  # nothing to translate: the English's
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code[0].source == 'print(f"{0.5:.4f}")' and code[0].outputs[0]["text"] == "0.5000\n"
    figure = code[1].outputs[0]["data"]["text/html"]
    assert (
        'alt="Một hình vuông."' in figure
        and "<figcaption>Hình 1. Một hình vuông.</figcaption>" in figure
    )
    assert code[2].source == 'print("chỉ tiếng Việt")'  # its own language's cell
    assert "<!-- book:behind -->" not in "".join(markdown)


def test_a_behind_paragraph_shows_its_last_translation_marked(book):
    english = book.english / "chapter-3" / "chapter.py"
    edit(english, "# The figure:", "# The figure, drawn:")
    edit(english, "# # A chapter", "# # A chapter\n#\n# Brand new.")
    markdown = [c.source for c in composed(book).cells if c.cell_type == "markdown"]
    assert markdown[1] == "<!-- book:behind -->\n\nHình vẽ:"
    assert markdown[0].startswith("# Một chương\n\n<!-- book:behind -->\n\nBrand new.\n\nMỗi")


def test_the_english_page_shows_no_other_languages_cells(book):
    code = [c.source for c in composed(book, "en").cells if c.cell_type == "code"]
    assert not any("tiếng Việt" in source for source in code) and len(code) == 2


def test_a_markdown_page_is_translated_and_links_to_the_english_reference(book):
    markdown = compose.markdown(book, "index.md", "vi")
    assert markdown == "# Trang chủ\n\n[API](reference/index.md).\n"
    linked, unknown = links.translated_markdown(
        book.english,
        "See [the API](reference/index.md), "
        "[`causal_mask`][attention_mechanisms.functional.causal_mask]"
        " and [`x`][attention_mechanisms.nowhere.x].",
        "index.md",
    )
    assert linked == (
        "See [the API](../en/reference/), [`causal_mask`]"
        "(../en/reference/functional/#attention_mechanisms.functional.causal_mask)"
        " and [`x`][attention_mechanisms.nowhere.x]."
    )
    assert unknown == [
        "index.md refers to attention_mechanisms.nowhere.x, which the API reference has no page for"
    ]


# --------------------------------------------------------------------------- checks


def test_a_current_translation_keeps_the_english_formulas(book):
    path = book.docs / "vi" / "chapter-3" / "chapter.po"
    po = polib.pofile(str(path))
    po.find("A formula $x^2$ inside.").msgstr = "Một công thức $x^3$ ở giữa."
    po.save()
    (problem,) = status(book).problems
    assert "has the formulas ['$x^3$'], the English ['$x^2$']" in problem
    po.find("A formula $x^2$ inside.").flags.append("fuzzy")  # behind: not held to it
    po.save()
    assert status(book).problems == []


@pytest.mark.parametrize(
    ("english", "translated", "same"),
    [
        ("$768 = 2{,}360{,}064$", "$768 = 2{.}360{.}064$", True),  # vi and id group with dots
        ("$768 = 2{,}360{,}064$", r"$768 = 2\,360\,064$", True),  # a thin space
        ("$768 = 2{,}360{,}064$", "$768 = 2360064$", True),
        ("$768 = 2{,}360{,}064$", "$768 = 2{.}360{.}065$", False),  # another number
        ("$768 = 2{,}360{,}064$", "$768 = 2{.}36{.}064$", False),  # a group is three digits
        ("$f(a{,}b)$", "$f(ab)$", False),  # a comma that groups no digits
    ],
)
def test_a_formula_may_group_digits_as_its_language_does(book, english, translated, same):
    edit(book.english / "chapter-3" / "chapter.py", "$x^2$", english)
    path = book.docs / "vi" / "chapter-3" / "chapter.po"
    po = polib.pofile(str(path))
    entry = po.find("A formula $x^2$ inside.")
    entry.msgid = f"A formula {english} inside."
    entry.msgstr = f"Một công thức {translated} ở giữa."
    po.save()
    assert (status(book).problems == []) is same


def test_translated_prose_may_quote_only_numbers_its_page_prints(book):
    execute.execute(book, book.english / "chapter-3" / "chapter.py")
    assert translate.number_problems(book, "vi", "chapter-3/chapter.py") == []
    path = book.docs / "vi" / "chapter-3" / "chapter.po"
    po = polib.pofile(str(path))
    entry = po.find("The figure:")
    entry.msgstr = "Hình vẽ, với 0.2500:"
    po.save()
    (problem,) = translate.number_problems(Build(book.root), "vi", "chapter-3/chapter.py")
    assert "quotes 0.2500, which no output of the chapter prints" in problem


def test_a_new_catalog_has_the_header_that_po_tools_need(book):
    (book.docs / "vi" / "index.po").unlink()
    update(book)
    written = polib.pofile(str(book.docs / "vi" / "index.po"))
    assert written.metadata["Language"] == "vi"
    assert written.metadata["Content-Type"] == "text/plain; charset=UTF-8"
    assert written.header.startswith("The vi translation of docs/en/index.md")


def test_missing_and_extra_catalogs_are_reported(book):
    vietnamese = book.docs / "vi"
    (vietnamese / "index.po").rename(vietnamese / "other.po")
    found = status(book)
    assert (found.missing, found.extra, found.failed) == (["index.md"], ["other.po"], True)
    (vietnamese / "other.po").write_text('msgid "x"\nmsgstr', encoding="utf-8")
    (vietnamese / "other.po").rename(vietnamese / "index.po")
    with pytest.raises(BookError, match=r"docs/vi/index\.po: not a PO file"):
        translate.load(book, vietnamese / "index.po")


# --------------------------------------------------------------------------- the book


@pytest.mark.parametrize("language", TRANSLATIONS)
def test_every_language_has_a_current_catalog_for_every_page(language):
    found = translate.status(Build(ROOT), language)
    assert (found.missing, found.extra, found.problems) == ([], [], [])
    assert sum(found.behind.values()) == 0, found.behind


@pytest.mark.parametrize("language", TRANSLATIONS)
def test_a_translation_holds_prose_only(language):
    build = Build(ROOT)
    folder = build.docs / language
    assert sorted({path.suffix for path in folder.rglob("*") if path.is_file()}) == [".po"]
    code = {
        line.strip()
        for page in build.chapters()
        for cell in build.chapter(page).code
        for line in cell.body
        if len(line.strip()) > 30
    }
    for path in folder.rglob("*.po"):
        for entry in polib.pofile(str(path)):
            assert not any(line.strip() in code for line in entry.msgstr.splitlines()), entry.msgid


def _config(name: str) -> dict:
    return yaml.load((ROOT / name).read_text(encoding="utf-8"), Loader=yaml.BaseLoader)


def _nav_files(nav) -> list[str]:
    if isinstance(nav, str):
        return [nav] if nav.endswith((".md", ".py")) else []
    if isinstance(nav, dict):
        return [f for value in nav.values() for f in _nav_files(value)]
    return [f for item in nav for f in _nav_files(item)]


def test_every_language_has_a_config_a_glossary_and_a_place_in_the_switcher():
    english = _config("mkdocs.yml")
    switcher = [entry["lang"] for entry in english["extra"]["languages"]]
    configs = [path.name.split(".")[1] for path in ROOT.glob("mkdocs.*.yml")]
    assert sorted(switcher) == sorted(["en", *configs]) == sorted(["en", *TRANSLATIONS])
    pages = [f for f in _nav_files(english["nav"]) if not f.startswith("reference/")]
    for language in TRANSLATIONS:
        config = _config(f"mkdocs.{language}.yml")
        # Served from the folder beside English's, as book.publish builds it.
        assert config["site_url"] == english["site_url"].removesuffix("en/") + f"{language}/"
        assert (config["docs_dir"], config["site_dir"]) == (f"docs/{language}", f"site/{language}")
        assert config["theme"]["language"] == language
        assert _nav_files(config["nav"]) == pages, "the navigation lists the English pages"
        assert set(config["extra"]["translation"]) == {
            "source", "behind", "stale", "english", "reference", "permalink", "download",
            "solution", "whole_class",
        }  # fmt: skip
        assert "{name}" in config["extra"]["translation"]["source"]
        glossary = ROOT / "translations" / f"{language}.md"
        assert glossary.read_text(encoding="utf-8").count("\n|") >= 20


def test_the_translations_command_lists_each_language(capsys):
    assert cli.main(["translations"]) == 0
    out = capsys.readouterr().out
    pages = len(Build(ROOT).pages())
    for language in TRANSLATIONS:
        assert f"{language}: {pages} of {pages} pages" in out
        assert "texts, 0 behind the English, 0 problem(s)" in out


def test_the_site_root_sends_readers_to_english_and_keeps_old_addresses(tmp_path):
    book = make_checkout(tmp_path / "book", languages=("en", "vi", "zh", "id"))
    site = book.site
    english = site / "en"
    (english / "chapter-3" / "pitfalls").mkdir(parents=True)
    (english / "index.html").write_text("<html><head></head><body>home</body></html>")
    (english / "chapter-3" / "pitfalls" / "index.html").write_text("pitfalls")
    (english / "404.html").write_text('<html lang="en"><head><title>404</title></head></html>')
    publish.write_root(book)
    assert 'content="0; url=en/"' in (site / "index.html").read_text()
    old = (site / "chapter-3" / "pitfalls" / "index.html").read_text()
    assert 'url=../../en/chapter-3/pitfalls/"' in old
    assert 'location.replace("../../en/chapter-3/pitfalls/" + location.hash)' in old
    page_404 = (site / "404.html").read_text()
    assert page_404.startswith('<html lang="en"><head>\n<script>')
    # The site's root on its host (site_url's path); the translations, as the switcher has them.
    assert '"/book/"' in page_404 and '["vi", "zh", "id"]' in page_404
    assert page_404.endswith("<title>404</title></head></html>")
    assert Build(ROOT).site_path == "/attention-mechanisms/"  # the real book's


def test_a_languages_pages_are_composed_for_the_build(book):
    sources, warnings = compose.translated(book, "vi")
    assert warnings == []
    chapter, home = sources
    assert (chapter.uri, home.uri) == ("chapter-3/chapter.py", "index.md")
    nb = nbformat.read(chapter.notebook, as_version=4)
    assert nb.cells[0].source.startswith("# Một chương")
    assert home.markdown == "# Trang chủ\n\n[API](../en/reference/).\n"
    # A page without a catalog is shown in English, with a warning; a stray catalog fails.
    (book.docs / "vi" / "index.po").rename(book.docs / "vi" / "stray.po")
    with pytest.raises(BookError, match=r"docs/vi/stray\.po translates no English page"):
        compose.translated(Build(book.root), "vi")
    (book.docs / "vi" / "stray.po").unlink()
    sources, warnings = compose.translated(Build(book.root), "vi")
    assert warnings == ["docs/vi has no catalog for docs/en/index.md"]
    assert sources[1].markdown.startswith("<!-- book:behind -->\n\n# Home")
