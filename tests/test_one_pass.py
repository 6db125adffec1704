"""One pass through the build (tools/book): each chapter parsed and looked up once per build
process and handed along, each catalog merged once, the tooling hashed once, every path and
the book's language said once, and the route from source to page naming what exists."""

from __future__ import annotations

import ast
import collections
import importlib
import os
import re
import shutil
import time
from pathlib import Path

import pytest

import book
from book import catalog, checker, executor, keys, paths, site_pages, source
from book.executor import execute

TOOLS = Path(book.__file__).parent


def counting(monkeypatch, module, name: str, key=lambda *args: args[-1]) -> collections.Counter:
    """Count the calls of ``module.name`` (by ``key`` of their arguments) from now on."""
    calls: collections.Counter = collections.Counter()
    original = getattr(module, name)

    def counted(*args, **kwargs):
        calls[key(*args)] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


@pytest.fixture
def fresh_parses():
    """Forget every chapter parsed so far in this process, before and after the test."""
    source._parsed.cache_clear()
    yield
    source._parsed.cache_clear()


def test_an_english_build_parses_keys_and_executes_each_chapter_once(monkeypatch, fresh_parses):
    parses = counting(monkeypatch, source, "parse")
    keyed = counting(monkeypatch, keys, "cache_key", key=lambda chapter: chapter.path)
    chapters = executor.chapters()
    for chapter in chapters:  # what the hook's on_files does for English
        site_pages.english_chapter(chapter.relative_to(paths.english()).as_posix())
    assert set(parses) == set(keyed) == set(chapters)
    assert set(parses.values()) == set(keyed.values()) == {1}, (parses, keyed)


def test_a_translation_merges_each_catalog_and_parses_each_chapter_once(monkeypatch, fresh_parses):
    parses = counting(monkeypatch, source, "parse")
    keyed = counting(monkeypatch, keys, "cache_key", key=lambda chapter: chapter.path)
    merges = counting(monkeypatch, catalog, "merged")
    sources, _ = site_pages.translated("vi")
    pages = {paths.english() / page.uri for page in sources}
    assert set(merges) == pages and set(merges.values()) == {1}, merges
    assert set(parses) == set(keyed) == set(executor.chapters())
    assert set(parses.values()) == set(keyed.values()) == {1}, (parses, keyed)


