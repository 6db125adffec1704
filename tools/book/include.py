"""A class or function of the package as a chapter shows it: the book's lines, nothing else.

A chapter's code cell marked ``include="attention_mechanisms.<module>.<Name>"`` is filled
with that definition, read from the package's file (not imported, so a rebuild after an edit
shows the edit), and then trimmed to what the book itself prints:

- no docstrings (the class's or its methods'): the API reference shows them in full, and the
  page links there (``book.page``);
- no type annotations: ``def forward(self, x):`` as in the book, each signature on one line
  where it fits in `WIDTH` characters;
- no variable annotations: ``mask: Tensor`` goes, ``x: Tensor = y`` reads ``x = y``;
- no ``# noqa`` or ``# type: ignore`` comments.

Every statement stays, the input checks included (they come from the public module
`attention_mechanisms.checks`), and so do the comments that explain a line. Annotations
and docstrings do nothing at run time, so the cell defines a class that computes exactly
what the package's does.

A cell may also name the class it grows from, ``diff_from="<module>.<Name>"`` on its marker.
The cell still defines the whole class; after execution it gets one more output, the
unified diff of the two definitions as the chapter shows them, highlighted as a Material
``diff`` block (`add_diffs`). The page shows that diff first and folds the whole class
under it (`book.notebook_html`). The diff is made when the chapter executes, which it does
again whenever the package changes, so it is never older than the code.
"""

from __future__ import annotations

import ast
import difflib
import io
import re
import tokenize
from pathlib import Path

import nbformat
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import DiffLexer

from book import BookError

WIDTH = 100  # ruff's line length for the chapters
_LINT_COMMENT = re.compile(r"\s*#\s*(?:noqa\b|type:\s*ignore\b).*$")
_Function = ast.FunctionDef | ast.AsyncFunctionDef


def _definition(qualified: str, package: Path) -> tuple[str, ast.ClassDef | _Function]:
    module, _, name = qualified.rpartition(".")
    top, _, file = module.partition(".")
    path = package / f"{file}.py"
    if top != package.name or "." in file or not path.is_file():
        raise BookError(f"include={qualified!r}: expected {package.name}.<module>.<name>")
    text = path.read_text(encoding="utf-8")
    for node in ast.parse(text).body:
        if isinstance(node, ast.ClassDef | _Function) and node.name == name:
            return text, node
    raise BookError(f"include={qualified!r}: {top}/{file}.py defines no class or function {name}")


def _docstring(node: ast.AST) -> ast.Expr | None:
    body = getattr(node, "body", [])
    first = body[0] if body else None
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        return first
    return None


def _header_end(lines: list[str], function: _Function) -> int:
    """The 0-based line of the colon that ends ``function``'s ``def`` header."""
    source = "\n".join(lines[function.lineno - 1 :]) + "\n"
    depth = 0
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.OP:
            continue
        depth += token.string in "([{"
        depth -= token.string in ")]}"
        if token.string == ":" and depth == 0:
            return function.lineno - 1 + token.start[0] - 1
    raise BookError(f"no end to the header of {function.name}")  # unreachable for valid code


def _bare_header(lines: list[str], function: _Function) -> list[str]:
    """``function``'s header without annotations: one line if it fits, else one per argument."""
    indent = " " * function.col_offset
    arguments = _bare_arguments(function.args)
    keyword = "async def" if isinstance(function, ast.AsyncFunctionDef) else "def"
    one_line = f"{indent}{keyword} {function.name}({arguments}):"
    if len(one_line) <= WIDTH:
        return [one_line]
    inner = " " * (function.col_offset + 4)
    parts = [f"{inner}{part}," for part in arguments.split(", ")]
    return [f"{indent}{keyword} {function.name}(", *parts, f"{indent}):"]


