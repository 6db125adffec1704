"""The build's tooling is explicit stages on floors: each module imports only modules on the
floors below it (never one that runs back up), no module is over 300 lines, and every
import of the book is at the top of its module (tools/book/__init__.py lists the floors)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from book.build import TOOLING

BOOK = TOOLING / "tools" / "book"
# The floors, as tools/book/__init__.py describes them; __init__ (BookError) is under all,
# __main__ (`python -m book`) over all.
FLOORS = {
    "source": 1,
    "expectations": 1,
    "include": 1,
    "typeset": 1,
    "notebook_html": 1,
    "playground": 1,
    "build": 2,
    "execute": 3,
    "links": 3,
    "publish": 3,
    "check": 4,
    "translate": 4,
    "trained": 4,
    "page": 4,
    "compose": 5,
    "playground_check": 5,
    "cli": 6,
    "hooks": 6,
}
MODULES = sorted(path.stem for path in BOOK.glob("*.py"))


def book_imports(path: Path) -> list[tuple[str, bool]]:
    """``(module, at the top)`` of each import of a module of the book in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = set(map(id, tree.body))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("book"):
            names = (
                [alias.name for alias in node.names]
                if node.module == "book"
                else [str(node.module).split(".")[1]]
            )
            found += [(name, id(node) in top) for name in names if name in MODULES]
    return found


def test_every_module_has_a_floor_and_there_are_six():
    assert sorted([*FLOORS, "__init__", "__main__"]) == MODULES
    assert max(FLOORS.values()) == 6


@pytest.mark.parametrize("module", sorted(FLOORS))
def test_a_module_imports_only_from_the_floors_below(module):
    for name, at_top in book_imports(BOOK / f"{module}.py"):
        assert at_top, f"book.{module} imports book.{name} inside a function"
        if name != "__init__":
            assert FLOORS[name] < FLOORS[module], f"book.{module} imports book.{name}"


@pytest.mark.parametrize("module", MODULES)
def test_no_module_is_over_300_lines(module):
    lines = (BOOK / f"{module}.py").read_text(encoding="utf-8").count("\n")
    assert lines < 300, f"book.{module} has {lines} lines"
