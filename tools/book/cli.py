"""The command line: ``python -m book [--root DIR] execute | check | path | site |
translations | playground-cases``; see ``python -m book --help``."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import torch
from torch import Tensor

from book import BookError, playground, playground_check, publish, trained, translate
from book.build import TOOLING, Build
from book.check import Report, check, check_docstrings, update
from book.execute import execute


def _translations(build: Build, update: bool, numbers: bool) -> int:
    """Report every language against the English; write the merged catalogs first if asked;
    with ``numbers``, hold each translated chapter's prose numbers to its outputs too."""
    failed = False
    for language in build.translations:
        status = translate.status(build, language)
        for path in translate.update(build, status) if update else []:
            print(f"{build.shown(path)}: merged with the English of today")
        behind = {page: count for page, count in status.behind.items() if count}
        print(
            f"{language}: {len(status.behind) - len(status.missing)} of {len(build.pages())} "
            f"pages, {status.units} paragraphs and figure texts, {sum(behind.values())} behind "
            f"the English, {len(status.problems)} problem(s)"
        )
        for page, count in behind.items():
            english = build.shown(build.english / page)
            print(f"  behind: {english}: {count} paragraph(s) (fuzzy or untranslated)")
        folder = build.docs / language
        errors = [f"{build.shown(folder / po)} has no English page" for po in status.extra]
        errors += status.problems
        if numbers and not status.failed:
            for page in (page for page in status.pages if page.endswith(".py")):
                errors += translate.number_problems(build, language, page)
        for error in errors:
            print(f"error: {error}", file=sys.stderr)
        failed |= bool(errors)
    return 1 if failed else 0


def _playground(build: Build) -> int:
    """The playground's JavaScript against the package, its default view against the
    chapters' outputs (`book.playground_check`)."""
    check = playground_check
    problems = check.verify(build) + check.check_defaults(build) + check.verify_trained(build)
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    print(
        f"playground: {len(playground.STAGES)} stages, the default and random inputs against "
        f"the package, {len(check.PRINTED)} default matrices against the chapters, the "
        f"trained model on {check.TRAINED_SEQUENCES} random sequences: "
        + ("ok" if not problems else f"{len(problems)} problem(s)")
    )
    return 1 if problems else 0


