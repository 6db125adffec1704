"""The command line: ``python -m book execute | check | path | site | translations |
playground-cases``.

See ``python -m book --help`` and each command's ``--help``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from book import BookError, paths, shown, site, translations
from book.checker import check, check_docstrings, update
from book.executor import chapters, execute


def _numbers(status: translations.Status, executed: dict[Path, Path]) -> list[str]:
    """Numbers that a language's chapters quote and that no output on their page prints."""
    problems = []
    for page, merged in status.catalogs.items():
        if page.endswith(".py"):
            notebook = executed[paths.english() / page]
            problems += translations.number_problems(status.language, page, notebook, merged)
    return problems


def _translations(update: bool, executed: dict[Path, Path] | None = None) -> int:
    """Report every language against the English; write the merged catalogs first if asked.

    Given the ``executed`` chapters, also hold each translated chapter's prose numbers to
    their outputs.
    """
    failed = False
    for language in paths.translations():
        status = translations.status(language)  # each catalog merged once, then written
        for path in translations.update(status) if update else []:
            print(f"{shown(path)}: merged with the English of today")
        behind = {page: count for page, count in status.behind.items() if count}
        print(
            f"{language}: {len(status.behind) - len(status.missing)} of "
            f"{len(translations.english_pages())} pages, {status.units} paragraphs and figure "
            f"texts, {sum(behind.values())} behind the English, {len(status.problems)} problem(s)"
        )
        for page, count in behind.items():
            english = shown(paths.english() / page)
            print(f"  behind: {english}: {count} paragraph(s) (fuzzy or untranslated)")
        errors = [f"{shown(paths.DOCS / language / po)} has no English page" for po in status.extra]
        errors += status.problems
        if executed is not None and not status.failed:
            errors += _numbers(status, executed)
        for error in errors:
            print(f"error: {error}", file=sys.stderr)
        failed |= bool(errors)
    return 1 if failed else 0


def _playground(executed: dict[Path, Path]) -> int:
    """The playground's JavaScript against the package (the chapter-3 stages and the trained
    model), and its default view against the ``executed`` chapters' outputs
    (`book.playground`)."""
    from book import playground_check as check  # imports torch: only this check needs it

    def printed(uri: str) -> list[list[str]]:
        return check.printed_runs(executed[paths.english() / uri])

    problems = check.verify() + check.check_defaults(printed) + check.verify_trained()
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    print(
        f"playground: {len(check.STAGES)} stages, the default and random inputs against "
        f"the package, {len(check.PRINTED)} default matrices against the chapters, the "
        f"trained model on {check.TRAINED_SEQUENCES} random sequences: "
        + ("ok" if not problems else f"{len(problems)} problem(s)")
    )
    return 1 if problems else 0


def _check_all(executed: dict[Path, Path], fix: bool) -> int:
    reports = []
    for chapter, notebook in executed.items():
        if fix and update(chapter, executed=notebook):
            print(f"{shown(chapter)}: expected outputs rewritten")
        reports.append(check(chapter, executed=notebook))
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


def _path(args: argparse.Namespace) -> int:
    print(execute(args.chapter)[0])
    return 0


def _check(args: argparse.Namespace) -> int:
    """Each chapter executed (or found) once, its notebook handed to every check of it (only
    `book.trained` looks its chapter up again, for the playground's model)."""
    executed = {chapter.resolve(): execute(chapter)[0] for chapter in args.chapters or chapters()}
    code = _check_all(executed, fix=args.update)
    if args.chapters:
        return code
    return max(code, _playground(executed), _translations(update=False, executed=executed))


def _site(args: argparse.Namespace) -> int:
    built = site.build(args.languages or None)
    print(f"built {len(built)} languages into {shown(paths.SITE)}")
    return 0


def _playground_cases(args: argparse.Namespace) -> int:
    from book import playground  # imports torch, which only this command needs

    for line in sys.stdin:  # one JSON list of cases per line, one line of results for each
        if line.strip():
            print(json.dumps(playground.package_results(json.loads(line))), flush=True)
    return 0


MOVABLE = ("ROOT", "DOCS", "CONFIG", "PACKAGE", "CACHE")  # places of `book.paths` tests move


def _worker(places: dict[str, Path], threads: int) -> None:
    """A worker has its parent's places (its cache, its book), however started, and gives
    its kernels its share of the cores: torch's threads in kernels side by side competed for
    the same cores (two jobs on two cores executed every chapter in 136 s with two threads
    each, in 75 s with one). ``OMP_NUM_THREADS``, if set, is kept."""
    for name, place in places.items():
        setattr(paths, name, place)
    os.environ.setdefault("OMP_NUM_THREADS", str(threads))


def _timed(chapter: Path) -> tuple[Path, bool, float]:
    start = time.perf_counter()
    path, ran = execute(chapter)
    return path, ran, time.perf_counter() - start


def _execute(args: argparse.Namespace) -> int:
    """Execute the stale chapters, ``--jobs`` at a time, each in a kernel of its own."""
    todo = args.chapters or chapters()
    executed = 0
    jobs = max(1, min(args.jobs, len(todo)))
    threads = max(1, (os.cpu_count() or 1) // jobs)
    places = {name: getattr(paths, name) for name in MOVABLE}
    with ProcessPoolExecutor(jobs, initializer=_worker, initargs=(places, threads)) as pool:
        running = {pool.submit(_timed, chapter): chapter for chapter in todo}
        try:
            for done in as_completed(running):
                path, ran, seconds = done.result()
                executed += ran
                status = f"executed in {seconds:.1f} s" if ran else "up to date"
                print(f"{shown(running[done])}: {status} -> {shown(path)}", flush=True)
        except BookError:
            pool.shutdown(cancel_futures=True)  # the chapters not started yet
            raise
    print(f"{executed} of {len(todo)} chapters executed")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m book",
        description="Execute the book's chapters (with a cache) and check what they print.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("execute", help="execute stale chapters; print what ran")
    run.add_argument("chapters", nargs="*", type=Path, help="default: every chapter")
    run.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        help="chapters executed side by side (default: one per core)",
    )
    verify = sub.add_parser(
        "check", help="compare every output (chapters and docstrings) with what the source states"
    )
    verify.add_argument(
        "--update",
        action="store_true",
        help="first rewrite the expected outputs from execution",
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
        help="report each language's catalogs against the English: paragraphs behind, problems",
    )
    upkeep.add_argument(
        "--update",
        action="store_true",
        help="first merge every catalog with the English of today (msgmerge's way: changed "
        "paragraphs marked fuzzy, the old English kept beside them)",
    )
    sub.add_parser(
        "playground-cases",
        help="read lists of playground cases from stdin, one JSON list per line ([{stage, "
        "inputs}], or [{stage: 'trained', sequence}]), and print what the package computes for "
        "each list on a line of its own, until stdin ends (for the browser tests, which run "
        "without torch and start this once)",
    )
    args = parser.parse_args(argv)

    given = [*getattr(args, "chapters", []), *([args.chapter] if args.command == "path" else [])]
    for chapter in given:
        if not chapter.resolve().is_relative_to(paths.english()):
            print(
                f"error: {chapter}: only the English chapters ({shown(paths.english())}/) execute; "
                "a translation shows their outputs",
                file=sys.stderr,
            )
            return 2
    commands = {
        "path": _path,
        "check": _check,
        "site": _site,
        "translations": lambda args: _translations(update=args.update),
        "playground-cases": _playground_cases,
        "execute": _execute,
    }
    try:
        return commands[args.command](args)
    except BookError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
