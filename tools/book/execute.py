"""Execute a chapter into a notebook with outputs, once per change, and enforce its rules.

Each chapter is executed with nbclient into the store ``.cache/book/`` (`book.build.Store`),
under its key (`cache_key`: its source without the expected outputs, every file of the
package, the modules of this tooling that decide what executes, and the installed
distributions), so a change to any of them executes the chapter again, and a rebuild with
nothing changed executes nothing. The cached notebook is
what the page shows and what the reader downloads: a plain nbformat 4 notebook, whatever the
site does to present it.

The rules:

- A cell that raises fails, unless it is tagged ``raises-exception`` and states the error
  in its ``raises`` metadata, e.g.
  ``# %% tags=["raises-exception"] raises="ValueError: d_out must be divisible"``; such a
  cell fails if it does *not* raise that error.
- A code cell marked ``include="attention_mechanisms.<module>.<Name>"`` must be empty: it is
  filled with that class's or function's source before execution, as the book shows it
  (`book.include`: no docstrings, no annotations), so the page shows the shipped code and
  the notebook defines it. The cell is tagged ``include:<name>`` instead, so that the page
  can link to the full source in the API reference. Marked ``diff_from="<module>.<Name>"``
  too, it also gets the diff from that class as an output after execution.
- A code cell marked ``export="<name> ..."`` names what the build and the tests need after
  the chapter ran (the trained model and its losses, `book.trained`): one more cell, run
  last and kept out of the notebook, saves them beside the executed notebook
  (`exports_path`), so a model is trained once per execution, never again.

Messages name a cell by the line of its ``# %%`` marker in the chapter file.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import nbformat
from filelock import FileLock
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from book import BookError, include, source
from book.build import Build, digest, environment

CELL_TIMEOUT = 600  # seconds; the slowest cell (the benchmark chapter) stays well below
# Torch threads in a chapter's kernel, unless OMP_NUM_THREADS says otherwise. The chapters'
# tensors are small, and on a busy machine threads wait on each other at every kernel: one
# thread slows down in proportion to the load; two slowed the chapter that trains a model 14
# times. Chapters executed side by side each have a core.
KERNEL_THREADS = 1
TOOLING = (__file__, source.__file__, include.__file__)  # what decides what executes


@functools.cache
def _environment() -> str:
    return environment()


def cache_key(build: Build, chapter: source.Chapter) -> str:
    """Hash of everything that can change what ``chapter`` shows (see the module doc)."""
    package = sorted(
        p for p in build.package.rglob("*") if p.is_file() and "__pycache__" not in p.parts
    )
    parts: list[bytes | str] = [Path(module).read_bytes() for module in TOOLING]
    for path in package:
        parts += [path.relative_to(build.package).as_posix(), path.read_bytes()]
    return digest([*parts, _environment(), chapter.text(expected=False)])


def executed_path(build: Build, chapter: source.Chapter) -> Path:
    """Where the executed notebook of ``chapter`` is kept (it may not exist yet)."""
    name = chapter.path.relative_to(build.docs).with_suffix("").as_posix()
    return build.store("book").path(name, cache_key(build, chapter), f"{chapter.path.stem}.ipynb")


def exports_path(notebook: Path) -> Path:
    """Where the values that a chapter's ``export`` marks name are saved, beside its notebook."""
    return notebook.with_name("exports.pt")


def executed(build: Build, chapter: Path) -> Path:
    """The executed notebook of ``chapter`` (`execute`)."""
    return execute(build, chapter)[0]


def execute(build: Build, chapter: Path) -> tuple[Path, bool]:
    """Return the executed notebook of ``chapter``, executing it only if it is stale.

    Returns:
        ``(path, ran)``: the stored notebook and whether it was executed just now.

    Raises:
        BookError: If a cell fails or a ``raises-exception`` cell does not raise as stated.
    """
    chapter = chapter.resolve()
    if chapter in build.executions:
        return build.executions[chapter], False
    if not chapter.is_relative_to(build.english):
        raise BookError(
            f"{build.shown(chapter)}: only the English chapters ({build.shown(build.english)}/) "
            "execute; a translation shows their outputs"
        )
    parsed = build.chapter(chapter)  # the key and the run read the same text
    target, ran = executed_path(build, parsed), False
    if not target.exists():
        # Processes that ask for the same chapter at once (the test workers, the site build)
        # take turns: the first executes it, the others find its result.
        lock = target.parent.parent.with_suffix(".lock")
        lock.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(lock):
            if not target.exists():
                _run(build, parsed, target)
                ran = True
    build.executions[chapter] = target
    return target, ran


