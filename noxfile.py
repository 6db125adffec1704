"""Developer sessions: `nox -s tests`, `nox -s lint`.

Every session uses a plain venv filled by pip with the pins in constraints.txt, so the
CPU build of torch and the exact versions that printed the chapters' numbers are used.
Environments are reused between runs; `nox -R` skips even the install step.
"""

from __future__ import annotations

import nox

nox.options.default_venv_backend = "venv"
nox.options.reuse_venv = "yes"
nox.options.sessions = ["lint", "tests"]

CONSTRAINTS = ("-c", "constraints.txt")


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite and the docstring examples (pytest; extra args go to pytest)."""
    session.install(*CONSTRAINTS, "-e", ".[test]")
    session.run("pytest", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """Check style and formatting with ruff."""
    session.install(*CONSTRAINTS, "ruff")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
