"""Where the book's files are, and the language it is written in: each said once, here.

The tooling reads the places a test moves (`ROOT`, `DOCS`, `CONFIG`, `PACKAGE`, `CACHE`)
when it runs, not when it is imported, so a test that builds a book in a temporary folder
moves one name (``monkeypatch.setattr(paths, "DOCS", tmp_path)``) and the tooling follows.
Files that no test moves keep a name of their own, made from these where their module is
(`book.trained.CHAPTER`, `book.playground.MODULE`, `book.typeset.MATHJAX`).
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the repository
CONFIG = ROOT / "mkdocs.yml"  # English's; a translation's is mkdocs.<lang>.yml beside it
if not CONFIG.is_file():
    raise ImportError(
        f"book must be installed editable from the repository (pip install -e tools), so that "
        f"it finds the book; it runs from {Path(__file__).parent}, outside any checkout"
    )

ENGLISH = "en"  # the book's own language; every other language is a translation of it
DOCS = ROOT / "docs"  # a folder per language: docs/en/ (the sources), docs/vi/ (catalogs), ...
PACKAGE = ROOT / "src" / "attention_mechanisms"  # what the chapters teach and include
CACHE = ROOT / ".cache"  # book/ (executions), translations/ (composed pages), pages/, ...
SITE = ROOT / "site"  # the built site: site/<lang>/ and its root
NODE_MODULES = ROOT / "node_modules"  # MathJax, installed by npm ci (package-lock.json)


def english() -> Path:
    """The English pages, ``docs/en/``: the chapters that execute, and what is translated."""
    return DOCS / ENGLISH


def config(language: str) -> Path:
    """The MkDocs config that builds ``language``."""
    return CONFIG if language == ENGLISH else CONFIG.with_name(f"mkdocs.{language}.yml")


def translations() -> list[str]:
    """The translations, from their configs: ``mkdocs.vi.yml`` -> ``"vi"``."""
    return sorted(path.name.split(".")[1] for path in CONFIG.parent.glob("mkdocs.*.yml"))
