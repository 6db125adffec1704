"""What a reader downloads from a chapter page: a plain notebook that runs on its own."""

from __future__ import annotations

import ast
import copy
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from book import expectations
from book.build import TOOLING, Build
from book.execute import executed

BOOK = Build(TOOLING)
CHAPTERS = BOOK.chapters()
# What a chapter may import: the package, what it needs, and the standard library.
ALLOWED = {"attention_mechanisms", "torch", "matplotlib", *sys.stdlib_module_names}


def downloaded(chapter: Path) -> nbformat.NotebookNode:
    """The notebook the page offers: the cached execution, which the build copies next to
    the page (tests/browser fetches that copy through the page's download link too). The
    real chapters share the repository's cache with the site build, so each executes once."""
    return nbformat.read(executed(BOOK, chapter), as_version=4)


def imported(nb: nbformat.NotebookNode) -> set[str]:
    names = set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, ast.Import):
                names |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_every_download_is_a_plain_notebook(chapter):
    nb = downloaded(chapter)
    nbformat.validate(nb)
    assert nb.nbformat == 4
    assert [cell.source[:40] for cell in nb.cells if cell.cell_type == "raw"] == []
    assert [cell for cell in nb.cells if "include" in cell.metadata] == []  # filled in
    assert imported(nb) - ALLOWED == set(), "imports beyond the package and what it needs"


def test_a_download_runs_top_to_bottom_in_a_fresh_kernel(tmp_path):
    """The multi-head chapter (its classes come from include cells), outputs cleared, run
    in a new kernel from an empty directory, prints what the page shows."""
    page = downloaded(BOOK.english / "chapter-3" / "05-multi-head-attention.py")
    fresh = copy.deepcopy(page)
    for cell in fresh.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    # Only cells tagged raises-exception may raise, as in Jupyter.
    NotebookClient(
        fresh, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    compared = 0
    for before, after in zip(page.cells, fresh.cells, strict=True):
        if before.cell_type != "code" or "nondeterministic" in before.metadata:
            continue
        assert expectations.output_text(after) == expectations.output_text(before)
        compared += bool(before.outputs)
    assert compared >= 10