def cell_lines(chapter: source.Chapter, nb: nbformat.NotebookNode) -> list[int]:
    """The line of each cell's ``# %%`` marker in the chapter file, in notebook order."""
    if len(chapter.lines) != len(nb.cells):
        raise BookError(
            f"{chapter.name}: {len(chapter.lines)} '# %%' markers but {len(nb.cells)} "
            "notebook cells; does code come before the first marker?"
        )
    return chapter.lines


def _error_of(cell: nbformat.NotebookNode) -> tuple[str, str] | None:
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return output["ename"], output["evalue"]
    return None


def check_raises(nb: nbformat.NotebookNode, chapter: source.Chapter) -> None:
    """Every ``raises-exception`` cell raised the error its ``raises`` metadata states."""
    for cell, line in zip(nb.cells, cell_lines(chapter, nb), strict=True):
        if cell.cell_type != "code":
            continue
        tagged = "raises-exception" in cell.metadata.get("tags", [])
        stated = cell.metadata.get("raises")
        where = f"{chapter.name}, line {line}"
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


def include_sources(nb: nbformat.NotebookNode, chapter: source.Chapter, package: Path) -> None:
    """Fill each empty code cell marked ``include="package.module.Name"`` with that source.

    The page then shows the package's own code, and the notebook defines it: the reader can
    edit the class there and run the cells after it again.
    """
    for cell, line in zip(nb.cells, cell_lines(chapter, nb), strict=True):
        qualified = cell.metadata.get("include")
        if qualified is None and "diff_from" in cell.metadata:
            raise BookError(
                f"{chapter.name}, line {line}: diff_from= shows an included class as its "
                'changes; the cell must also be marked include="<module>.<Name>"'
            )
        if cell.cell_type != "code" or qualified is None:
            continue
        if cell.source.strip():
            raise BookError(
                f"{chapter.name}, line {line}: a cell marked include={qualified!r} must be "
                f"empty, since the package's source replaces it; got {cell.source[:60]!r}"
            )
        cell.source = include.book_source(qualified, package)
        # The page links to the full source (book.page): nbconvert shows tags as classes.
        cell.metadata.setdefault("tags", []).append(f"include:{qualified}")
        del cell.metadata["include"]
        base = cell.metadata.pop("diff_from", None)
        if base is not None:  # shown as the lines that change from base
            include.book_source(base, package)  # a name that is not in the package fails here
            cell.metadata["tags"].append(f"{include.DIFF_TAG}{base}")


def _add_export(nb: nbformat.NotebookNode, chapter: source.Chapter, target: Path) -> bool:
    """Append the cell that saves every variable a cell marks ``export=``; whether there is one."""
    marks = [cell.metadata["export"] for cell in nb.cells if "export" in cell.metadata]
    names = [name for mark in marks for name in str(mark).split()]
    if not all(isinstance(mark, str) and mark.split() for mark in marks) or not all(
        name.isidentifier() for name in names
    ):
        raise BookError(f'{chapter.name}: export= must name variables: export="model losses"')
    if not names:
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    models = ", ".join(f"{name!r}: _plain({name})" for name in names)
    code = "import torch as _torch\nfrom book.trained import plain as _plain\n"
    code += f"_torch.save({{{models}}}, {str(exports_path(target))!r})"
    nb.cells.append(nbformat.v4.new_code_cell(code))
    return True


def _run(build: Build, parsed: source.Chapter, target: Path) -> None:
    """Execute the ``parsed`` chapter and store the notebook at ``target`` (see `execute`)."""
    nb = parsed.notebook()
    include_sources(nb, parsed, build.package)
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
        # A print before a slow step arrives as a stream of its own; one block per cell.
        coalesce_streams=True,
        # The kernel's start-up notices (not cell errors) would clutter every build log.
        extra_arguments=["--IPKernelApp.log_level=ERROR"],
        resources={"metadata": {"path": str(parsed.path.parent)}},
    )
    exporting = _add_export(nb, parsed, target)
    threads = os.environ.get("OMP_NUM_THREADS", str(KERNEL_THREADS))
    try:
        client.execute(env={**os.environ, "OMP_NUM_THREADS": threads})
    except CellExecutionError as error:
        if exporting:
            nb.cells.pop()
        # Execution stopped at the last cell with an error (earlier ones were allowed to raise).
        failed = max(i for i, cell in enumerate(nb.cells) if _error_of(cell) is not None)
        line = cell_lines(parsed, nb)[failed]
        raise BookError(
            f"{parsed.name}, line {line}: raised {error.ename}: {error.evalue}\n"
            f"{nb.cells[failed].source}\n(a cell that is meant to raise needs the tag "
            '"raises-exception" and raises="ExceptionType: message start")'
        ) from None
    if exporting:
        nb.cells.pop()  # the export cell: not the chapter's
    check_raises(nb, parsed)
    include.add_diffs(nb, build.package)
    nbformat.validate(nb)
    build.store("book").put(target, nbformat.writes(nb).encode())
