"""Run a learner's cells in a separate process, with a time limit per cell and in total.

The learner's code never runs in the checker's own process: an infinite loop, an
``input()``, a crash or a ``sys.exit()`` there stops only that process. What it prints is
discarded, its plots are drawn off screen (``MPLBACKEND=Agg``), and it starts in the
learner's folder, as in Jupyter, so that it can read the files it reads there.

Its memory is limited too (``RLIMIT_DATA``, where the platform has ``resource``): an
allocation past the limit fails in the learner's code, the worker reports the cell with
the status ``"memory"``, and the cells after it run. If the notebook holds so much that
nothing more can be allocated, the worker marks that cell ``"stopped"`` and stops: the
cells after it are not run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

from .cells import Cell

CELL_TIMEOUT = 30.0  # seconds, each cell
TOTAL_TIMEOUT = 120.0  # seconds, the whole run
MEMORY = 4 * 2**30  # bytes of data (heap and anonymous memory), the whole run


def run(
    cells: list[Cell],
    folder: Path,
    cell_timeout: float = CELL_TIMEOUT,
    total_timeout: float = TOTAL_TIMEOUT,
    memory: int = MEMORY,
) -> tuple[list[dict], list[dict] | None]:
    """Run ``cells`` in order in a new Python process, then check what they defined.

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
        command = [sys.executable, "-m", "attention_mechanisms.check._worker"]
        command += [str(request), str(results)]
        env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONIOENCODING": "utf-8"}
        env["OMP_NUM_THREADS"] = "1"  # one thread each: several notebooks run side by side
        killed = False
        with subprocess.Popen(
            command,
            cwd=folder,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its own process group: stopped with whatever it started
        ) as process:
            try:
                process.wait(timeout=total_timeout)
            except subprocess.TimeoutExpired:
                if hasattr(os, "killpg"):
                    os.killpg(process.pid, signal.SIGKILL)
                else:
                    process.kill()
                killed = True
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
                "error": {"key": "python_stopped", "status": process.returncode},
            }
        )
        entries.append({"cell": missing[0].number, **stopped})
        entries += [
            {"cell": cell.number, "status": "skipped", "error": {"key": "not_run"}}
            for cell in missing[1:]
        ]
    return entries, components