def _summary(reports: list[Report]) -> int:
    *chapters, docstrings = reports
    for report in reports:
        status = "ok" if not report.errors else f"{len(report.errors)} problem(s)"
        print(f"{report.name}: {report.checked} outputs, {report.prose} prose numbers, {status}")
        for error in report.errors:
            print(f"error: {error}", file=sys.stderr)
    nondeterministic = [item for report in reports for item in report.nondeterministic]
    print(
        f"{sum(r.checked for r in chapters)} outputs checked in {len(chapters)} chapters, "
        f"{docstrings.checked} docstring examples, {sum(r.prose for r in reports)} prose "
        f"numbers, {len(nondeterministic)} nondeterministic (reasons listed)"
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


def _check(build: Build, args: argparse.Namespace) -> int:
    """Every chapter's outputs and the docstrings; with no chapter named, the playground and
    the translations too. Each chapter executes (or is found) once, in ``build``."""
    reports = []
    for chapter in args.chapters or build.chapters():
        if args.update and update(build, chapter):
            print(f"{build.shown(chapter)}: expected outputs rewritten")
        reports.append(check(build, build.chapter(chapter)))
    code = _summary([*reports, check_docstrings(build)])
    if args.chapters:
        return code
    return max(code, _playground(build), _translations(build, update=False, numbers=True))


def _timed(root: Path, chapter: Path) -> tuple[Path, bool, float]:
    """Execute one chapter in a worker, which makes the `Build` of ``root`` for itself."""
    start = time.perf_counter()
    path, ran = execute(Build(root), chapter)
    return path, ran, time.perf_counter() - start


def _execute(build: Build, args: argparse.Namespace) -> int:
    """Execute the stale chapters, ``--jobs`` at a time, each in a kernel of its own."""
    todo = args.chapters or build.chapters()
    executed = 0
    with ProcessPoolExecutor(max(1, min(args.jobs, len(todo)))) as pool:
        running = {pool.submit(_timed, build.root, chapter): chapter for chapter in todo}
        try:
            for done in as_completed(running):
                path, ran, seconds = done.result()
                executed += ran
                status = f"executed in {seconds:.1f} s" if ran else "up to date"
                print(f"{build.shown(running[done])}: {status} -> {build.shown(path)}", flush=True)
        except BookError:
            pool.shutdown(cancel_futures=True)  # the chapters not started yet
            raise
    print(f"{executed} of {len(todo)} chapters executed")
    return 0


def package_results(build: Build, cases: list[dict]) -> list[dict]:
    """The package's float32 results for each case (``stage``, ``inputs``), as JSON-ready
    lists, ``-inf`` as the string ``"-inf"``: for tests that cannot import torch. A case of
    the stage ``trained`` gives a ``sequence`` instead (`book.trained.package_result`)."""

    def plain(tensor: Tensor) -> list[list[float | str]]:
        return [
            [playground.format_value(v) if v == float("-inf") else v for v in row]
            for row in tensor.tolist()
        ]

    results = []
    for case in cases:
        if case["stage"] == "trained":
            results.append(trained.package_result(build, case["sequence"]))
            continue
        found = playground.reference(case["stage"], case["inputs"], torch.float32)
        results.append(
            {
                "heads": [
                    {m: plain(head[m]) for m in playground.matrices(case["stage"])}
                    for head in found["heads"]
                ],
                "context": plain(found["context"]),
            }
        )
    return results


def _playground_cases(build: Build, args: argparse.Namespace) -> int:
    for line in sys.stdin:  # one JSON list of cases per line, one line of results for each
        if line.strip():
            found = package_results(build, json.loads(line))
            print(json.dumps(found), flush=True)
    return 0


def _site(build: Build, args: argparse.Namespace) -> int:
    """The playground's JavaScript against the package (a difference beyond float32 rounding
    stops the build before anything is written), then every language (`book.publish`)."""
    problems = playground_check.verify(build) + playground_check.verify_trained(build)
    if problems:
        raise BookError("\n".join([*problems[:10], f"{len(problems)} difference(s) in all"]))
    built = publish.build_site(build, args.languages)
    print(f"built {len(built)} languages into {build.shown(build.site)}")
    return 0


COMMANDS = {
    "execute": _execute,
    "check": _check,
    "path": lambda build, args: print(execute(build, args.chapter)[0]) or 0,
    "site": _site,
    "translations": lambda build, args: _translations(build, args.update, numbers=False),
    "playground-cases": _playground_cases,
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m book",
        description="Execute the book's chapters (with a cache), check them, build the site.",
    )
    parser.add_argument(
        "--root", type=Path, default=TOOLING, help="the checkout (default: %(default)s)"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("execute", help="execute stale chapters; print what ran")
    run.add_argument("chapters", nargs="*", type=Path, help="default: every chapter")
    run.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        help="chapters executed side by side, one thread each (default: one per core)",
    )
    verify = sub.add_parser(
        "check", help="compare every output (chapters and docstrings) with what the source states"
    )
    verify.add_argument(
        "--update", action="store_true", help="first rewrite the expected outputs from execution"
    )
    verify.add_argument("chapters", nargs="*", type=Path, help="default: every chapter")
    show = sub.add_parser("path", help="print the executed notebook's path (executing if stale)")
    show.add_argument("chapter", type=Path)
    site = sub.add_parser(
        "site", help="build every language into site/<lang>/ (strict), and the root"
    )
    site.add_argument("languages", nargs="*", help="only English and these (default: all)")
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
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        build = Build(args.root)
        given = [*getattr(args, "chapters", []), *filter(None, [getattr(args, "chapter", None)])]
        for chapter in given:
            if not chapter.resolve().is_relative_to(build.english):
                print(
                    f"error: {chapter}: only the English chapters ({build.shown(build.english)}/) "
                    "execute; a translation shows their outputs",
                    file=sys.stderr,
                )
                return 2
        return COMMANDS[args.command](build, args)
    except BookError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
