"""The book's notebook plumbing: execute every chapter once and hand the result to MkDocs.

Chapters are Jupytext "percent" scripts (``docs/<lang>/**/*.py``). Each is executed into a
notebook with outputs, cached under ``.cache/book/`` with a key made of

- the chapter's source, without its expected-output blocks,
- every file of ``src/attention_mechanisms/``,
- the installed torch version and the Python version,
- this file,

so a change to any of them executes the chapter again, and a rebuild with nothing changed
executes nothing. That one executed notebook is what the page shows and what the reader
downloads.

Executing also checks the chapter: a cell that raises fails the build, unless it is tagged
``raises-exception`` and states the error it must raise in its ``raises`` metadata, e.g.
``# %% tags=["raises-exception"] raises="ValueError: d_out must be divisible"``; the build
then fails if the cell does *not* raise that error.

A code cell marked ``include="attention_mechanisms.<module>.<Name>"`` must be empty: it is
filled with that class's or function's source, read from the package, before execution, so
the page shows the shipped code and the notebook defines it (see ``include_sources``).

Checking compares every output with the ``# Out:`` block its cell states (see
``tools/expectations.py``), and runs the package's docstring examples the same way.

Use it from the command line (``python tools/book.py --help``: ``execute``, ``check
[--update]``, ``path``) or as a MkDocs hook (``hooks: [tools/book.py]`` in ``mkdocs.yml``),
which executes stale chapters when the site is built, reports any output that differs from
its source as a warning (so a strict build fails), and points each chapter page at its
executed notebook.
"""

from __future__ import annotations

import argparse
import ast
import doctest
import hashlib
import importlib
import importlib.metadata
import io
import logging
import pkgutil
import posixpath
import re
import shutil
import sys
import time
from pathlib import Path

import expectations
import jupytext
import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PACKAGE = ROOT / "src" / "attention_mechanisms"
CACHE = ROOT / ".cache" / "book"
MATHJAX = ROOT / "node_modules" / "mathjax" / "es5" / "tex-svg.js"
CELL_TIMEOUT = 600  # seconds; the slowest cell (the benchmark chapter) stays well below

log = logging.getLogger("mkdocs.hooks.book")


class BookError(RuntimeError):
    """A chapter failed to execute or broke one of the book's rules."""


# --------------------------------------------------------------------------- execution


def chapters(docs_dir: Path = DOCS) -> list[Path]:
    """Every chapter source under ``docs_dir``: all ``*.py`` files (MkDocs pages)."""
    return sorted(p for p in docs_dir.rglob("*.py") if "overrides" not in p.parts)


def cache_key(chapter: Path) -> str:
    """Hash of everything that can change what the chapter prints."""
    digest = hashlib.sha256()
    digest.update(Path(__file__).read_bytes())
    # Expected outputs are not executed, so editing them does not execute the chapter again.
    digest.update(expectations.strip_expected(chapter.read_text(encoding="utf-8")).encode())
    for path in sorted(PACKAGE.rglob("*.py")):
        digest.update(path.relative_to(PACKAGE).as_posix().encode())
        digest.update(path.read_bytes())
    digest.update(f"torch=={importlib.metadata.version('torch')}".encode())
    digest.update(f"python=={sys.version_info.major}.{sys.version_info.minor}".encode())
    return digest.hexdigest()[:16]


def _chapter_dir(chapter: Path) -> Path:
    chapter = chapter.resolve()
    if chapter.is_relative_to(DOCS):
        return CACHE / chapter.relative_to(DOCS).with_suffix("")
    # A chapter outside docs/ (the plumbing's own tests use some): one folder per path.
    return CACHE / "other" / hashlib.sha256(str(chapter).encode()).hexdigest()[:16]


def executed_path(chapter: Path) -> Path:
    """Where the executed notebook of ``chapter`` is cached (it may not exist yet)."""
    return _chapter_dir(chapter) / cache_key(chapter) / f"{chapter.stem}.ipynb"


def _shown(path: Path) -> str:
    """``path`` relative to the repository when it is inside it, for messages."""
    path = path.resolve()
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)


def _error_of(cell: nbformat.NotebookNode) -> tuple[str, str] | None:
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return output["ename"], output["evalue"]
    return None


