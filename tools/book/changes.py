"""A class as the lines that change from another: a diff built from the package, never copied.

A chapter's include cell (`book.include`) may also name the class it grows from, in a
marker line that reads (on one line)::

    # %% include="attention_mechanisms.grouped_query.GroupedQueryAttention"
         diff_from="attention_mechanisms.multihead.MultiHeadAttention"

The cell still defines the whole class, so the notebook runs it. After the chapter executes,
the cell gets one more output: the unified diff of the two definitions as the chapter shows
them (`book.include.book_source`: no docstrings, no annotations), highlighted as a Material
``diff`` block. The page shows that diff first and folds the whole class under it
(`book.notebook_html`). The diff is in the executed notebook, which is executed again
whenever the package changes, so it is never older than the code.
"""

from __future__ import annotations

import difflib

import nbformat
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import DiffLexer

from book import include

TAG = "diff-from:"  # the tag that `book.executor` gives a cell marked diff_from="..."
CONTEXT = 2  # unchanged lines shown around each change


def diff_text(base: str, name: str) -> str:
    """The unified diff from the definition ``base`` to ``name``, both fully qualified."""
    old = include.book_source(base).splitlines()
    new = include.book_source(name).splitlines()
    short = (base.rpartition(".")[2], name.rpartition(".")[2])
    lines = difflib.unified_diff(old, new, *short, n=CONTEXT, lineterm="")
    return "\n".join(lines)


def diff_html(text: str) -> str:
    """``text`` as Material's highlighted code block, deletions and insertions marked."""
    code = highlight(text, DiffLexer(), HtmlFormatter(nowrap=True))
    return (
        '<div class="language-diff highlight book-changes"><pre><span></span>'
        f"<code>{code}</code></pre></div>"
    )


def add_outputs(nb: nbformat.NotebookNode) -> None:
    """Give each executed cell tagged ``diff-from:<base>`` its diff as a last output."""
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        base = next((tag.removeprefix(TAG) for tag in tags if tag.startswith(TAG)), None)
        if base is None:
            continue
        name = next(tag.removeprefix("include:") for tag in tags if tag.startswith("include:"))
        html = diff_html(diff_text(base, name))
        cell.outputs.append(nbformat.v4.new_output("display_data", data={"text/html": html}))
