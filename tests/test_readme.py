"""The README's Python example runs and prints what its comment says."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_example_prints_the_books_first_row():
    # The first Python block is the example at the top of the README.
    code = re.search(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S).group(1)
    promised = re.search(r"# (tensor\(\[[^\]]*\])", code).group(1)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(README), "exec"), {})
    assert out.getvalue().startswith(promised), (promised, out.getvalue())
