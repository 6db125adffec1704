"""A checkout of the book in a folder of its own, for the tooling's tests: what `book.build.Build`
needs (mkdocs.yml with its languages and site_url, pyproject.toml with its Python, docs/en/
and the package's folder), and nothing else unless a test writes it."""

from __future__ import annotations

import textwrap
from pathlib import Path

from book.build import Build

LANGUAGES = ("en", "vi", "zh", "id")


def make_checkout(root: Path, languages: tuple[str, ...] = LANGUAGES) -> Build:
    """A bare checkout at ``root`` with these languages, as a `Build`."""
    (root / "docs" / "en").mkdir(parents=True, exist_ok=True)
    (root / "src" / "attention_mechanisms").mkdir(parents=True, exist_ok=True)
    entries = "".join(f"    - name: {code}\n      lang: {code}\n" for code in languages)
    (root / "mkdocs.yml").write_text(
        "site_name: A book\nsite_url: https://example.org/book/en/\ndocs_dir: docs/en\n"
        f"extra:\n  languages:\n{entries}",
        encoding="utf-8",
    )
    (root / "pyproject.toml").write_text(
        '[project]\nname = "book"\nrequires-python = ">=3.11"\n', encoding="utf-8"
    )
    return Build(root)


def write_chapter(directory: Path, text: str, name: str = "chapter.py") -> Path:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path
