"""attention-check on what learners really type: the seed notebooks, and chapter 3 typed in.

- Each seed transcript in ``../shared/seeds`` is a notebook fixture of its ``In [n]:`` cells
  (`seeds.code_cells`), and stays so while the seeds are at hand.
- Chapter 3's pages typed into one notebook, every code cell in order (the step-by-step cells
  too, and each class as the page shows it), must run and get no FAIL: the book's own code
  is never wrong.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest
import seeds
from checking import failures, in_this_process
from conftest import say

from attention_mechanisms.check.cli import check_file
from book import include
from book.build import TOOLING, Build

CHAPTER = ("01-why-attention", "02-simple-self-attention", "03-trainable-self-attention",
           "04-causal-attention", "05-multi-head-attention")  # fmt: skip
# The classes the typed notebook ends with as its own: a later page imports SelfAttention_v2 and
# CausalAttention from the package, as the chapter does, and those are not the learner's.
TYPED_ROLES = {"SelfAttention_v1", "MultiHeadAttentionWrapper", "MultiHeadAttention"}


def test_the_transcripts_give_the_cells_as_typed():
    transcript = (
        "In [1]:\nimport torch\n\nx = torch.ones(2)\n\nprint(x)\n\ntensor([1., 1.])\n\nNotes.\n\n"
        "In [None]:\nclass A:\n    def f(self):\n        a = 1\n\n        return a\n\n"
        "Label :  tensor([2.])\n\n### heading\n\nIn [3]:\nmissing.shape(-1)\n\n"
        "TypeError: 'torch.Size' object is not callable\n"
    )
    assert seeds.code_cells(transcript) == [
        "import torch\n\nx = torch.ones(2)\n\nprint(x)\n",
        "class A:\n    def f(self):\n        a = 1\n\n        return a\n",
        "missing.shape(-1)\n",
    ]


@pytest.mark.skipif(not seeds.SEEDS.is_dir(), reason="no ../shared/seeds beside the clone")
@pytest.mark.parametrize("seed", sorted(p.name for p in seeds.SEEDS.glob("*.txt")) or ["none"])
def test_each_seed_is_its_fixture(seed):
    text = (seeds.SEEDS / seed).read_text(encoding="utf-8")
    fixture = seeds.FIXTURES / seed.replace(".txt", ".ipynb")
    assert fixture.read_text(encoding="utf-8") == seeds.notebook(seeds.code_cells(text))


def chapter_typed_in() -> list[str]:
    """Every code cell of chapter 3's pages, in order, as the pages show them."""
    book, cells = Build(TOOLING), []
    for page in CHAPTER:
        for cell in book.chapter(book.english / "chapter-3" / f"{page}.py").code:
            qualified = cell.metadata.get("include")
            cells.append(include.book_source(qualified, book.package) if qualified else cell.source)
    return cells


def test_chapter_3_typed_into_one_notebook_gets_no_fail(tmp_path):
    notebook = tmp_path / "chapter-3.ipynb"
    notebook.write_text(seeds.notebook(chapter_typed_in()), encoding="utf-8")
    with in_this_process():
        report, _ = check_file(notebook)
    assert [cell for cell in report["cells"] if cell["status"] != "ok"] == []
    assert {c["role"] for c in report["components"]} >= TYPED_ROLES
    assert {name: failed for name, failed in failures(report).items() if failed} == {}
    assert json.dumps(report).count('"fail"') == 0


def test_a_notebook_variable_named_like_the_modules_mask_is_not_blamed(tmp_path):
    """Section 3.5.1 makes a ``mask``; the class reads ``self.mask``: no ``mask_buffer`` FAIL,
    whatever the notebook's variable holds."""
    chapter = chapter_typed_in()
    causal = next(cell for cell in chapter if cell.startswith("class CausalAttention("))
    imports = next(cell for cell in chapter if "check_dropout," in cell)  # 3.5's first cell
    cells = [imports, "mask = torch.triu(torch.ones(6, 6), diagonal=1)", causal]
    path = Path(tmp_path / "short.ipynb")
    path.write_text(seeds.notebook(cells), encoding="utf-8")
    with in_this_process():
        report, _ = check_file(path)
    checks = {k["check"]: k["status"] for c in report["components"] for k in c["checks"]}
    assert checks["mask_buffer"] == "pass", report


@pytest.mark.slow
def test_each_seed_notebook_as_a_teacher_checks_it():
    """The installed command on each seed notebook alone, as a teacher runs it: the reports
    equal the ones made in this process, and the median time is shown after the results
    (measured, not held: a timed test fails on a busy machine; `nox -s bench` compares)."""
    command = shutil.which("attention-check", path=Path(sys.executable).parent)
    assert command, f"attention-check is not installed beside {sys.executable}"
    notebooks = sorted(seeds.FIXTURES.glob("*.ipynb"))
    seconds = []
    for notebook in notebooks:
        start = time.perf_counter()
        result = subprocess.run(
            [command, "--json", str(notebook)],
            capture_output=True, text=True, env={**os.environ, "LANGUAGE": "en"},
        )  # fmt: skip
        seconds.append(time.perf_counter() - start)
        with in_this_process():
            here, _ = check_file(notebook)
        assert json.loads(result.stdout) == here, notebook.name
    say(
        "attention-check",
        f"attention-check: {len(notebooks)} seed notebooks, one process each: median "
        f"{statistics.median(seconds):.1f} s, slowest {max(seconds):.1f} s",
    )
