"""Run learners' code through attention-check in this process (tests only).

The command runs each notebook in a worker process of its own, forked from a process that
has imported torch, or a new Python where it cannot fork. So the tests check here, in this
process, where they need no worker:

- `check_source`: a percent-format source's cells and `analyse`, for the many small cases
  built from one correct notebook;
- `in_this_process`: the command itself (`cli.main`, `check_file`, `runner.run`), with the
  worker's own `main` called here instead of in a new process.

The real processes, and what only they can show (the total time limit, the memory limit,
no input, the learner's folder), are tested by the tests marked ``slow``,
among them the installed command over every notebook of tests/fixtures/check, whose reports
must equal the ones made here.
"""

from __future__ import annotations

import contextlib
import io
import linecache
import os
import signal
import subprocess
import sys
import warnings
from collections.abc import Iterator
from types import SimpleNamespace

import pytest
import torch

from attention_mechanisms.check import _worker, cli, runner
from attention_mechanisms.check.analyse import analyse
from attention_mechanisms.check.cells import _python_cells
from attention_mechanisms.check.report import as_dict


def check_source(source: str, language: str = "en") -> dict:
    """The report of a percent-format source, as ``--json`` would give it."""
    namespace: dict = {"__name__": "__main__"}
    first_lines = {}
    for number, (text, line) in enumerate(_python_cells(source), start=1):
        name = f"<cell {number}>"
        first_lines[name] = line
        linecache.cache[name] = (len(text), None, text.splitlines(True), name)
        exec(compile(text, name, "exec"), namespace)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as in the worker: tiny tensors, no thread pool to wake
    try:
        return as_dict("learner.py", [], analyse(namespace, first_lines), language)
    finally:
        torch.set_num_threads(threads)


def failures(report: dict) -> dict[str, set[str]]:
    """Component name -> the checks it fails."""
    return {
        c["name"]: {k["check"] for k in c["checks"] if k["status"] == "fail"}
        for c in report["components"]
    }


def message(report: dict, component: str, check: str) -> str:
    (entry,) = [c for c in report["components"] if c["name"] == component]
    return next(k["message"] for k in entry["checks"] if k["check"] == check)


# The worker's cell time limit is SIGALRM's; in this process nothing else would stop a cell.
ALARM = hasattr(signal, "setitimer")
needs_alarm = pytest.mark.skipif(not ALARM, reason="no SIGALRM here: the cell would not stop")


class _WorkerHere:
    """Stands in for `subprocess.Popen` in `runner.run`: the worker's `main` runs here, with
    what the worker process gets: the learner's folder, the runner's environment (Agg plots,
    one thread), no input, Python's own warning filters (not pytest's "error"), and its own
    SIGALRM handler for the cell time limit. No memory limit, no total time limit."""

    pid = None
    returncode = 0

    def __init__(self, command: list[str], *, cwd, env: dict[str, str], **_options) -> None:
        request, results = command[-2:]
        alarm = signal.getsignal(signal.SIGALRM) if ALARM else None
        threads, rng = torch.get_num_threads(), torch.random.get_rng_state()
        saved_env, stdin = dict(os.environ), sys.stdin
        try:
            os.environ.clear()
            os.environ.update(env)
            sys.stdin = io.StringIO()  # stdin=DEVNULL: input() raises EOFError
            torch.set_num_threads(1)
            if "matplotlib" in sys.modules:  # MPLBACKEND is read when matplotlib is imported
                sys.modules["matplotlib"].use("Agg")
            with contextlib.chdir(cwd), warnings.catch_warnings():
                warnings.simplefilter("ignore")  # its stderr goes nowhere; no pytest "error"
                _worker.main(request, results)
        finally:
            if ALARM:
                signal.signal(signal.SIGALRM, alarm)
            torch.set_num_threads(threads)
            torch.random.set_rng_state(rng)
            sys.stdin = stdin
            os.environ.clear()
            os.environ.update(saved_env)
            if "matplotlib.pyplot" in sys.modules:  # the learner's figures ended with their process
                sys.modules["matplotlib.pyplot"].close("all")

    def __enter__(self) -> _WorkerHere:
        return self

    def __exit__(self, *exc_info: object) -> None:
        return None

    def wait(self, timeout: float | None = None) -> int:
        return self.returncode


class _OneAtATime:
    """Stands in for `ThreadPoolExecutor` in `cli.main`: SIGALRM works in the main thread only."""

    def __init__(self, max_workers: int) -> None:
        pass

    def __enter__(self) -> _OneAtATime:
        return self

    def __exit__(self, *exc_info: object) -> None:
        return None

    def map(self, function, *iterables):
        return map(function, *iterables)


@contextlib.contextmanager
def in_this_process() -> Iterator[None]:
    """`cli.main`, `check_file` and `runner.run` start no process and no thread inside this
    block: each notebook's worker runs here, one after the other (see `_WorkerHere`)."""
    here = SimpleNamespace(
        Popen=_WorkerHere, DEVNULL=subprocess.DEVNULL, TimeoutExpired=subprocess.TimeoutExpired
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runner, "subprocess", here)
        patch.setattr(cli, "ThreadPoolExecutor", _OneAtATime)
        patch.setattr(_worker, "limit_memory", lambda limit: None)
        yield
