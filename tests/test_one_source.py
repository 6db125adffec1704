"""Each fact of the book has one source, and every other place that states it is held to it.

- the languages: ``extra.languages`` in ``mkdocs.yml`` (`book.build.Build.languages`);
- the site's address: English's ``site_url`` in ``mkdocs.yml``;
- the lowest Python: ``requires-python`` in ``pyproject.toml``.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
import yaml
from checkouts import make_checkout

from attention_mechanisms.check import messages
from book import BookError
from book.build import ENGLISH, TOOLING, Build

BUILD = Build(TOOLING)


def _yaml(path: Path) -> dict:
    return yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.BaseLoader)


def _toml(path: Path) -> dict:
    return tomllib.loads(path.read_text(encoding="utf-8"))


def test_the_languages_are_english_then_each_translation_with_its_config_and_catalogs():
    assert BUILD.languages[0] == ENGLISH
    configs = sorted(path.name for path in TOOLING.glob("mkdocs.*.yml"))
    assert configs == sorted(f"mkdocs.{code}.yml" for code in BUILD.translations)
    for code in BUILD.translations:
        config = _yaml(BUILD.config(code))
        assert config["INHERIT"] == "mkdocs.yml"
        assert config["theme"]["language"] == code
        assert config["docs_dir"].split("#")[0].strip() == f"docs/{code}"
        assert config["site_dir"] == f"site/{code}"
        assert any((BUILD.docs / code).rglob("*.po")), f"docs/{code}/ has no catalog"
    folders = {path.name for path in BUILD.docs.iterdir() if path.is_dir()}
    assert folders - {"overrides", "assets"} == set(BUILD.languages)


def test_attention_check_speaks_exactly_the_books_languages():
    folder = Path(messages.__file__).with_name("messages")
    assert sorted(path.stem for path in folder.glob("*.toml")) == sorted(BUILD.languages)
    assert list(messages.LANGUAGES) == BUILD.languages


def test_check_your_code_shows_each_sample_report_in_every_language():
    """Each report cell of check-your-code exists once per language (``lang="<code>"``): a
    language without its cells would show no sample report, and nothing else would fail."""
    chapter = BUILD.chapter(BUILD.english / "chapter-3" / "check-your-code.py")
    languages = [cell.metadata["lang"] for cell in chapter.code if "lang" in cell.metadata]
    assert languages, "check-your-code has no report cells"
    reports = len(languages) // len(BUILD.languages)
    assert sorted(languages) == sorted(BUILD.languages * reports)


def test_the_site_address_is_englishs_site_url_everywhere():
    english = BUILD.site_url(ENGLISH)
    assert re.fullmatch(r"https://[^/]+/([\w-]+/)*en/", english)
    for code in BUILD.translations:
        assert _yaml(BUILD.config(code))["site_url"] == BUILD.site_url(code)
    root = english.removesuffix("en/")
    assert root == messages.SITE  # attention-check's links into the book
    urls = _toml(TOOLING / "pyproject.toml")["project"]["urls"]
    assert urls["Documentation"] == root
    for name in ("README.md", "CONTRIBUTING.md", "docs/en/index.md"):
        for found in re.findall(r"https://[\w.-]+\.github\.io/[^\s)>\"']*", _read(name)):
            assert found.startswith(root), f"{name}: {found}"


def _read(name: str) -> str:
    return (TOOLING / name).read_text(encoding="utf-8")


def test_the_lowest_python_is_requires_python_everywhere():
    major, minor = BUILD.python
    version = f"{major}.{minor}"
    project = _toml(TOOLING / "pyproject.toml")
    assert f"Programming Language :: Python :: {version}" in project["project"]["classifiers"]
    assert project["tool"]["mypy"]["python_version"] == version
    assert "target-version" not in project["tool"]["ruff"]  # ruff reads requires-python
    tools = _toml(TOOLING / "tools" / "pyproject.toml")
    assert tools["project"]["requires-python"] == project["project"]["requires-python"]
    for name in ("README.md", "docs/en/index.md"):
        assert f"Python {version} or newer" in _read(name), name
    for workflow in sorted((TOOLING / ".github" / "workflows").glob("*.yml")):
        for stated in re.findall(r"python-version:\s*\"?([\d.]+)", workflow.read_text("utf-8")):
            assert stated == version, f"{workflow.name}: Python {stated}"


@pytest.mark.parametrize("spec", ["3.11", ">3.11", ">=3.11,<4"])
def test_a_requires_python_that_is_not_a_floor_is_named(tmp_path, spec):
    build = make_checkout(tmp_path)
    (tmp_path / "pyproject.toml").write_text(f'[project]\nrequires-python = "{spec}"\n')
    with pytest.raises(BookError, match=r"requires-python must read '>=3\.N'"):
        _ = build.python
