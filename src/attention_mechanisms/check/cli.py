"""``attention-check PATH [PATH ...] [--json] [--timeout SECONDS]``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import report
from .cells import UnreadableFileError, read_cells
from .runner import CELL_TIMEOUT, TOTAL_TIMEOUT, run


def check_file(
    path: Path, cell_timeout: float = CELL_TIMEOUT, total_timeout: float = TOTAL_TIMEOUT
):
    """Run the learner's file and check it: ``(report dict, cell entries)``.

    Raises:
        UnreadableFileError: If ``path`` is not a notebook or Python file that can be read.
    """
    cells = read_cells(path)
    entries, components = run(cells, path.resolve().parent, cell_timeout, total_timeout)
    result = report.as_dict(str(path), entries, components or [])
    if components is None:
        result["unfinished"] = "the checks did not finish: the time ran out or Python stopped"
    return result, entries


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="attention-check",
        description="Check your own chapter-3 attention code against the book.",
    )
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH", help=".ipynb or .py")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--timeout", type=float, default=CELL_TIMEOUT, metavar="SECONDS",
        help=f"time limit per cell (default {CELL_TIMEOUT:g}; {TOTAL_TIMEOUT:g} in all)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.timeout <= 0:
        parser.error(f"--timeout must be a positive number of seconds; got {args.timeout:g}")
    reports, unreadable = [], False
    for path in args.paths:
        try:
            result, cells = check_file(path, args.timeout, max(TOTAL_TIMEOUT, args.timeout))
        except UnreadableFileError as error:
            print(f"attention-check: {path}: {error}", file=sys.stderr)
            unreadable = True
            continue
        reports.append(result)
        if not args.json:
            colour, width = report.use_colour(), report.terminal_width()
            print(report.as_text(result, cells, colour=colour, width=width))
    if args.json and reports:
        print(report.as_json(reports))
    return 2 if unreadable else report.exit_status(reports)
