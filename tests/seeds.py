"""The learners' notebook transcripts (``../shared/seeds/*.txt``) as notebooks (tests only).

A transcript holds each code cell after an ``In [n]:`` line, followed by what it printed and
the learner's notes. A cell's code is its first paragraph and every paragraph after it that
still reads as Python, up to the first one that is printed output (a tensor, a shape, a
number) or prose (which does not parse).

``python tests/seeds.py`` writes each transcript as ``tests/fixtures/check/<name>.ipynb``;
`test_check.test_each_seed_is_its_fixture` holds them equal where the seeds are at hand.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

SEEDS = Path(__file__).resolve().parents[2] / "shared" / "seeds"
FIXTURES = Path(__file__).parent / "fixtures" / "check"
_IN = re.compile(r"^In \[\s*(?:\d+|None)?\s*\]:\s*$", re.MULTILINE)
# What a printed value starts with: a tensor, a shape, a number, a list or tuple.
_OUTPUT = re.compile(r"^(tensor\(|torch\.Size\(|Parameter containing|[-+\d.\[(])")


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except SyntaxError:
        return False
    return True


def _printed(paragraph: str) -> bool:
    """A paragraph that is printed output, not code: one expression that starts like a
    value, or a label such as ``Query :  tensor([...])``, which reads as a bare annotation."""
    body = ast.parse(paragraph).body
    labels = any(isinstance(s, ast.AnnAssign) and s.value is None for s in body)
    value = len(body) == 1 and isinstance(body[0], ast.Expr) and bool(_OUTPUT.match(paragraph))
    return labels or value


def code_cells(transcript: str) -> list[str]:
    """The code of each ``In [n]:`` block, in order."""
    cells = []
    for block in _IN.split(transcript)[1:]:
        paragraphs = re.split(r"\n[ \t]*\n", block.strip("\n"))
        code = [paragraphs[0]]
        for paragraph in paragraphs[1:]:
            joined = "\n\n".join([*code, paragraph])
            indented = paragraph[:1] in (" ", "\t")
            if not _parses(joined) or (not indented and _printed(paragraph)):
                break
            code.append(paragraph)
        cells.append("\n\n".join(code).rstrip() + "\n")
    return cells


def notebook(cells: list[str]) -> str:
    """A Jupyter notebook (nbformat 4) of these code cells, without outputs."""
    return (
        json.dumps(
            {
                "cells": [
                    {
                        "cell_type": "code",
                        "execution_count": None,
                        "metadata": {},
                        "outputs": [],
                        "source": cell.splitlines(True),
                    }
                    for cell in cells
                ],
                "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
                "nbformat": 4,
                "nbformat_minor": 5,
            },
            ensure_ascii=False,
            indent=1,
        )
        + "\n"
    )


def main() -> None:
    for seed in sorted(SEEDS.glob("*.txt")):
        target = FIXTURES / f"{seed.stem}.ipynb"
        target.write_text(notebook(code_cells(seed.read_text(encoding="utf-8"))), encoding="utf-8")
        print(target)


if __name__ == "__main__":
    main()
