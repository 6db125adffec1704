"""Run a learner's cells in a separate process, with a time limit per cell and in total.

The learner's code never runs in the checker's own process: an infinite loop, an
``input()``, a crash or a ``sys.exit()`` there stops only that process. What it prints is
discarded, its plots are drawn off screen (``MPLBACKEND=Agg``), and it starts in the
learner's folder, as in Jupyter, so that it can read the files it reads there.

Where the platform can fork (not on Windows) and the temporary folder's path leaves room
for the fork server's socket, each run is forked from a fork server that has imported
torch and the checks once, rather than started as a new Python that imports them again: a
second and more saved for every notebook of a class. Either way the learner's code gets
the same: a process of its own, in its folder, with nothing else shared.

Its memory is limited too (``RLIMIT_DATA``, where the platform has ``resource``): an
allocation past the limit fails in the learner's code, the worker reports the cell with
the status ``"memory"``, and the cells after it run. If the notebook holds so much that
nothing more can be allocated, the worker marks that cell ``"stopped"`` and stops: the
cells after it are not run.
"""

from __future__ import annotations

import json
import multiprocessing
import multiprocessing.context
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from .cells import Cell

# What the worker's process gets besides its parent's environment: plots drawn off screen,
# and one thread each, since several notebooks run side by side.
ENVIRONMENT = {"MPLBACKEND": "Agg", "PYTHONIOENCODING": "utf-8", "OMP_NUM_THREADS": "1"}
# What the fork server imports once, so that a run forked from it need not (torch included).
PRELOAD = ["attention_mechanisms.check._worker", "attention_mechanisms.check.analyse"]

CELL_TIMEOUT = 30.0  # seconds, each cell
TOTAL_TIMEOUT = 120.0  # seconds, the whole run
MEMORY = 4 * 2**30  # bytes of data (heap and anonymous memory), the whole run
# The fork server listens on a Unix socket, <temporary folder>/pymp-XXXXXXXX/listener-XXXXXXXX,
# whose path the kernel caps at 107 bytes (103 on macOS); Python 3.11 does not shorten it.
SOCKET_PATH_LIMIT = 103
SOCKET_NAME = "/pymp-XXXXXXXX/listener-XXXXXXXX"


def run(
    cells: list[Cell],
    folder: Path,
    cell_timeout: float = CELL_TIMEOUT,
    total_timeout: float = TOTAL_TIMEOUT,
    memory: int = MEMORY,
) -> tuple[list[dict], list[dict] | None]:
    """Run ``cells`` in order in a process of their own, then check what they defined.

    Returns:
        One report entry per cell, and one per component (see `analyse`), or None for the
        components if the run stopped before they were checked.

    A cell's entry is ``{"cell": n, "status": "ok" | "error" | "timeout" | "memory" |
    "skipped"}``, with ``"error"`` saying what happened unless the cell ran (a string, or a
    message that the report puts in words), ``"where"`` where the error was raised and
    ``"hint"`` what may help (messages too), and ``"skipped_lines"`` listing the
    IPython lines left out. A cell still running when the total time runs out is a timeout;
    the cells after it were not run and are skipped.
    """
    with tempfile.TemporaryDirectory(prefix="attention-check-") as scratch:
        request = Path(scratch) / "request.json"
        results = Path(scratch) / "results.jsonl"
        request.write_text(
            json.dumps(
                {
                    "cells": [asdict(cell) for cell in cells],
                    "cell_timeout": cell_timeout,
                    "memory": memory,
                }
            ),
            encoding="utf-8",
        )
        results.touch()
        status, killed = _start(request, results, folder, total_timeout)
        lines = results.read_text(encoding="utf-8").splitlines()
    entries = [json.loads(line) for line in lines if line.strip()]
    # None: the process stopped before it had checked the components.
    components = next((e["components"] for e in entries if "components" in e), None)
    entries = [entry for entry in entries if "components" not in entry]
    missing = [cell for cell in cells if cell.number not in {e["cell"] for e in entries}]
    if any(entry.get("stopped") for entry in entries):
        entries += [
            {"cell": cell.number, "status": "skipped", "error": {"key": "not_run"}}
            for cell in missing
        ]
    elif missing:
        stopped = (
            {"status": "timeout", "error": {"key": "run_stopped", "seconds": total_timeout}}
            if killed
            else {
                "status": "error",
                "error": {"key": "python_stopped", "status": status},
            }
        )
        entries.append({"cell": missing[0].number, **stopped})
        entries += [
            {"cell": cell.number, "status": "skipped", "error": {"key": "not_run"}}
            for cell in missing[1:]
        ]
    return entries, components


def _start(request: Path, results: Path, folder: Path, limit: float) -> tuple[int | None, bool]:
    """Run the worker on ``request`` until it ends or ``limit`` seconds pass.

    Returns:
        Its exit status, and whether it was stopped at the time limit.
    """
    if (context := _fork_server()) is not None:
        process = context.Process(target=_forked, args=(str(request), str(results), str(folder)))
        process.start()
        process.join(limit)
        if process.is_alive() and process.pid is not None:
            _stop(process.pid, process.kill)
            process.join()
            return process.exitcode, True
        return process.exitcode, False
    command = [sys.executable, "-m", "attention_mechanisms.check._worker"]
    with subprocess.Popen(
        [*command, str(request), str(results)],
        cwd=folder,
        env={**os.environ, **ENVIRONMENT},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group: stopped with whatever it started
    ) as started:
        try:
            return started.wait(timeout=limit), False
        except subprocess.TimeoutExpired:
            _stop(started.pid, started.kill)
            return started.wait(), True


def _stop(pid: int, kill: Callable[[], None]) -> None:
    """Stop the worker and whatever it started (its process group), or it alone."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (AttributeError, ProcessLookupError, PermissionError):  # no groups, or none yet
        kill()


def _fork_server() -> multiprocessing.context.ForkServerContext | None:
    """Where the platform can fork: a process that has imported torch and the checks, from
    which each run is forked, so that the import costs once per command, not once per
    notebook (a second and more each). None elsewhere (Windows), or where the temporary
    folder's path is too long for the server's socket: each run starts Python."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return None
    if len(os.fsencode(tempfile.gettempdir() + SOCKET_NAME)) > SOCKET_PATH_LIMIT:
        return None
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    return context


def _forked(request: str, results: str, folder: str) -> None:
    """The worker, in a process forked from the fork server: made what a new one would be."""
    os.setsid()  # its own process group: stopped with whatever it starts
    devnull = os.open(os.devnull, os.O_RDWR)
    for stream in (0, 1, 2):  # no input; what it prints is discarded
        os.dup2(devnull, stream)
    os.chdir(folder)
    sys.path.insert(0, folder)  # as `python -m` does: the learner's own modules import
    os.environ.update(ENVIRONMENT)
    import torch

    torch.set_num_threads(1)  # the fork server read OMP_NUM_THREADS before it was set
    from . import _worker

    _worker.main(request, results)
