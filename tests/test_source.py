"""book.source: the one reader and writer of chapter sources."""

from __future__ import annotations

import textwrap
from pathlib import Path

import jupytext
import pytest

from book import BookError, source
from book.build import TOOLING, Build

BOOK = Build(TOOLING)

SOURCE = textwrap.dedent(
    """\
    # %% [markdown]
    # # Title with 0.12345 in prose
    #
    # A second paragraph.
    # %%
    print(x)
    # Out:
    # tensor([0.1385, 0.2379])
    #
    #   indented

    # %% tags=["solution"] raises="ValueError: d_out must be"
    y = 1
    """
)


def parse(text: str = SOURCE) -> source.Chapter:
    return source.parse(text, Path("docs/en/chapter.py"), "docs/en/chapter.py")


def test_cells_keep_their_lines_kinds_metadata_and_stated_outputs():
    chapter = parse()
    assert chapter.header == ()
    assert [(c.line, c.kind) for c in chapter.cells] == [(1, "markdown"), (5, "code"), (12, "code")]
    assert chapter.cells[1].expected == ("tensor([0.1385, 0.2379])", "", "  indented")
    assert chapter.cells[1].body == ("print(x)",)
    assert chapter.cells[2].metadata == {
        "tags": ["solution"],
        "raises": "ValueError: d_out must be",
    }
    assert chapter.cells[0].source == "# Title with 0.12345 in prose\n\nA second paragraph."


def test_writing_back_changes_nothing():
    assert parse().text() == SOURCE


def test_the_notebook_is_what_jupytext_makes_without_the_stated_outputs(tmp_path):
    path = tmp_path / "chapter.py"
    path.write_text(SOURCE, encoding="utf-8")
    chapter = source.read(path, "chapter.py")
    ours = chapter.notebook()
    theirs = jupytext.reads(chapter.text(expected=False), fmt="py:percent")
    assert "# Out:" not in chapter.text(expected=False)
    assert [(c.cell_type, c.source) for c in ours.cells] == [
        (c.cell_type, c.source) for c in theirs.cells
    ]
    # Jupytext's own bookkeeping (lines_to_next_cell, ...) stays out of the download.
    assert [dict(c.metadata) for c in ours.cells] == [{}, {}, parse().cells[2].metadata]


@pytest.mark.parametrize("chapter", BOOK.chapters(), ids=lambda p: p.name)
def test_every_chapter_reads_as_jupytext_reads_it(chapter):
    ours = BOOK.chapter(chapter).notebook()
    theirs = jupytext.reads(BOOK.chapter(chapter).text(expected=False), fmt="py:percent")
    assert [(c.cell_type, c.source) for c in ours.cells] == [
        (c.cell_type, c.source) for c in theirs.cells
    ]
    assert BOOK.chapter(chapter).text() == chapter.read_text(encoding="utf-8")


def test_an_expected_block_must_end_its_cell():
    with pytest.raises(
        BookError, match=r"^docs/en/chapter\.py, line 4: 'print\(2\)' follows '# Out:'"
    ):
        parse("# %%\nprint(1)\n# Out:\nprint(2)\n")


def test_code_before_the_first_marker_is_refused():
    with pytest.raises(
        BookError, match=r"^docs/en/chapter\.py, line 1: a chapter starts with a '# %%' marker"
    ):
        parse("import torch\n# %%\nprint(1)\n").notebook()
