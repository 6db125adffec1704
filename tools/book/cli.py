"""The command line: ``python -m book execute | check [--update] | path`` (see ``--help``)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from book import BookError, shown
from book.checker import check, check_docstrings, update
from book.executor import chapters, execute


def _check_all(paths: list[Path], fix: bool) -> int:
    reports = []
    for chapter in paths:
        if fix and update(chapter):
            print(f"{shown(chapter)}: expected outputs rewritten")
        reports.append(check(chapter))
    reports.append(check_docstrings())
    for report in reports:
        status = "ok" if not report.errors else f"{len(report.errors)} problem(s)"
        print(f"{report.name}: {report.checked} outputs, {report.prose} prose numbers, {status}")
        for error in report.errors:
            print(f"error: {error}", file=sys.stderr)
    chapter_reports = reports[:-1]
    nondeterministic = [item for report in reports for item in report.nondeterministic]
    print(
        f"{sum(r.checked for r in chapter_reports)} outputs checked in {len(chapter_reports)} "
        f"chapters, {reports[-1].checked} docstring examples, "
        f"{sum(r.prose for r in reports)} prose numbers, "
        f"{len(nondeterministic)} nondeterministic (reasons listed)"
    )
    for item in nondeterministic:
        print(f"  nondeterministic: {item}")
    failed = sum(len(report.errors) for report in reports)
    if failed:
        print(
            f"{failed} problem(s); `nox -s examples -- --update` accepts intended changes",
            file=sys.stderr,
        )
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m book",
        description="Execute the book's chapters (with a cache) and check what they print.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("execute", help="execute stale chapters; print what ran")
    run.add_argument("chapters", nargs="*", type=Path, help="default: every chapter")
    verify = sub.add_parser(
        "check", help="compare every output (chapters and docstrings) with what the source states"
    )
    verify.add_argument(
        "--update", action="store_true", help="first rewrite the expected outputs from execution"
    )
    verify.add_argument("chapters", nargs="*", type=Path, help="default: every chapter")
    show = sub.add_parser("path", help="print the executed notebook's path (executing if stale)")
    show.add_argument("chapter", type=Path)
    args = parser.parse_args(argv)

    try:
        if args.command == "path":
            print(execute(args.chapter)[0])
            return 0
        if args.command == "check":
            return _check_all(args.chapters or chapters(), fix=args.update)
        todo = args.chapters or chapters()
        executed = 0
        for chapter in todo:
            start = time.perf_counter()
            path, ran = execute(chapter)
            executed += ran
            status = f"executed in {time.perf_counter() - start:.1f} s" if ran else "up to date"
            print(f"{shown(chapter)}: {status} -> {shown(path)}")
        print(f"{executed} of {len(todo)} chapters executed")
        return 0
    except BookError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
