"""Developer sessions.

`nox` runs every check; `nox -s serve` previews the site; `nox -s bench` measures the
attention implementations (it is not part of `nox`: timings are not checks).

Every session uses a plain venv filled by pip with the pins in constraints.txt, so the
CPU build of torch and the exact versions that printed the chapters' numbers are used.
Environments are reused between runs; `nox -R` skips even the install step.
"""

from __future__ import annotations

import nox

nox.options.default_venv_backend = "venv"
nox.options.reuse_venv = "yes"
nox.options.sessions = ["lint", "tests", "examples", "docs", "browser"]

CONSTRAINTS = ("-c", "constraints.txt")
# mkdocs-material announces MkDocs 2 on every build; the project pins mkdocs<2 on purpose.
DOCS_ENV = {"NO_MKDOCS_2_WARNING": "1"}


def install_site(session: nox.Session) -> None:
    """The package with the docs tools, and the front-end files the site serves itself."""
    session.install(*CONSTRAINTS, "-e", ".[docs]")
    session.run("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error", external=True)


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite and the docstring examples (pytest; extra args go to pytest)."""
    session.install(*CONSTRAINTS, "-e", ".[test,docs]")
    session.run("pytest", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """Check style and formatting with ruff (package, tests, tools and chapters)."""
    session.install(*CONSTRAINTS, "ruff")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session
def examples(session: nox.Session) -> None:
    """Check every chapter output and docstring example against what its source states.

    `nox -s examples -- --update` first rewrites the expected outputs from execution.
    """
    install_site(session)
    session.run("python", "tools/book.py", "check", *session.posargs)


@nox.session
def docs(session: nox.Session) -> None:
    """Build the site into site/ in strict mode, executing the chapters that are stale."""
    install_site(session)
    session.run("mkdocs", "build", *session.posargs, env=DOCS_ENV)


@nox.session
def browser(session: nox.Session) -> None:
    """Test the built site (run `docs` first) in Chromium: every page, links, search, 404.

    Uses Debian's Chromium (`apt-get install -y chromium`, or set CHROMIUM to a binary);
    without it the browser tests skip and say so. Screenshots go to build/screenshots/.
    """
    session.install(*CONSTRAINTS, "-e", ".[browser]")
    session.run("pytest", "tests/browser", *session.posargs)


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmark every attention implementation; print ratios, save JSON and a plot.

    `nox -s bench -- --quick` runs small shapes in seconds. Results: build/bench/.
    """
    session.install(*CONSTRAINTS, "-e", ".[plot]")
    session.run("python", "benchmarks/attention.py", *session.posargs)


@nox.session
def serve(session: nox.Session) -> None:
    """Serve the site at http://127.0.0.1:8000 and rebuild on every change."""
    install_site(session)
    session.run("mkdocs", "serve", *session.posargs, env=DOCS_ENV)
