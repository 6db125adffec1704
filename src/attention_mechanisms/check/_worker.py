"""The separate process that runs a learner's cells (started by `runner`; not for direct use).

``python -m attention_mechanisms.check._worker REQUEST RESULTS`` reads the cells from the
JSON file REQUEST, runs them in order in one namespace, as a notebook would, and appends one
JSON line per cell to RESULTS as it goes, so that what ran is known even if the process is
stopped. It then examines what the cells defined and appends the components.

Each cell gets its own time limit through SIGALRM where the platform has it. Whatever the
cells print is discarded; they get no input (stdin is closed: ``input()`` raises EOFError).
"""

from __future__ import annotations

import contextlib
import io
import json
import linecache
import signal
import sys
from pathlib import Path

from .locate import Locator


class CellTimeout(BaseException):  # not an Exception: a learner's `except` must not catch it
    """A cell ran past its time limit."""


def _on_alarm(signum, frame):
    raise CellTimeout


def _raised_at(error: BaseException, locator: Locator, current: str) -> str:
    """ " (line L)" for an error raised in this cell, " (cell N, line L)" for another cell."""
    frame = locator.frame(error)
    if frame is None:
        return ""
    if frame.filename == current:
        return f" (line {locator.line(frame.filename, frame.lineno)})"
    return f" ({locator.where(frame.filename, frame.lineno)})"


def run_cell(cell: dict, namespace: dict, timeout: float, locator: Locator) -> dict:
    """Run one cell; return its entry of the report (``cell``, ``status``, ``error``)."""
    entry: dict = {"cell": cell["number"]}
    if cell["skipped_lines"]:
        entry["skipped_lines"] = cell["skipped_lines"]
    if cell["skipped"]:
        return {**entry, "status": "skipped"}
    filename = f"<cell {cell['number']}>"
    source = cell["source"]
    # Registered, so that inspect can read back the learner's classes, line by line.
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    alarm = hasattr(signal, "setitimer")
    try:
        code = compile(source, filename, "exec")
        if alarm:
            signal.setitimer(signal.ITIMER_REAL, timeout)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            exec(code, namespace)
    except CellTimeout:
        return {**entry, "status": "timeout", "error": f"still running after {timeout:g} s"}
    except (Exception, SystemExit, KeyboardInterrupt) as error:  # the learner's error
        where = _raised_at(error, locator, filename)
        if isinstance(error, SyntaxError) and error.filename == filename and error.lineno:
            where = f" (line {locator.line(filename, error.lineno)})"  # of the learner's file
            error = SyntaxError(error.msg)
        message = f"{type(error).__name__}: {error}{where}"
        if isinstance(error, EOFError):
            message += "; the checker gives your code no input, so input() cannot be answered"
        return {**entry, "status": "error", "error": message}
    finally:
        if alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
    return {**entry, "status": "ok"}


def main(request_path: str, results_path: str) -> None:
    request = json.loads(Path(request_path).read_text(encoding="utf-8"))
    if hasattr(signal, "SIGALRM"):
        signal.signal(signal.SIGALRM, _on_alarm)
    namespace: dict = {"__name__": "__main__"}
    first_lines = {f"<cell {cell['number']}>": cell["line"] for cell in request["cells"]}
    with open(results_path, "a", encoding="utf-8") as results:
        for cell in request["cells"]:
            entry = run_cell(cell, namespace, request["cell_timeout"], Locator(first_lines))
            results.write(json.dumps(entry) + "\n")
            results.flush()
        from .analyse import analyse  # after the cells: their time is not spent importing it

        # The checks call the learner's code again: each component gets a cell's time limit.
        def limited(run):
            if hasattr(signal, "setitimer"):
                signal.setitimer(signal.ITIMER_REAL, request["cell_timeout"])
            try:
                return run()
            finally:
                if hasattr(signal, "setitimer"):
                    signal.setitimer(signal.ITIMER_REAL, 0)

        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            components = analyse(namespace, first_lines, limited, CellTimeout)
        results.write(json.dumps({"components": components}) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:3])
