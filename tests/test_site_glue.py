"""The site glue (tools/book): notebook pages as Material markup, math typeset at build time."""

from __future__ import annotations

import os
import posixpath
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from checkouts import make_checkout, write_chapter
from mkdocs_jupyter.convert import nb2html

from book import BookError, execute, hooks, notebook_html, typeset
from book.build import TOOLING, Build

ROOT = TOOLING
REAL = Build(ROOT)


@pytest.fixture
def book(tmp_path) -> Build:
    """A checkout of its own for each test: its chapters and its caches."""
    return make_checkout(tmp_path / "book")


@pytest.fixture(scope="module")
def mathjax():
    folder = REAL.node_modules / "mathjax"
    if not (folder / "package.json").exists():
        pytest.fail("node_modules/mathjax is missing: run `npm ci` (nox does)", pytrace=False)
    process = typeset.MathJax(folder)
    yield process
    process.close()


CHAPTER = """
# %% [markdown]
# # A chapter
#
# Scores are $\\omega_{ij} = q^{(i)} \\cdot k^{(j)}$, and see
# [`causal_mask`][attention_mechanisms.functional.causal_mask] or [the next page](next.py).
#
# ## Second way: $-\\infty$ before the softmax

# %%
print("a" * 3)

# %% tags=["lang-vi"]
print("ba chữ a")

# %% [markdown]
# Exercise: print 42.

# %% tags=["solution"]
print(6 * 7)

# %% [markdown] tags=["solution"]
# Because $6 \\times 7 = 42$.

# %% tags=["raises-exception"] raises="ZeroDivisionError: division by zero"
1 / 0
"""


@pytest.fixture
def rendered(book) -> str:
    """The chapter as mkdocs-jupyter renders it for this site (its real template)."""
    path, _ = execute.execute(book, write_chapter(book.english, CHAPTER))
    return nb2html(str(path), no_prompt=True, custom_mathjax_url="")


def simplified(html: str) -> BeautifulSoup:
    return BeautifulSoup(
        str(notebook_html.simplify(BeautifulSoup(html, "html.parser"))), "html.parser"
    )


def test_a_notebook_page_becomes_material_markup(rendered):
    soup = simplified(rendered)
    # The template's CSS, scripts, prompts, duplicated sources and tag toolbars are gone.
    assert soup.find_all(["style", "script", "clipboard-copy"]) == []
    assert soup.select(".clipboard-copy-txt, .celltoolbar, .jp-InputPrompt, .jp-Cell") == []
    # Markdown cells are plain HTML; headings keep their anchors as Material's permalinks.
    assert soup.select_one("h1").get("id") == "a-chapter"
    assert [a["href"] for a in soup.select("h1 > a.headerlink, h2 > a.headerlink")] == [
        "#a-chapter",
        "#second-way-infty-before-the-softmax",
    ]
    # Code cells are Material code blocks (its colours and copy button), then their outputs.
    blocks = soup.select(".nb-cell > div.highlight > pre > code")
    assert blocks[0].get_text() == 'print("a" * 3)\n'
    # Names and spaces, drawn in the code's own colour, lose their spans; the rest keep them.
    assert blocks[0].select("span.n, span.w") == [] and blocks[0].select("span.nb, span.s2")
    outputs = soup.select(".nb-cell > .nb-output")
    assert outputs[0].get_text().strip() == "aaa"
    assert all(output.has_attr("data-search-exclude") for output in outputs)
    # The raised error is shown, as its output.
    assert "ZeroDivisionError" in outputs[-1].get_text()
    # A cell of one language's page says which (book.source tags it).
    assert [cell["data-lang"] for cell in soup.select(".nb-cell[data-lang]")] == ["vi"]
    assert "ba chữ a" in soup.select_one(".nb-cell[data-lang]").get_text()


CHANGES = """
# %%
from torch import nn

from attention_mechanisms.checks import check_dropout, check_flag, check_groups, check_heads
from attention_mechanisms.checks import check_size, check_tokens
from attention_mechanisms.positions import append_to_cache, position_hide_mask

MARKER

# %%
print(GroupedQueryAttention(4, 8, 0.0, num_heads=4, num_kv_groups=2).group_size)
"""
MARKER = (  # one line in the chapter
    '# %% include="attention_mechanisms.grouped_query.GroupedQueryAttention" '
    'diff_from="attention_mechanisms.multihead.MultiHeadAttention"'
)