def check_raises(nb: nbformat.NotebookNode, chapter: Path) -> None:
    """Every ``raises-exception`` cell raised the error its ``raises`` metadata states."""
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        tagged = "raises-exception" in cell.metadata.get("tags", [])
        stated = cell.metadata.get("raises")
        where = f"{_shown(chapter)}, cell {index}"
        if tagged != (stated is not None):
            raise BookError(
                f"{where}: a cell that must raise needs both the tag 'raises-exception' and "
                f'the metadata raises="ExceptionType: message start"; got tags='
                f"{cell.metadata.get('tags', [])}, raises={stated!r}"
            )
        if not tagged:
            continue
        expected_type, _, expected_message = stated.partition(":")
        expected_message = expected_message.strip()
        error = _error_of(cell)
        if error is None:
            raise BookError(f"{where}: expected {stated!r}, but the cell raised nothing")
        ename, evalue = error
        if ename != expected_type.strip() or not evalue.startswith(expected_message):
            raise BookError(f"{where}: expected {stated!r}, got {ename}: {evalue}")


def package_source(qualified: str) -> str:
    """The source of a class or function of the package, e.g. ``"attention_mechanisms.causal.X"``.

    Read from the file, not imported, so a rebuild after an edit always shows the edit.
    """
    module, _, name = qualified.rpartition(".")
    package, _, file = module.partition(".")
    path = PACKAGE / f"{file}.py"
    if package != PACKAGE.name or "." in file or not path.is_file():
        raise BookError(f"include={qualified!r}: expected {PACKAGE.name}.<module>.<name>")
    text = path.read_text(encoding="utf-8")
    for node in ast.parse(text).body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef) and node.name == name:
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            return "\n".join(text.splitlines()[first - 1 : node.end_lineno])
    raise BookError(f"include={qualified!r}: {_shown(path)} defines no class or function {name}")


def include_sources(nb: nbformat.NotebookNode, chapter: Path) -> None:
    """Fill each empty code cell marked ``include="package.module.Name"`` with that source.

    The page then shows the package's own code, and the notebook defines it: the reader can
    edit the class there and run the cells after it again.
    """
    for index, cell in enumerate(nb.cells):
        qualified = cell.metadata.get("include")
        if cell.cell_type != "code" or qualified is None:
            continue
        if cell.source.strip():
            raise BookError(
                f"{_shown(chapter)}, cell {index}: a cell marked include={qualified!r} must be "
                f"empty, since the package's source replaces it; got {cell.source[:60]!r}"
            )
        cell.source = package_source(qualified)
        del cell.metadata["include"]


