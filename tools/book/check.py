"""Check that every output a chapter shows is the one its source states.

Each code cell states what it prints in an ``# Out:`` block (see `book.expectations`).
Checking takes the chapter's execution (`book.execute`), then compares each output with its
block, and each number quoted in the prose with the outputs that the English page shows (a
code cell marked ``lang="vi"`` is checked, but shown on that page only, `book.source`). The
package's docstring examples are run the same way. ``--update`` rewrites the blocks from
execution.

Messages name a cell by the line of its ``# %%`` marker in the chapter file.
"""

from __future__ import annotations

import doctest
import importlib
import io
import pkgutil
from pathlib import Path

import nbformat

from book import BookError, expectations, source
from book.build import ENGLISH, Build
from book.execute import cell_lines, executed


class Report:
    """What checking one chapter (or the docstrings) found."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.checked = 0  # outputs compared with their expectation
        self.prose = 0  # numbers quoted in prose and found in the outputs
        self.nondeterministic: list[str] = []  # "file, line N: reason"
        self.errors: list[str] = []


def _pair_code_cells(
    chapter: source.Chapter, nb: nbformat.NotebookNode
) -> list[tuple[source.Cell, nbformat.NotebookNode]]:
    """Match the source's code cells with the executed notebook's, in order."""
    source_code = chapter.code
    nb_code = [cell for cell in nb.cells if cell.cell_type == "code"]
    if len(source_code) != len(nb_code):
        raise BookError(
            f"{chapter.name}: {len(source_code)} code cells in the source but "
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


def check(build: Build, parsed: source.Chapter) -> Report:
    """Compare every output of the ``parsed`` chapter (`book.build.Build.chapter`) with what
    it states."""
    nb = nbformat.read(executed(build, parsed.path), as_version=4)
    report = Report(parsed.name)
    report.errors += source.lang_problems(parsed, build.languages)
    outputs = []  # the outputs the English prose may quote
    for stated, cell in _pair_code_cells(parsed, nb):
        where = f"{report.name}, line {stated.line}"
        actual = expectations.output_text(cell)
        if "nondeterministic" in cell.metadata:
            _nondeterministic(report, where, stated, cell.metadata["nondeterministic"])
            continue
        if source.shows(cell.metadata, ENGLISH):
            outputs.append(actual)
        _compare(report, where, stated, actual)
    code = tuple(
        c.source for c in nb.cells if c.cell_type == "code" and source.shows(c.metadata, ENGLISH)
    )
    for cell, line in zip(nb.cells, cell_lines(parsed, nb), strict=True):
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


def update(build: Build, chapter: Path) -> bool:
    """Rewrite the expected-output blocks of ``chapter`` from its execution.

    Returns:
        Whether the file changed.
    """
    nb = nbformat.read(executed(build, chapter), as_version=4)
    parsed = build.chapter(chapter)
    outputs = []
    for _, cell in _pair_code_cells(parsed, nb):
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


def check_docstrings(build: Build) -> Report:
    """Run every ``>>>`` example in the package, comparing outputs like the chapters do."""
    package = build.package.name
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
                    f"{test.name} ({build.shown(Path(test.filename))}):\n{output.getvalue()}"
                )
    return report