def test_a_class_shown_as_its_changes_shows_the_diff_then_folds_the_whole_class(book):
    # The package's own classes, as the real book includes them.
    shutil.copytree(
        REAL.package, book.package, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__")
    )
    chapter = write_chapter(book.english, CHANGES.replace("MARKER", MARKER), "changes.py")
    path, _ = execute.execute(book, chapter)
    soup = simplified(nb2html(str(path), no_prompt=True, custom_mathjax_url=""))
    (group,) = soup.select(".nb-cell > .book-class-changes")
    diff = group.select_one("div.language-diff.highlight > pre > code").get_text()
    lines = diff.splitlines()
    assert lines[:2] == ["--- MultiHeadAttention", "+++ GroupedQueryAttention"]
    assert "-class MultiHeadAttention(nn.Module):" in lines
    assert "+class GroupedQueryAttention(nn.Module):" in lines
    assert any(line.startswith("+") and "repeat_interleave" in line for line in lines)
    assert "Parameters are created" not in diff  # the chapter's form: no docstrings
    assert group.select(".gd") and group.select(".gi")  # Material colours both kinds
    fold = group.select_one("details.book-whole-class")
    assert fold.summary.get_text() == "The whole class"
    whole = fold.select_one("div.highlight > pre > code").get_text()
    assert whole.startswith("class GroupedQueryAttention(nn.Module):")
    assert "def reset_cache(self):" in whole
    # The diff is not also left among the outputs; the next cell ran with the class defined.
    assert [o.get_text().strip() for o in soup.select(".nb-output")] == ["2"]


def test_diff_from_needs_an_include(book):
    chapter = write_chapter(
        book.english,
        '# %% diff_from="attention_mechanisms.multihead.MultiHeadAttention"\nx = 1\n',
        "bad.py",
    )
    with pytest.raises(BookError, match=r"line 1: diff_from= shows an included class"):
        execute.execute(book, chapter)


def test_solutions_are_folded_at_render_time(rendered):
    soup = simplified(rendered)
    (details,) = soup.select("details")
    assert details.summary.get_text() == "Solution"
    assert details.select_one("pre code").get_text() == "print(6 * 7)\n"
    assert "Because" in details.get_text()
    assert "Exercise" not in details.get_text()
    assert "ZeroDivisionError" not in details.get_text()  # the run of solution cells ended


@pytest.mark.parametrize(
    ("html", "message"),
    [
        ("<p>not a notebook</p>", r"no div\.jupyter-wrapper"),
        (
            '<div class="jupyter-wrapper"><div class="jp-Notebook"></div></div><div>more</div>',
            r"unexpected <div> outside the notebook",
        ),
        (
            '<div class="jupyter-wrapper"><div class="jp-Notebook"></div></div>text',
            r"unexpected text outside the notebook: 'text'",
        ),
    ],
)
def test_html_of_another_shape_is_refused(html, message):
    """A template change must fail the build, not lose part of a page silently."""
    with pytest.raises(notebook_html.NotebookHTMLError, match=message):
        notebook_html.simplify(BeautifulSoup(html, "html.parser"))


@pytest.mark.parametrize(
    ("html", "found"),
    [
        (r"<p>inline \(x^2\) and $y$</p>", [("x^2", False), ("y", False)]),
        (r'<div class="arithmatex">\[a &lt; b\]</div>', [("a < b", True)]),
        ("<p>$$\\sum_k e^{x_k}$$ then $z$</p>", [("\\sum_k e^{x_k}", True), ("z", False)]),
        ("<p>costs $5 and $10 in all</p>", []),  # currency, not math
        ("<pre>$x$</pre><code>\\(y\\)</code><script>'$z$'</script>", []),
        ("<p>$a</p><p>b$</p>", []),  # never across elements
        ("<p>$a$$b$</p>", [("a", False), ("b", False)]),
        (r"<p>\$5 or \$x\$</p>", []),  # escaped dollars
    ],
)
def test_find_math(html, found):
    assert [(f.tex, f.display) for f in typeset.find_math(html)] == found


def test_typeset_replaces_every_formula_and_defines_the_glyphs_once(mathjax):
    page = r"<h2>Second way: $-\infty$</h2><p>and \(-\infty\) again, <code>$x$</code></p>"
    toc_title = r"Second way: $-\infty$"
    html, title = typeset.typeset([page, toc_title], mathjax)
    assert html.startswith('<svg class="math-glyphs"') and html.count("<defs>") == 1
    assert html.count("<mjx-container") == 2 and "<code>$x$</code>" in html
    assert "$" not in title and title.count("<mjx-container") == 1
    # What only MathJax's own scripts read is left out: the page loads none of them.
    assert "data-mml-node" not in html + title and "data-c=" not in html + title
    # The MathML copy, read by screen readers, is text, not TeX: a minus sign and infinity.
    assert "<mo>\u2212</mo><mi" in title and "\\infty" not in title


