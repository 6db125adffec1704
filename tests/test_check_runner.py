"""attention_mechanisms.check: reading a learner's cells and running them safely."""

from __future__ import annotations

import json
import time

import pytest

from attention_mechanisms.check.cells import UnreadableFileError, read_cells
from attention_mechanisms.check.runner import run


def notebook(tmp_path, *cells: str, name: str = "learner.ipynb"):
    """A notebook of code cells (and one Markdown cell first), written under tmp_path."""
    content = [{"cell_type": "markdown", "metadata": {}, "source": "# My notes"}]
    content += [
        {
            "cell_type": "code",
            "metadata": {},
            "source": cell,
            "outputs": [],
            "execution_count": None,
        }
        for cell in cells
    ]
    path = tmp_path / name
    path.write_text(
        json.dumps({"cells": content, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    )
    return path


def test_a_notebook_gives_its_code_cells_numbered_from_one(tmp_path):
    path = notebook(tmp_path, "x = 1", "y = x + 1")
    cells = read_cells(path)
    assert [(cell.number, cell.source) for cell in cells] == [(1, "x = 1"), (2, "y = x + 1")]


def test_a_percent_script_gives_its_code_cells_with_their_lines(tmp_path):
    path = tmp_path / "learner.py"
    path.write_text("# %% [markdown]\n# Notes\n\n# %%\nx = 1\n\n# %%\ny = 2\n")
    cells = read_cells(path)
    assert [(cell.source.strip(), cell.line) for cell in cells] == [("x = 1", 5), ("y = 2", 8)]


def test_a_plain_script_is_one_cell(tmp_path):
    path = tmp_path / "learner.py"
    path.write_text("x = 1\ny = 2\n")
    assert [cell.source for cell in read_cells(path)] == ["x = 1\ny = 2"]


def test_ipython_lines_are_left_out_and_named(tmp_path):
    path = notebook(tmp_path, "!pip install torch\n%matplotlib inline\nx = 1", "%%time\ny = 2")
    first, second = read_cells(path)
    assert first.source.splitlines()[-1] == "x = 1" and not first.skipped
    assert first.skipped_lines == ["!pip install torch", "%matplotlib inline"]
    assert second.skipped and second.skipped_lines == ["%%time"]


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("notes.txt", "x = 1", "expected a .ipynb notebook or a .py file; got notes.txt"),
        ("broken.ipynb", "{not json", "not a Jupyter notebook"),
    ],
)
def test_an_unreadable_file_is_named(tmp_path, name, text, message):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(UnreadableFileError, match=message):
        read_cells(path)


def test_the_file_is_never_modified(tmp_path):
    path = notebook(tmp_path, "open('other.txt', 'w').write('made by the learner')")
    before = path.read_bytes()
    run(read_cells(path), tmp_path)
    assert path.read_bytes() == before
    assert (tmp_path / "other.txt").read_text() == "made by the learner"  # runs in their folder


def test_each_cell_is_reported_and_the_run_goes_on(tmp_path):
    path = notebook(
        tmp_path,
        "x = 1\nprint('printed output never reaches the report')",
        "1 / 0",
        "name = input('your name? ')",
        "import sys\nsys.exit(3)",
        "%%time\nz = 3",
        "y = x + 1\nassert y == 2",
    )
    entries, _ = run(read_cells(path), tmp_path)
    assert [(entry["cell"], entry["status"]) for entry in entries] == [
        (1, "ok"),
        (2, "error"),
        (3, "error"),
        (4, "error"),
        (5, "skipped"),
        (6, "ok"),
    ]
    assert entries[1]["error"] == "ZeroDivisionError: division by zero (line 1)"
    assert entries[2]["error"].startswith("EOFError: EOF when reading a line (line 1); the")
    assert entries[3]["error"] == "SystemExit: 3 (line 2)"


def test_an_endless_cell_times_out_even_if_it_catches_exceptions(tmp_path):
    path = notebook(
        tmp_path,
        "while True:\n    pass",
        "while True:\n    try:\n        pass\n    except Exception:\n        pass",
        "done = True",
    )
    entries, _ = run(read_cells(path), tmp_path, cell_timeout=1, total_timeout=30)
    assert [entry["status"] for entry in entries] == ["timeout", "timeout", "ok"]
    assert entries[0]["error"] == "still running after 1 s"


def test_the_total_limit_stops_the_run_and_names_the_cell(tmp_path):
    path = notebook(tmp_path, "x = 1", "import time\ntime.sleep(60)", "y = 2")
    start = time.monotonic()
    entries, _ = run(read_cells(path), tmp_path, cell_timeout=30, total_timeout=3)
    assert time.monotonic() - start < 15
    assert [entry["status"] for entry in entries] == ["ok", "timeout", "skipped"]
    assert entries[1]["error"] == "the run stopped here after 3 s in all"
