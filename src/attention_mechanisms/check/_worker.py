"""The separate process that runs a learner's cells (started by `runner`; not for direct use).

``python -m attention_mechanisms.check._worker REQUEST RESULTS`` (or `main`, in a process
forked by `runner`) reads the cells from the
JSON file REQUEST, runs them in order in one namespace, as a notebook would, and appends one
JSON line per cell to RESULTS as it goes, so that what ran is known even if the process is
stopped. It then examines what the cells defined and appends the components.

Each cell gets its own time limit through SIGALRM where the platform has it. An allocation
past the memory limit fails in its cell like any other error; only when no memory is left
for anything (`out_of_memory`) does the run stop. Whatever the cells print is discarded;
they get no input (stdin is closed: ``input()`` raises EOFError).
"""

from __future__ import annotations

import contextlib
import gc
import io
import json
import linecache
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import NoReturn, TypeVar

from .locate import Locator

T = TypeVar("T")


class CellTimeout(BaseException):  # not an Exception: a learner's `except` must not catch it
    """A cell ran past its time limit."""


def _on_alarm(signum: int, frame: FrameType | None) -> NoReturn:
    raise CellTimeout


def _raised_at(error: BaseException, locator: Locator, current: str) -> dict | None:
    """Where the error was raised, as a message: the line of this cell, or another cell's."""
    frame = locator.frame(error)
    if frame is None:
        return None
    if frame.filename == current:
        return {"key": "line", "line": locator.line(frame.filename, frame.lineno or 0)}
    return locator.where_message(frame.filename, frame.lineno or 0)


def _learner_error(error: BaseException, locator: Locator, filename: str) -> dict:
    """The entry's status, error and where it was raised, for what the learner's cell raised
    (the report puts ``where`` and ``hint`` in the learner's language)."""
    where = _raised_at(error, locator, filename)
    if isinstance(error, SyntaxError) and error.filename == filename and error.lineno:
        where = {"key": "line", "line": locator.line(filename, error.lineno)}  # of their file
        error = SyntaxError(error.msg)
    entry: dict = {"status": "error", "error": f"{type(error).__name__}: {error}"}
    if where:
        entry["where"] = where
    if "can't allocate memory" in str(error):  # torch's allocator past the limit
        entry["status"] = "memory"
    if isinstance(error, EOFError):
        entry["hint"] = {"key": "hint_no_input"}
    return entry


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
        return {**entry, "status": "timeout", "error": {"key": "cell_timeout", "seconds": timeout}}
    except MemoryError as error:
        return {**entry, "status": "memory", "error": f"MemoryError: {error}"}
    except (Exception, SystemExit, KeyboardInterrupt) as error:  # the learner's error
        return {**entry, **_learner_error(error, locator, filename)}
    finally:
        if alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
    return {**entry, "status": "ok"}


# What Python needs to go on after a refused allocation: a notebook that holds more than the
# limit less this has really run out of memory, and its run stops there.
HEADROOM = 64 * 2**20


def out_of_memory() -> bool:
    """Whether even `HEADROOM` bytes cannot be had, once what nothing holds is freed."""
    gc.collect()
    try:
        bytearray(HEADROOM)
    except MemoryError:
        return True
    return False


def limit_memory(limit: int) -> None:
    """At most ``limit`` bytes of data (heap and anonymous memory) from now on, where the
    platform can say so (not on Windows)."""
    try:
        import resource
    except ImportError:
        return
    resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))


def main(request_path: str, results_path: str) -> None:
    request = json.loads(Path(request_path).read_text(encoding="utf-8"))
    limit_memory(request["memory"])
    if hasattr(signal, "SIGALRM"):
        signal.signal(signal.SIGALRM, _on_alarm)
    namespace: dict = {"__name__": "__main__"}
    first_lines = {f"<cell {cell['number']}>": cell["line"] for cell in request["cells"]}
    with open(results_path, "a", encoding="utf-8") as results:
        for cell in request["cells"]:
            entry = run_cell(cell, namespace, request["cell_timeout"], Locator(first_lines))
            # A refused allocation is the limit at work, and the cells after it run; with no
            # room left at all, nothing after it could run, and the run stops here.
            stop = entry["status"] == "memory" and out_of_memory()
            if entry["status"] == "memory":
                limit = f"{request['memory'] / 2**30:g} GiB"
                entry["hint"] = {"key": "hint_memory_stopped" if stop else "hint_memory",
                                 "limit": limit}  # fmt: skip
            results.write(json.dumps({**entry, "stopped": True} if stop else entry) + "\n")
            results.flush()
            if stop:
                return
        from .analyse import analyse  # after the cells: their time is not spent importing it

        # The checks call the learner's code again: each component gets a cell's time limit.
        def limited(run: Callable[[], T]) -> T:
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
