"""``attention-check PATH [PATH ...]``: check notebooks against the book.

A PATH is a notebook (``.ipynb``), a Python file (``.py``) or a folder, whose notebooks and
Python files are checked (in its subfolders too, in name order). Each file runs in its own
process, with the time and memory limits, several side by side (``--jobs``); the reports
come in the order of the files. With more than one file the report ends with a summary
table, one row per file; ``--summary md`` or ``--summary csv`` prints that table alone.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from . import report
from .cells import UnreadableFileError, read_cells
from .messages import LANGUAGES, default_language, word
from .runner import CELL_TIMEOUT, MEMORY, TOTAL_TIMEOUT, run

JOBS = min(4, os.cpu_count() or 1)
_UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30}


def memory_size(text: str) -> int:
    """``"4G"``, ``"512M"`` or a number of bytes, as bytes."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmg]?)i?b?\s*", text.lower())
    if not match or float(match[1]) <= 0:
        raise argparse.ArgumentTypeError(f"expected a size such as 4G or 512M; got {text!r}")
    return int(float(match[1]) * _UNITS[match[2]])


def _hidden(relative: Path) -> bool:
    return any(part.startswith(".") for part in relative.parts)


def notebooks(paths: list[Path]) -> list[Path]:
    """The files to check: each file named, and the notebooks and .py files of each folder."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():  # not in hidden folders (.ipynb_checkpoints, .venv, .git)
            inside = [p for p in path.rglob("*") if p.suffix in (".ipynb", ".py")]
            found += sorted(p for p in inside if not _hidden(p.relative_to(path)))
        else:
            found.append(path)
    return found


def run_file(
    path: Path,
    cell_timeout: float = CELL_TIMEOUT,
    total_timeout: float = TOTAL_TIMEOUT,
    memory: int = MEMORY,
) -> tuple[list[dict], list[dict] | None]:
    """Run the learner's file and check it: its cells' entries and its components' results,
    not yet in words (`report.as_dict` renders them in a language).

    Raises:
        UnreadableFileError: If ``path`` is not a notebook or Python file that can be read.
    """
    cells = read_cells(path)
    return run(cells, path.resolve().parent, cell_timeout, total_timeout, memory)


def check_file(
    path: Path,
    cell_timeout: float = CELL_TIMEOUT,
    total_timeout: float = TOTAL_TIMEOUT,
    language: str = "en",
    memory: int = MEMORY,
) -> tuple[dict, list[dict]]:
    """Run the learner's file and check it: ``(report dict in language, cell entries)``.

    Raises:
        UnreadableFileError: If ``path`` is not a notebook or Python file that can be read.
    """
    entries, components = run_file(path, cell_timeout, total_timeout, memory)
    result = report.as_dict(str(path), entries, components, language)
    if any(entry.get("stopped") for entry in entries):
        result["unfinished"] = word("over_memory", language, limit=f"{memory / 2**30:g} GiB")
    return result, entries


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="attention-check",
        description="Check your own chapter-3 attention code against the book.",
    )
    parser.add_argument(
        "paths", nargs="+", type=Path, metavar="PATH", help=".ipynb, .py, or a folder of them"
    )
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object (a list for several files)"
    )
    parser.add_argument(
        "--lang",
        choices=LANGUAGES,
        default=default_language(),
        help="the report's language (default: the locale's, if one of these; else en)",
    )
    parser.add_argument(
        "--summary", choices=("md", "csv"), help="print only the summary table, one row a file"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=CELL_TIMEOUT,
        metavar="SECONDS",
        help=f"time limit per cell (default {CELL_TIMEOUT:g}; {TOTAL_TIMEOUT:g} in all)",
    )
    parser.add_argument(
        "--memory",
        type=memory_size,
        default=MEMORY,
        metavar="SIZE",
        help="memory limit of each notebook's process (default 4G; not on Windows)",
    )
    parser.add_argument(
        "--jobs", type=int, default=JOBS, metavar="N",
        help=f"notebooks checked side by side (default {JOBS}: the cores, at most 4)",
    )  # fmt: skip
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.timeout <= 0:
        parser.error(f"--timeout must be a positive number of seconds; got {args.timeout:g}")
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1; got {args.jobs}")
    files = notebooks(args.paths)
    if not files:
        parser.error(f"no .ipynb or .py file in {', '.join(map(str, args.paths))}")
    start = time.perf_counter()

    def one(path: Path) -> tuple[Path, tuple[dict, list[dict]] | UnreadableFileError]:
        try:
            limits = (args.timeout, max(TOTAL_TIMEOUT, args.timeout), args.lang, args.memory)
            return path, check_file(path, *limits)
        except UnreadableFileError as error:
            return path, error

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        done = list(pool.map(one, files))
    return _print(done, args, time.perf_counter() - start)


def _print(done: list, args: argparse.Namespace, seconds: float) -> int:
    reports, unreadable = [], False
    colour, width = report.use_colour(), report.terminal_width()
    for path, outcome in done:
        if isinstance(outcome, UnreadableFileError):
            print(f"attention-check: {path}: {outcome}", file=sys.stderr)
            unreadable = True
            continue
        result, cells = outcome
        reports.append(result)
        if not args.json and not args.summary:
            print(report.as_text(result, cells, colour, width, args.lang))
    if args.json and reports and not args.summary:
        print(report.as_json(reports))
    if args.summary or (len(done) > 1 and not args.json):
        print(
            ("" if args.summary else "\n")
            + report.as_summary(reports, args.summary or "md", args.lang)
        )
        failed = sum(report.failed(r) for r in reports)
        totals = dict(
            files=len(reports), seconds=seconds, passed=len(reports) - failed, failed=failed
        )
        print(
            word("summary_total", args.lang, **totals),
            file=sys.stderr if args.summary else sys.stdout,
        )
    return 2 if unreadable else report.exit_status(reports)