def _html_cell(html: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_raw_cell(html, metadata={"raw_mimetype": "text/html"})


def wrap_solutions(nb: nbformat.NotebookNode) -> None:
    """Fold each run of cells tagged ``solution`` into a collapsible ``<details>`` block.

    nbconvert copies raw HTML cells into the page as they are, so an opening and a closing
    cell around the run are enough; Material styles ``<details class="success">``.
    """
    cells = []
    in_solution = False
    for cell in nb.cells:
        is_solution = "solution" in cell.metadata.get("tags", [])
        if is_solution and not in_solution:
            cells.append(_html_cell('<details class="success"><summary>Solution</summary>'))
        elif in_solution and not is_solution:
            cells.append(_html_cell("</details>"))
        cells.append(cell)
        in_solution = is_solution
    if in_solution:
        cells.append(_html_cell("</details>"))
    nb.cells = cells


def execute(chapter: Path) -> tuple[Path, bool]:
    """Return the executed notebook of ``chapter``, executing it only if it is stale.

    Returns:
        ``(path, ran)``: the cached notebook and whether it was executed just now.

    Raises:
        BookError: If a cell fails or a ``raises-exception`` cell does not raise as stated.
    """
    chapter = chapter.resolve()
    target = executed_path(chapter)
    if target.exists():
        return target, False

    source = expectations.strip_expected(chapter.read_text(encoding="utf-8"))
    nb = jupytext.reads(source, fmt="py:percent")
    include_sources(nb, chapter)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    client = NotebookClient(
        nb,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        allow_errors=False,  # only cells tagged raises-exception may raise
        record_timing=False,  # keep the notebook free of timestamps
        # The kernel's start-up notices (not cell errors) would clutter every build log.
        extra_arguments=["--IPKernelApp.log_level=ERROR"],
        resources={"metadata": {"path": str(chapter.parent)}},
    )
    try:
        client.execute()
    except CellExecutionError as error:
        index = next(i for i, cell in enumerate(nb.cells) if _error_of(cell) is not None)
        raise BookError(
            f"{_shown(chapter)}, cell {index}: raised {error.ename}: {error.evalue}\n"
            f"{nb.cells[index].source}\n(a cell that is meant to raise needs the tag "
            '"raises-exception" and raises="ExceptionType: message start")'
        ) from None
    check_raises(nb, chapter)
    wrap_solutions(nb)

    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    nbformat.write(nb, partial)
    partial.replace(target)
    # Keep only the current execution of this chapter.
    for old in target.parent.parent.iterdir():
        if old != target.parent:
            shutil.rmtree(old)
    return target, True


# --------------------------------------------------------------------------- checking


class Report:
    """What checking one chapter (or the docstrings) found."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.checked = 0  # outputs compared with their expectation
        self.prose = 0  # numbers quoted in prose and found in the outputs
        self.nondeterministic: list[str] = []  # "cell N: reason"
        self.errors: list[str] = []


def _pair_code_cells(
    chapter: Path, nb: nbformat.NotebookNode, source_cells: list[expectations.SourceCell]
) -> list[tuple[expectations.SourceCell, nbformat.NotebookNode]]:
    """Match the source's code cells with the executed notebook's, in order."""
    source_code = [cell for cell in source_cells if cell.is_code]
    nb_code = [cell for cell in nb.cells if cell.cell_type == "code"]
    if len(source_code) != len(nb_code):
        raise BookError(
            f"{_shown(chapter)}: {len(source_code)} code cells in the source but "
            f"{len(nb_code)} in the executed notebook; is a cell marker malformed?"
        )
    return list(zip(source_code, nb_code, strict=True))


def check(chapter: Path, source_text: str | None = None) -> Report:
    """Compare every output of ``chapter`` with what its source states.

    Args:
        chapter: The chapter source file.
        source_text: Check these stated outputs instead of the file's (same code cells).
    """
    path, _ = execute(chapter)
    nb = nbformat.read(path, as_version=4)
    report = Report(_shown(chapter))
    outputs = []
    if source_text is None:
        source_text = chapter.read_text(encoding="utf-8")
    _, source_cells = expectations.split_cells(source_text)
    for index, (source, cell) in enumerate(_pair_code_cells(chapter, nb, source_cells)):
        where = f"{report.name}, code cell {index} (line {source.line})"
        actual = expectations.output_text(cell)
        reason = cell.metadata.get("nondeterministic")
        if reason is not None:
            if not isinstance(reason, str) or not reason.strip():
                report.errors.append(
                    f"{where}: marked nondeterministic without a reason; write "
                    f'nondeterministic="why its output cannot be fixed"'
                )
            elif source.expected is not None:
                report.errors.append(f"{where}: marked nondeterministic but states an output")
            else:
                report.nondeterministic.append(f"{report.name}, line {source.line}: {reason}")
            continue
        outputs.append(actual)
        if source.expected is None:
            if actual:
                report.errors.append(
                    f"{where}: printed output but states none; add a '{expectations.OUT}' "
                    f"block (nox -s examples -- --update) or mark it nondeterministic\n"
                    + "\n".join(f"    | {line}" for line in actual.splitlines())
                )
            continue
        stated = "\n".join(source.expected)
        mismatch = expectations.compare(stated, actual)
        report.checked += 1
        if mismatch is not None:
            report.errors.append(
                f"{where}: output differs from the source\n  {mismatch.describe()}\n"
                + "\n".join(
                    f"    {line}" for line in expectations.diff(stated, actual).splitlines()
                )
            )
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            continue
        for number in expectations.prose_numbers(cell.source):
            if expectations.appears_in(number, outputs):
                report.prose += 1
            else:
                report.errors.append(
                    f"{report.name}, Markdown cell {index}: the prose quotes {number}, which "
                    f"no output of the chapter prints"
                )
    return report


def update(chapter: Path) -> bool:
    """Rewrite the expected-output blocks of ``chapter`` from its execution.

    Returns:
        Whether the file changed.
    """
    path, _ = execute(chapter)
    nb = nbformat.read(path, as_version=4)
    text = chapter.read_text(encoding="utf-8")
    header, cells = expectations.split_cells(text)
    for source, cell in _pair_code_cells(chapter, nb, cells):
        actual = expectations.output_text(cell)
        nondeterministic = cell.metadata.get("nondeterministic") is not None
        source.expected = actual.splitlines() if actual and not nondeterministic else None
    new = expectations.join_cells(header, cells)
    if new != text:
        chapter.write_text(new, encoding="utf-8")
    return new != text


class _NumericChecker(doctest.OutputChecker):
    """Docstring examples follow the chapters' rules: numbers to their printed precision."""

    def check_output(self, want: str, got: str, optionflags: int) -> bool:
        return expectations.compare(want, got) is None

    def output_difference(self, example: doctest.Example, got: str, optionflags: int) -> str:
        mismatch = expectations.compare(example.want, got)
        detail = mismatch.describe() if mismatch else ""
        return f"  {detail}\n" + expectations.diff(example.want, got) + "\n"


def check_docstrings(package: str = "attention_mechanisms") -> Report:
    """Run every ``>>>`` example in the package, comparing outputs like the chapters do."""
    root = importlib.import_module(package)
    report = Report(f"docstrings of {package}")
    finder = doctest.DocTestFinder(exclude_empty=True)
    for info in pkgutil.walk_packages(root.__path__, prefix=f"{package}."):
        module = importlib.import_module(info.name)
        for test in finder.find(module):
            if not test.examples:
                continue
            output = io.StringIO()
            runner = doctest.DocTestRunner(checker=_NumericChecker(), optionflags=doctest.ELLIPSIS)
            result = runner.run(test, out=output.write)
            report.checked += result.attempted - result.failed
            if result.failed:
                report.errors.append(
                    f"{test.name} ({_shown(Path(test.filename))}):\n{output.getvalue()}"
                )
    return report


# --------------------------------------------------------------------------- MkDocs hook


def on_files(files, config):
    """Execute stale chapters, check their outputs, point each page at its notebook."""
    from mkdocs.structure.files import File

    docs_dir = Path(config["docs_dir"]).resolve()
    for file in list(files):
        if not file.src_uri.endswith(".py"):
            continue
        chapter = docs_dir / file.src_uri
        start = time.perf_counter()
        try:
            path, ran = execute(chapter)
        except BookError as error:
            from mkdocs.exceptions import PluginError

            raise PluginError(str(error)) from None
        if ran:
            log.info("executed %s in %.1f s", file.src_uri, time.perf_counter() - start)
        # The page shows exactly these outputs, so they must be the ones the source states.
        for problem in check(chapter).errors:
            log.warning(problem)
        # mkdocs-jupyter renders, and offers for download, whatever this path points at.
        file.abs_src_path = str(path)

    if not MATHJAX.exists():
        from mkdocs.exceptions import PluginError

        raise PluginError(f"{MATHJAX.relative_to(ROOT)} is missing: run `npm ci` first")
    files.append(
        File.generated(config, "assets/javascripts/mathjax/tex-svg.js", abs_src_path=str(MATHJAX))
    )
    return files


# nbconvert's notebook template loads MathJax 2 (from a CDN, or from "" when no URL is set)
# and mermaid from public CDNs. The site typesets math with its own copy of MathJax 3 and
# draws no diagrams in notebooks, so those tags are dropped.
_CDN_SCRIPTS = [
    re.compile(r"<!-- Load mathjax -->\s*<script[^>]*>\s*</script>"),
    re.compile(r"<!-- MathJax configuration -->.*?<!-- End of mathjax configuration -->", re.S),
    re.compile(r"<script type=\"module\">(?:(?!</script>).)*\bmermaid\b.*?</script>", re.S),
]
# Cross-references in notebook Markdown use the autorefs syntax, [title][identifier], which
# nbconvert leaves as text; turn them into the tag that autorefs resolves (or reports).
_CROSS_REFERENCE = re.compile(r"\[([^\[\]]+)\]\[(attention_mechanisms(?:\.\w+)+)\]")
# Links between pages are written to source files, as in Markdown pages (page.py, page.md);
# nbconvert leaves them as they are, so point them at the built pages here.
_LOCAL_LINK = re.compile(r'href="(?![a-z]+:|#|/)([^"#]+\.(?:py|md))(#[^"]*)?"')


def _link_to_page(match: re.Match, page, files) -> str:
    target = posixpath.normpath(posixpath.join(posixpath.dirname(page.file.src_uri), match[1]))
    file = files.get_file_from_path(target)
    if file is None:
        log.warning("%s links to %s, which is not a page of this site", page.file.src_uri, target)
        return match[0]
    return f'href="{file.url_relative_to(page.file)}{match[2] or ""}"'


def on_page_content(html, page, config, files):
    """On notebook pages: drop CDN scripts, resolve links and mark cross-references."""
    if not page.file.src_uri.endswith(".py"):
        return html
    for pattern in _CDN_SCRIPTS:
        html = pattern.sub("", html)
    html = _LOCAL_LINK.sub(lambda match: _link_to_page(match, page, files), html)
    return _CROSS_REFERENCE.sub(r'<autoref identifier="\2">\1</autoref>', html)


# --------------------------------------------------------------------------- CLI


def _check_all(paths: list[Path], fix: bool) -> int:
    reports = []
    for chapter in paths:
        if fix and update(chapter):
            print(f"{_shown(chapter)}: expected outputs rewritten")
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
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
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
            print(f"{_shown(chapter)}: {status} -> {_shown(path)}")
        print(f"{executed} of {len(todo)} chapters executed")
        return 0
    except BookError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
