"""attention_mechanisms.check: reading a learner's cells and running them safely.

The tests marked ``slow`` start the worker process: what they test is what that process
gives (its folder, no input, the total time limit that kills it, the memory limit), so
they cannot run in this one (`-m "not slow"` leaves them out).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from attention_mechanisms.check import runner
from attention_mechanisms.check.cells import UnreadableFileError, read_cells
from attention_mechanisms.check.cli import main
from attention_mechanisms.check.report import as_dict, as_summary
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


def in_words(entries: list[dict], language: str = "en") -> list[dict]:
    """The cells' entries as the report gives them, in ``language``."""
    return as_dict("learner.ipynb", entries, [], language)["cells"]


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


@pytest.mark.slow
def test_the_file_is_never_modified(tmp_path):
    path = notebook(tmp_path, "open('other.txt', 'w').write('made by the learner')")
    before = path.read_bytes()
    run(read_cells(path), tmp_path)
    assert path.read_bytes() == before
    assert (tmp_path / "other.txt").read_text() == "made by the learner"  # runs in their folder


@pytest.mark.slow
@pytest.mark.parametrize("forked", [True, False], ids=["forked", "new-python"])
def test_a_run_forked_or_started_anew_is_in_the_learners_folder_and_is_stopped(
    tmp_path, monkeypatch, forked
):
    """Both ways to start a run (forked from the fork server, or a new Python where the
    platform cannot fork) give the learner's code the same process."""
    if not forked:
        monkeypatch.setattr(runner, "_fork_server", lambda: None)
    elif runner._fork_server() is None:
        pytest.skip("this platform has no fork server")
    (tmp_path / "helpers.py").write_text("GREETING = 'xin chào'\n", encoding="utf-8")
    path = notebook(
        tmp_path,
        "from helpers import GREETING  # a module of their own, beside the notebook",
        "import os, torch\nseen = [GREETING, os.environ['MPLBACKEND'], torch.get_num_threads()]"
        "\nopen('seen.txt', 'w', encoding='utf-8').write(repr(seen))",
        "input()",
        "import time\nwhile True:\n    time.sleep(1)",
        "after = 1",
    )
    start = time.monotonic()
    entries, components = run(read_cells(path), tmp_path, total_timeout=8)
    assert time.monotonic() - start < 30
    assert [entry["status"] for entry in entries] == ["ok", "ok", "error", "timeout", "skipped"]
    assert entries[2]["error"].startswith("EOFError")
    assert entries[3]["error"] == {"key": "run_stopped", "seconds": 8}
    assert components is None
    assert (tmp_path / "seen.txt").read_text(encoding="utf-8") == "['xin chào', 'Agg', 1]"


@pytest.mark.slow
def test_each_cell_is_reported_and_the_run_goes_on(tmp_path):
    path = notebook(
        tmp_path,
        "x = 1\nprint('printed output never reaches the report')",
        "1 / 0",
        "name = input('your name? ')",
        "import sys\nsys.exit(3)",
        "%%time\nz = 3",
        "y = x + 1\nassert y == 2",
        "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()  # drawn off screen",
    )
    entries, _ = run(read_cells(path), tmp_path)
    assert [(entry["cell"], entry["status"]) for entry in entries] == [
        (1, "ok"),
        (2, "error"),
        (3, "error"),
        (4, "error"),
        (5, "skipped"),
        (6, "ok"),
        (7, "ok"),
    ]
    said = in_words(entries)
    assert said[1]["error"] == "ZeroDivisionError: division by zero (line 1)"
    assert said[2]["error"].startswith("EOFError: EOF when reading a line (line 1); the")
    assert said[3]["error"] == "SystemExit: 3 (line 2)"
    assert in_words(entries, "vi")[3]["error"] == "SystemExit: 3 (dòng 2)"


@pytest.mark.slow
def test_an_endless_cell_times_out_even_if_it_catches_exceptions(tmp_path):
    path = notebook(
        tmp_path,
        "while True:\n    pass",
        "while True:\n    try:\n        pass\n    except Exception:\n        pass",
        "done = True",
    )
    entries, _ = run(read_cells(path), tmp_path, cell_timeout=1, total_timeout=30)
    assert [entry["status"] for entry in entries] == ["timeout", "timeout", "ok"]
    assert in_words(entries)[0]["error"] == "still running after 1 s"


