"""Run a learner's source through attention-check in this process (tests only).

The command runs each notebook in a separate process (tested in test_check.py); for the
many small cases built from one correct notebook, running the same cells and the same
`analyse` here is as faithful and much faster.
"""

from __future__ import annotations

import linecache

import torch

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
