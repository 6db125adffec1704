"""Check that every output a chapter shows is the one its source states.

Each code cell states what it prints in an ``# Out:`` block (see `book.expectations`).
Checking executes the chapter if it is stale (`book.executor`), then compares each output
with its block, and each number quoted in the prose with the outputs that the English page
shows (a code cell marked ``lang="vi"`` is checked, but shown on that page only, `book.lang`;
a ``lang`` that is not a language of the book is an error). The package's docstring examples
are run the same way. ``--update`` rewrites the blocks from execution.

Messages name a cell by the line of its ``# %%`` marker in the chapter file.
"""

from __future__ import annotations

import doctest
import importlib
import io
import pkgutil
from pathlib import Path

import nbformat

from book import BookError, expectations, lang, paths, shown, source
from book.executor import cell_lines, execute


class Report:
    """What checking one chapter (or the docstrings) found."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.checked = 0  # outputs compared with their expectation
        self.prose = 0  # numbers quoted in prose and found in the outputs
        self.nondeterministic: list[str] = []  # "file, line N: reason"
        self.errors: list[str] = []


def _pair_code_cells(
    chapter: Path, nb: nbformat.NotebookNode, source_cells: tuple[source.Cell, ...]
) -> list[tuple[source.Cell, nbformat.NotebookNode]]:
    """Match the source's code cells with the executed notebook's, in order."""
    source_code = [cell for cell in source_cells if cell.is_code]
    nb_code = [cell for cell in nb.cells if cell.cell_type == "code"]
    if len(source_code) != len(nb_code):
        raise BookError(
            f"{shown(chapter)}: {len(source_code)} code cells in the source but "
            f"{len(nb_code)} in the executed notebook; is a cell marker malformed?"
        )
    return list(zip(source_code, nb_code, strict=True))


def _compare(report: Report, where: str, stated: source.Cell, actual: str) -> None:
    """Hold one output to the block its cell states (or to stating none)."""
    if stated.expected is None:
        if actual:
            report.errors.append(
                f"{where}: printed output but states none; add a '{source.OUT}' "
                f"block (nox -s examples -- --update) or mark it nondeterministic\n"
                + "\n".join(f"    | {line}" for line in actual.splitlines())
            )
        return
    expected = "\n".join(stated.expected)
    mismatch = expectations.compare(expected, actual)
    report.checked += 1
    if mismatch is not None:
        diff = expectations.diff(expected, actual).splitlines()
        report.errors.append(
            f"{where}: output differs from the source\n  {mismatch.describe()}\n"
            + "\n".join(f"    {line}" for line in diff)
        )


def _nondeterministic(report: Report, where: str, stated: source.Cell, reason: object) -> None:
    """A cell whose output cannot be fixed: it gives its reason and states no output."""
    if not isinstance(reason, str) or not reason.strip():
        report.errors.append(
            f"{where}: marked nondeterministic without a reason; write "
            f'nondeterministic="why its output cannot be fixed"'
        )
    elif stated.expected is not None:
        report.errors.append(f"{where}: marked nondeterministic but states an output")
    else:
        report.nondeterministic.append(f"{where}: {reason}")


def check(chapter: Path, source_text: str | None = None, *, executed: Path | None = None) -> Report:
    """Compare every output of ``chapter`` with what its source states.

    Args:
        chapter: The chapter source file.
        source_text: Check these stated outputs instead of the file's (same code cells).
        executed: Its executed notebook, from the caller's `execute` (else executed here).
    """
    nb = nbformat.read(executed or execute(chapter)[0], as_version=4)
    report = Report(shown(chapter))
    report.errors += lang.problems(chapter, paths.translations())
    stated_cells = (
        source.read(chapter) if source_text is None else source.parse(source_text, chapter)
    ).cells
    outputs = []  # the outputs the English prose may quote
    for stated, cell in _pair_code_cells(chapter, nb, stated_cells):
        where = f"{report.name}, line {stated.line}"
        actual = expectations.output_text(cell)
        if "nondeterministic" in cell.metadata:
            _nondeterministic(report, where, stated, cell.metadata["nondeterministic"])
            continue
        if lang.shows(cell.metadata, paths.ENGLISH):
            outputs.append(actual)
        _compare(report, where, stated, actual)
    code = tuple(
        c.source
        for c in nb.cells
        if c.cell_type == "code" and lang.shows(c.metadata, paths.ENGLISH)
    )
    for cell, line in zip(nb.cells, cell_lines(source.read(chapter), nb), strict=True):
        if cell.cell_type != "markdown":
            continue
        for number in expectations.prose_numbers(cell.source):
            if expectations.appears_in(number, outputs, code):
                report.prose += 1
            else:
                report.errors.append(
                    f"{report.name}, line {line}: the prose quotes {number}, which no output "
                    "of the chapter prints"
                )
    return report


def update(chapter: Path, *, executed: Path | None = None) -> bool:
    """Rewrite the expected-output blocks of ``chapter`` from its execution (``executed``, as
    for `check`).

    Returns:
        Whether the file changed.
    """
    nb = nbformat.read(executed or execute(chapter)[0], as_version=4)
    parsed = source.read(chapter)
    outputs = []
    for _, cell in _pair_code_cells(chapter, nb, parsed.cells):
        actual = expectations.output_text(cell)
        nondeterministic = cell.metadata.get("nondeterministic") is not None
        outputs.append(actual.splitlines() if actual and not nondeterministic else None)
    return parsed.stating(outputs).write()


class _NumericChecker(doctest.OutputChecker):
    """Docstring examples follow the chapters' rules: numbers to their printed precision."""

    def check_output(self, want: str, got: str, optionflags: int) -> bool:
        return expectations.compare(want, got) is None

    def output_difference(self, example: doctest.Example, got: str, optionflags: int) -> str:
        mismatch = expectations.compare(example.want, got)
        detail = mismatch.describe() if mismatch else ""
        return f"  {detail}\n" + expectations.diff(example.want, got) + "\n"


def check_docstrings(package: str = paths.PACKAGE.name) -> Report:
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
                    f"{test.name} ({shown(Path(test.filename))}):\n{output.getvalue()}"
                )
    return report