@pytest.mark.slow
def test_the_total_limit_stops_the_run_and_names_the_cell(tmp_path):
    path = notebook(tmp_path, "x = 1", "import time\ntime.sleep(60)", "y = 2")
    start = time.monotonic()
    # 15 s in all: time for Python to start and import torch on a busy machine first.
    entries, _ = run(read_cells(path), tmp_path, cell_timeout=50, total_timeout=15)
    assert time.monotonic() - start < 40
    assert [entry["status"] for entry in entries] == ["ok", "timeout", "skipped"]
    assert in_words(entries)[1]["error"] == "the run stopped here after 15 s in all"


@pytest.mark.slow
def test_a_refused_allocation_is_a_cell_error_and_the_cells_after_it_run(tmp_path):
    path = notebook(
        tmp_path,
        "import torch\nsmall = torch.ones(1000)",
        "big = torch.ones(2 * 2**30 // 4)  # 2 GiB of float32",
        "def softmax_naive(x):\n    return x.exp() / x.exp().sum(0)",
    )
    entries, components = run(read_cells(path), tmp_path, memory=1 * 2**30)
    assert [entry["status"] for entry in entries] == ["ok", "memory", "ok"]
    assert "can't allocate memory" in entries[1]["error"]
    words = in_words(entries)[1]["error"]
    assert words.endswith(
        "(line 1); the checker's memory limit of 1 GiB refused this allocation, and the cells "
        "after it still ran"
    ), words
    assert [c["name"] for c in components] == ["softmax_naive"]  # the later cell's, checked


HOARDER = "keep = []\nwhile True:\n    keep.append(torch.ones(2**20))  # 4 MiB at a time"


@pytest.mark.slow
def test_a_notebook_that_really_runs_out_of_memory_is_stopped_and_named(tmp_path):
    path = notebook(tmp_path, "import torch", HOARDER, "after = 1", "def softmax(x):\n    pass")
    entries, components = run(read_cells(path), tmp_path, memory=1 * 2**30)
    assert [entry["status"] for entry in entries] == ["ok", "memory", "skipped", "skipped"]
    assert entries[1]["stopped"] is True
    words = in_words(entries)
    assert words[1]["error"].endswith(
        "it went past the checker's memory limit of 1 GiB and left no memory for anything "
        "else, so the run stopped here"
    ), words[1]
    assert words[2]["error"] == "not run: the run had stopped"
    assert components is None  # nothing after it is checked


@pytest.mark.slow
def test_the_memory_limit_leaves_the_other_notebooks_alone(tmp_path, capsys):
    hungry = notebook(tmp_path, "import torch", HOARDER, name="a.ipynb")
    plain = notebook(tmp_path, "def softmax_naive(x):\n    return x.exp() / x.exp().sum(0)")
    assert main(["--memory", "1G", "--json", str(hungry), str(plain)]) == 1
    reports = json.loads(capsys.readouterr().out)
    # --summary csv prints this table (as_summary) from these reports.
    rows = as_summary(reports, "csv").splitlines()
    assert rows[1:] == [f"{hungry},,,2", f"{plain},softmax_naive,,"]
    assert reports[0]["unfinished"] == "stopped: it used more than the memory limit of 1 GiB"
    assert "unfinished" not in reports[1]


@pytest.mark.parametrize("size", ["0", "-1G", "lots", "4T"])
def test_a_bad_memory_size_is_refused(size, capsys):
    with pytest.raises(SystemExit):
        main([f"--memory={size}", "x.py"])
    assert f"expected a size such as 4G or 512M; got {size!r}" in capsys.readouterr().err


@pytest.mark.slow
def test_a_long_temporary_folder_starts_each_run_anew(tmp_path):
    """A fork server's socket lives in the temporary folder, and its path has a limit: with
    a long TMPDIR the checker starts a new Python for each run rather than fail."""
    scratch = tmp_path / ("long-folder-name-" * 6)
    scratch.mkdir()
    path = notebook(tmp_path, "import torch\nx = torch.ones(2)", "y = x.sum().item()")
    code = (
        "import json, sys\nfrom pathlib import Path\n"
        "from attention_mechanisms.check import runner\nfrom attention_mechanisms.check.cells"
        " import read_cells\npath = Path(sys.argv[1])\n"
        "entries, _ = runner.run(read_cells(path), path.parent)\n"
        "print(json.dumps([runner._fork_server() is None, [e['status'] for e in entries]]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)], env={**os.environ, "TMPDIR": str(scratch)},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [True, ["ok", "ok"]]
