"""One build of the book: where its files are, its languages, and what it found so far.

A `Build` is made for a checkout (``Build(root)``), and every stage takes it: the stages
never look up a place of their own, so a test or a recipe builds a scratch copy by making a
`Build` of that copy. It knows the book's facts, each read from its one source:

- the languages: ``extra.languages`` in ``mkdocs.yml`` (the switcher lists them); English is
  the book's own language, every other one a translation with ``mkdocs.<lang>.yml``;
- the site's address: ``site_url`` in ``mkdocs.yml``, English's (``.../en/``);
- the lowest Python: ``requires-python`` in ``pyproject.toml``.

It also holds what the stages find, so that each is found once per build: the parsed
chapters (`Build.chapter`), the executed notebooks (``executions``, `book.execute`) and the
merged catalogs (``catalogs``, `book.translate`). A build is a snapshot: a file edited while
it runs is the next build's (``mkdocs serve`` makes a new one for every rebuild). What
outlives a build is in one on-disk `Store` under ``.cache/``.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import sys
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import polib
import yaml

from book import BookError
from book.source import Chapter, read

ENGLISH = "en"  # the book's own language; every other language is a translation of it
REFERENCE = "reference"  # the folder of docs/en/ that stays English: the API reference
PACKAGE = "attention_mechanisms"  # what the chapters teach, in src/
TOOLING = Path(__file__).resolve().parents[2]  # the checkout this tooling is installed from


@dataclass
class Build:
    """A checkout of the book, and what the stages of one build found in it."""

    root: Path
    executions: dict[Path, Path] = field(default_factory=dict)  # chapter -> executed notebook
    catalogs: dict[tuple[str, str], polib.POFile] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.root = self.root.resolve()
        if not self.config(ENGLISH).is_file():
            raise BookError(f"{self.root} is not a checkout of the book: it has no mkdocs.yml")

    # ---------------------------------------------------------------- places
    @property
    def docs(self) -> Path:
        return self.root / "docs"  # a folder per language: en/ (the sources), vi/ (catalogs)

    @property
    def english(self) -> Path:
        return self.docs / ENGLISH

    @property
    def package(self) -> Path:
        return self.root / "src" / PACKAGE

    @property
    def site(self) -> Path:
        return self.root / "site"

    @property
    def node_modules(self) -> Path:
        return self.root / "node_modules"  # MathJax, from npm ci (package-lock.json)

    def config(self, language: str) -> Path:
        """The MkDocs config that builds ``language``."""
        name = "mkdocs.yml" if language == ENGLISH else f"mkdocs.{language}.yml"
        return self.root / name

    def store(self, kind: str) -> Store:
        """The on-disk store of one kind of result: ``.cache/<kind>/``."""
        return Store(self.root / ".cache" / kind)

    def shown(self, path: Path) -> str:
        """``path`` relative to the checkout when it is inside it, for messages."""
        path = path.resolve()
        return (
            path.relative_to(self.root).as_posix() if path.is_relative_to(self.root) else str(path)
        )

    # ---------------------------------------------------------------- facts
    @functools.cached_property
    def _mkdocs(self) -> dict:
        return yaml.load(self.config(ENGLISH).read_text(encoding="utf-8"), Loader=yaml.BaseLoader)

    @property
    def languages(self) -> list[str]:
        """English, then the translations, as the switcher lists them."""
        found = [entry["lang"] for entry in self._mkdocs["extra"]["languages"]]
        if found[:1] != [ENGLISH]:
            raise BookError(f"mkdocs.yml: extra.languages must start with {ENGLISH}; got {found}")
        return found

    @property
    def translations(self) -> list[str]:
        return self.languages[1:]

    def site_url(self, language: str = ENGLISH) -> str:
        """The address of ``language``'s site: English's ``site_url`` with its folder."""
        english = self._mkdocs["site_url"]
        return english.removesuffix(f"{ENGLISH}/") + f"{language}/"

    @property
    def site_path(self) -> str:
        """The path of the site's root on its host: ``/attention-mechanisms/``."""
        return urlsplit(self.site_url(ENGLISH)).path.removesuffix(f"{ENGLISH}/")

    @property
    def python(self) -> tuple[int, int]:
        """The lowest Python, from ``requires-python`` (``>=3.11``): ``(3, 11)``."""
        project = tomllib.loads((self.root / "pyproject.toml").read_text(encoding="utf-8"))
        spec = project["project"]["requires-python"]
        found = re.fullmatch(r">=\s*3\.(\d+)", spec)
        if not found:
            raise BookError(f"pyproject.toml: requires-python must read '>=3.N'; got {spec!r}")
        return 3, int(found[1])

    # ---------------------------------------------------------------- sources
    def chapters(self) -> list[Path]:
        """Every chapter source: the ``*.py`` pages of ``docs/en/``."""
        return sorted(self.english.rglob("*.py"))

    def pages(self) -> list[str]:
        """Every English page that a translation translates, relative to ``docs/en/``."""
        return sorted(
            path.relative_to(self.english).as_posix()
            for path in self.english.rglob("*")
            if path.suffix in (".md", ".py")
            and path.relative_to(self.english).parts[0] != REFERENCE
        )

    def chapter(self, path: Path) -> Chapter:
        """The chapter at ``path``, parsed once per text (`book.source.read`)."""
        return read(path.resolve(), self.shown(path))


def environment() -> str:
    """The Python version and every installed distribution, one ``name-version`` a line: the
    names of the ``*.dist-info`` folders on ``sys.path``, which carry both."""
    folders = {
        folder.name.removesuffix(".dist-info")
        for entry in map(Path, sys.path)
        if entry.is_dir()
        for folder in entry.glob("*.dist-info")
    }
    return "\n".join(
        [f"python-{sys.version_info.major}.{sys.version_info.minor}", *sorted(folders)]
    )


def digest(parts: Iterable[bytes | str]) -> str:
    """The key of a result made from ``parts``: 16 hex digits of their SHA-256."""
    found = hashlib.sha256()
    for part in parts:
        found.update(part.encode() if isinstance(part, str) else part)
        found.update(b"\0")
    return found.hexdigest()[:16]


@dataclass(frozen=True)
class Store:
    """One folder of results, each a file named by the key of what made it.

    ``<folder>/<name>/<key>/<file>``: a `name` (a chapter, a page) keeps one key at a time
    (`put` removes its others), or ``<folder>/<key>.<suffix>`` for flat results, which
    `prune` forgets when a build did not use them. Every write is atomic: an interrupted
    build leaves no broken result behind.
    """

    folder: Path

    def path(self, name: str, key: str, file: str) -> Path:
        return self.folder / name / key / file

    def put(self, target: Path, data: bytes) -> Path:
        """Write ``data`` to ``target`` atomically; under a ``name``, keep no other key."""
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
        partial.write_bytes(data)
        partial.replace(target)
        if target.parent != self.folder:  # <name>/<key>/<file>: the name's other keys go
            for old in target.parent.parent.iterdir():
                if old.is_dir() and old != target.parent:
                    shutil.rmtree(old, ignore_errors=True)
        return target

    def prune(self, used: set[Path], pattern: str = "*.json") -> None:
        """Forget the flat results that match ``pattern`` and are not ``used``."""
        if self.folder.is_dir():
            for stale in set(self.folder.glob(pattern)) - used:
                stale.unlink(missing_ok=True)