def test_the_search_index_gets_a_line_of_text_with_sub_and_superscripts(mathjax):
    (html,) = typeset.typeset([r"<p>$\alpha_{ij} = e^{-\infty} / \sqrt{d_k}$</p>"], mathjax)
    soup = BeautifulSoup(html, "html.parser")
    # Material's search skips what is marked data-search-exclude and keeps <sub> and <sup>.
    assert soup.find("mjx-assistive-mml").has_attr("data-search-exclude")
    search = soup.find("span", class_="math-search")
    assert search.has_attr("hidden")
    assert search.decode_contents() == (
        "\u03b1<sub>ij</sub>=e<sup>\u2212\u221e</sup>/\u221a(d<sub>k</sub>)"
    )


def test_a_page_without_math_is_left_alone(mathjax):
    assert typeset.typeset(["<p>no math</p>"], mathjax) == ["<p>no math</p>"]


@pytest.mark.parametrize(
    ("tex", "message"),
    [
        (r"\frac{", r"Missing close brace in \$\\frac\{\$"),
        (r"\foo x", r"Undefined control sequence \\foo in \$\\foo x\$"),
    ],
)
def test_a_tex_error_names_the_formula(mathjax, tex, message):
    with pytest.raises(typeset.TypesetError, match=message):
        typeset.typeset([f"<p>${tex}$</p>"], mathjax)


def test_macros_from_extensions_are_typeset(mathjax):
    """Every extension is loaded up front (none can load on demand here)."""
    (html,) = typeset.typeset([r"<p>$\boldsymbol{x} \cancel{y}$</p>"], mathjax)
    assert html.count("<mjx-container") == 1


class FakeFile:
    def __init__(self, src_uri: str, url: str = "") -> None:
        self.src_uri, self.url = src_uri, url

    def url_relative_to(self, other: FakeFile) -> str:
        return posixpath.relpath(self.url, other.url) + "/"  # directory URLs, as MkDocs


class FakeFiles:
    def __init__(self, pages: dict[str, str]) -> None:
        self.files = [FakeFile(uri, url) for uri, url in pages.items()]

    def documentation_pages(self) -> list[FakeFile]:
        return self.files


class FakePage:
    def __init__(self, src_uri: str, url: str) -> None:
        self.file = FakeFile(src_uri, url)
        self.toc = []


def presenting(monkeypatch, book: Build, mathjax: typeset.MathJax) -> None:
    """The hook's state in one English build of ``book`` (what ``on_config`` makes), with the
    MathJax process of this module."""
    presenter = hooks.Presenter(book, book.store("pages/en"))
    presenter.mathjax = mathjax
    monkeypatch.setattr(hooks, "_state", hooks._State(book, "en", presenter))


def test_the_hook_presents_a_chapter_page(book, rendered, mathjax, monkeypatch):
    config = {
        "docs_dir": str(book.english),
        "extra": {"translation": {"source": "Full source: {name}."}},
    }
    presenting(monkeypatch, book, mathjax)
    page = FakePage("chapter-3/chapter.py", "chapter-3/chapter/")
    files = FakeFiles({"chapter-3/next.py": "chapter-3/next/", page.file.src_uri: page.file.url})
    html = hooks.on_page_content(rendered, page=page, config=config, files=files)
    assert '<autoref identifier="attention_mechanisms.functional.causal_mask">' in html
    assert 'href="../next/"' in html
    assert "<mjx-container" in html and "$" not in BeautifulSoup(html, "html.parser").p.text

    # A second build reads the presented page from the cache: it typesets nothing.
    def no_typesetting(math):
        raise AssertionError(f"typeset again: {math}")

    monkeypatch.setattr(mathjax, "render", no_typesetting)
    presenting(monkeypatch, Build(book.root), mathjax)
    again = hooks.on_page_content(rendered, page=page, config=config, files=files)
    assert again == html


def test_the_tooling_imports_the_ordinary_way(tmp_path):
    """No sys.path tricks: the installed package is found from any directory."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    code = "import book.cli, book.hooks; print(book.build.TOOLING)"
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert Path(result.stdout.strip()) == ROOT
    changes_path = re.compile(r"sys\.path\.(insert|append|extend)|sys\.path(\[[^]]*\])?\s*\+?=")
    sources = (ROOT / "tools" / "book").glob("*.py")
    assert [path.name for path in sources if changes_path.search(path.read_text("utf-8"))] == []