def test_check_and_update_read_the_notebook_they_are_handed_and_execute_nothing(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(paths, "CACHE", tmp_path / "cache")
    chapter = tmp_path / "chapter.py"
    chapter.write_text("# %%\nprint(6 * 7)\n", encoding="utf-8")
    notebook, ran = execute(chapter)
    assert ran

    def refuse(path):
        raise AssertionError(f"executed {path} again")

    monkeypatch.setattr(checker, "execute", refuse)
    (error,) = checker.check(chapter, executed=notebook).errors
    assert "printed output but states none" in error
    assert checker.update(chapter, executed=notebook) is True
    assert chapter.read_text(encoding="utf-8") == "# %%\nprint(6 * 7)\n# Out:\n# 42\n"
    assert checker.check(chapter, executed=notebook).errors == []


def test_a_parsed_chapter_is_shared_and_a_changed_file_is_parsed_again(tmp_path, fresh_parses):
    chapter = tmp_path / "chapter.py"
    chapter.write_text("# %%\nprint(1)\n# Out:\n# 1\n", encoding="utf-8")
    first = source.read(chapter)
    assert source.read(chapter) is first
    chapter.write_text("# %%\nprint(2)\n# Out:\n# 2\n", encoding="utf-8")
    second = source.read(chapter)
    assert second.cells[0].expected == ("2",) and first.cells[0].expected == ("1",)
    rewritten = second.stating([["3"]])  # a new chapter; the shared one is unchanged
    assert rewritten.text() == "# %%\nprint(2)\n# Out:\n# 3\n"
    assert source.read(chapter).text() == "# %%\nprint(2)\n# Out:\n# 2\n"
    with pytest.raises(ValueError, match="2 outputs for 1 code cells"):
        second.stating([["3"], None])


@pytest.fixture
def tooling(tmp_path, monkeypatch):
    """The files the cache key hashes, as copies in ``tmp_path``, last modified an hour ago."""
    monkeypatch.setattr(keys, "_last", None)
    package = tmp_path / "package"
    package.mkdir()
    (package / "module.py").write_text("x = 1\n", encoding="utf-8")
    monkeypatch.setattr(paths, "PACKAGE", package)
    for module in (importlib.import_module(f"book.{name}") for name in keys.TOOLING):
        copy = tmp_path / "tools" / Path(str(module.__file__)).name
        copy.parent.mkdir(exist_ok=True)
        shutil.copyfile(str(module.__file__), copy)
        monkeypatch.setattr(module, "__file__", str(copy))
    settle(tmp_path)
    return package


def settle(folder: Path) -> None:
    """Make every file of ``folder`` look last modified an hour ago."""
    hour_ago = time.time() - 3600
    for path in folder.rglob("*"):
        os.utime(path, (hour_ago, hour_ago))


def test_the_tooling_is_read_once_while_unchanged_and_each_edit_is_seen(
    tooling, tmp_path, monkeypatch
):
    reads = counting(monkeypatch, keys, "_read_digest", key=lambda *args: "read")
    chapter = tmp_path / "chapter.py"
    chapter.write_text("# %%\nprint(1)\n", encoding="utf-8")
    key = keys.cache_key(source.read(chapter))
    assert [keys.cache_key(source.read(chapter)) for _ in range(3)] == [key] * 3
    assert reads["read"] == 1  # settled files: compared by size and time only

    module = tooling / "module.py"
    module.write_text("x = 2\n", encoding="utf-8")  # the same size, just now
    edited = keys.cache_key(source.read(chapter))
    assert edited != key and reads["read"] == 2
    # A second edit within the same clock tick keeps the file's time and size: since the
    # files were modified just now, they are read again, and the edit is seen.
    before = module.stat()
    module.write_text("x = 3\n", encoding="utf-8")
    os.utime(module, ns=(before.st_atime_ns, before.st_mtime_ns))
    again = keys.cache_key(source.read(chapter))
    assert again not in (key, edited) and reads["read"] == 3

    settle(tmp_path)
    assert keys.cache_key(source.read(chapter)) == again and reads["read"] == 4
    assert keys.cache_key(source.read(chapter)) == again and reads["read"] == 4


# The words that name the book's places and its own language: `book.paths` says each once.
SAID_ONCE = {"en", "docs", "src", ".cache", "node_modules", "mkdocs.yml", "attention_mechanisms"}


@pytest.mark.parametrize("module", sorted(TOOLS.glob("*.py")), ids=lambda p: p.name)
def test_paths_and_the_english_language_are_said_in_book_paths_only(module):
    said = [
        f"line {node.lineno}: {node.value!r}"
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and node.value in SAID_ONCE
    ]
    assert (said != []) == (module.name == "paths.py"), said


def resolve(dotted: str) -> object:
    """The object ``book.module.name[.attribute]`` names."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            found = getattr(found, attribute)
        return found
    raise AssertionError(f"{dotted} names nothing")


def test_the_route_from_source_to_page_names_what_exists():
    doc = str(book.__doc__)
    route = doc[doc.index("One chapter, from its source to its page") :]
    named = re.findall(r"`(book(?:\.\w+)+)`", route)
    assert len(named) >= 10, named
    for dotted in named:
        assert callable(resolve(dotted)) or dotted.count(".") == 1, dotted
    steps = re.findall(r"^(\d)\. ", route, re.M)
    assert steps == [str(n) for n in range(1, len(steps) + 1)] and len(steps) <= 6