def _bare_arguments(arguments: ast.arguments) -> str:
    bare = ast.arguments(
        posonlyargs=[ast.arg(a.arg) for a in arguments.posonlyargs],
        args=[ast.arg(a.arg) for a in arguments.args],
        vararg=ast.arg(arguments.vararg.arg) if arguments.vararg else None,
        kwonlyargs=[ast.arg(a.arg) for a in arguments.kwonlyargs],
        kw_defaults=arguments.kw_defaults,
        kwarg=ast.arg(arguments.kwarg.arg) if arguments.kwarg else None,
        defaults=arguments.defaults,
    )
    return ast.unparse(bare)


def _edits(lines: list[str], node: ast.ClassDef | _Function) -> list[tuple[int, int, list[str]]]:
    """``(first, end, replacement)`` line ranges (0-based, end exclusive) to rewrite."""
    edits = []
    for inner in ast.walk(node):
        if isinstance(inner, ast.ClassDef | _Function) and (doc := _docstring(inner)):
            edits.append((doc.lineno - 1, doc.end_lineno or doc.lineno, []))
        if isinstance(inner, _Function):
            end = _header_end(lines, inner)
            edits.append((inner.lineno - 1, end + 1, _bare_header(lines, inner)))
    for statement in ast.walk(node):
        if isinstance(statement, ast.AnnAssign):
            edits.append(_without_annotation(lines, statement))
    return sorted(edits, reverse=True)


def _without_annotation(lines: list[str], statement: ast.AnnAssign) -> tuple[int, int, list[str]]:
    """``name: T = value`` as ``name = value``; a bare ``name: T`` goes."""
    first = statement.lineno - 1
    if statement.value is None:
        return first, statement.end_lineno or statement.lineno, []
    line, value = lines[first], statement.value
    if value.lineno != statement.lineno:  # an annotation over several lines: not in the package
        raise BookError(f"line {statement.lineno}: write the annotation on one line")
    target = line[: statement.target.end_col_offset]
    return first, first + 1, [f"{target} = {line[value.col_offset :]}"]


def book_source(qualified: str, package: Path) -> str:
    """The definition named ``qualified`` (``"attention_mechanisms.causal.CausalAttention"``)
    in the ``package`` folder, as the chapter shows it (see the module doc).

    Raises:
        BookError: If the package has no such class or function.
    """
    text, node = _definition(qualified, package)
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    lines = text.splitlines()[: node.end_lineno]
    for start, end, replacement in _edits(lines, node):
        lines[start:end] = replacement
    kept = [_LINT_COMMENT.sub("", line) for line in lines[first - 1 :]]
    result: list[str] = []
    for line in kept:  # no blank line where a docstring stood: after a header, or twice
        if line.strip() or (result and result[-1].strip() and not result[-1].endswith(":")):
            result.append(line)
    return "\n".join(result).rstrip()


DIFF_TAG = "diff-from:"  # the tag of a cell marked diff_from="..." in the executed notebook
CONTEXT = 2  # unchanged lines shown around each change


def diff_text(base: str, name: str, package: Path) -> str:
    """The unified diff from the definition ``base`` to ``name``, both fully qualified."""
    old = book_source(base, package).splitlines()
    new = book_source(name, package).splitlines()
    short = (base.rpartition(".")[2], name.rpartition(".")[2])
    return "\n".join(difflib.unified_diff(old, new, *short, n=CONTEXT, lineterm=""))


def diff_html(text: str) -> str:
    """``text`` as Material's highlighted code block, deletions and insertions marked."""
    code = highlight(text, DiffLexer(), HtmlFormatter(nowrap=True))
    return (
        '<div class="language-diff highlight book-changes"><pre><span></span>'
        f"<code>{code}</code></pre></div>"
    )


def add_diffs(nb: nbformat.NotebookNode, package: Path) -> None:
    """Give each executed cell tagged ``diff-from:<base>`` its diff as a last output."""
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        base = next((tag.removeprefix(DIFF_TAG) for tag in tags if tag.startswith(DIFF_TAG)), None)
        if base is None:
            continue
        name = next(tag.removeprefix("include:") for tag in tags if tag.startswith("include:"))
        html = diff_html(diff_text(base, name, package))
        cell.outputs.append(nbformat.v4.new_output("display_data", data={"text/html": html}))
