"""The command line: ``python -m book execute | check | path | site | translations``.

See ``python -m book --help`` and each command's ``--help``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from book import BookError, shown, site, translations
from book.checker import check, check_docstrings, update
from book.executor import chapters, execute


def _translations(stamp: list[Path], sync: bool, numbers: bool = False) -> int:
    """Report every language against the English; stamp or sync pages first if asked.

    With ``numbers``, also hold each translated chapter's prose numbers to its outputs.
    """
    for page in stamp:
        changed = translations.stamp(page)
        print(f"{shown(page)}: {'stamped' if changed else 'already current'}")
    failed = False
    for language in translations.languages():
        # The chapters that translate an English chapter (not a page the English lacks).
        chapters_here = [
            translations.DOCS / language / page
            for page in translations.translated_pages(language)
            if page.endswith(".py") and page in translations.english_pages()
        ]
        if sync:
            for path in chapters_here:
                if translations.sync_code(path):
                    print(f"{shown(path)}: English code copied in")
        status = translations.status(language)
        print(
            f"{language}: {len(status.current) + len(status.stale)} of "
            f"{len(translations.english_pages())} pages, {len(status.stale)} stale, "
            f"{len(status.missing)} missing, {len(status.problems)} code problem(s)"
        )
        for page in status.stale:
            print(f"  stale: docs/{language}/{page} (the English prose changed since)")
        for page in status.missing:
            print(f"error: docs/{language}/{page} is missing", file=sys.stderr)
        for page in status.extra:
            print(f"error: docs/{language}/{page} has no English page", file=sys.stderr)
        for problem in status.problems:
            print(f"error: {problem}", file=sys.stderr)
        failed |= status.failed
        if not numbers or status.problems:
            continue
        for path in chapters_here:
            executed, _ = execute(translations.english_of(path))
            for problem in translations.number_problems(path, executed):
                print(f"error: {problem}", file=sys.stderr)
                failed = True
    return 1 if failed else 0


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
        "--update",
        action="store_true",
        help="first rewrite the expected outputs from execution (translations' code too)",
    )
    verify.add_argument("chapters", nargs="*", type=Path, help="default: every chapter")
    show = sub.add_parser("path", help="print the executed notebook's path (executing if stale)")
    show.add_argument("chapter", type=Path)
    build = sub.add_parser(
        "site", help="build every language into site/<lang>/ (strict), and the root"
    )
    build.add_argument(
        "languages", nargs="*", help="only English and these translations (default: all)"
    )
    upkeep = sub.add_parser(
        "translations",
        help="list each language's stale, missing and differing pages (exit 1 if any are "
        "missing or differ)",
    )
    upkeep.add_argument(
        "--stamp",
        nargs="+",
        default=[],
        type=Path,
        metavar="PAGE",
        help="record that PAGE (docs/<lang>/...) now translates the current English prose",
    )
    upkeep.add_argument(
        "--sync-code",
        action="store_true",
        help="first copy the English code cells into every translated chapter",
    )
    args = parser.parse_args(argv)

    given = [*getattr(args, "chapters", []), *([args.chapter] if args.command == "path" else [])]
    for chapter in given:
        if not chapter.resolve().is_relative_to(translations.ENGLISH):
            print(
                f"error: {chapter}: only the English chapters (docs/en/) execute; a translation "
                "shows their outputs",
                file=sys.stderr,
            )
            return 2
    try:
        if args.command == "path":
            print(execute(args.chapter)[0])
            return 0
        if args.command == "check":
            code = _check_all(args.chapters or chapters(), fix=args.update)
            if args.chapters:
                return code
            # Accepting new English outputs accepts them in every translation too.
            return max(code, _translations([], sync=args.update, numbers=True))
        if args.command == "site":
            built = site.build(args.languages or None)
            print(f"built {len(built)} languages into {shown(site.SITE)}")
            return 0
        if args.command == "translations":
            return _translations(args.stamp, sync=args.sync_code)
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
