"""One pass through the build (tools/book): each chapter parsed, keyed and executed once per
build (`book.build.Build`), each catalog merged once, every edit seen by the key, every path
and the book's language said once, and the route from source to page naming what exists."""

from __future__ import annotations

import ast
import collections
import importlib
import os
import re
import time
from pathlib import Path

import pytest
from checkouts import make_checkout, write_chapter

import book
from book import compose, execute, source, translate
from book.build import TOOLING, Build
from book.check import check, update

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


def by_chapter(build: Build, chapter: source.Chapter) -> Path:
    return chapter.path


def test_an_english_build_parses_keys_and_executes_each_chapter_once(monkeypatch, fresh_parses):
    parses = counting(monkeypatch, source, "parse", key=lambda text, path, name: path)
    keyed = counting(monkeypatch, execute, "cache_key", key=by_chapter)
    build = Build(TOOLING)
    chapters = build.chapters()
    for chapter in chapters:  # what the hook's on_files does for English
        compose.english_chapter(build, chapter.relative_to(build.english).as_posix())
    assert set(parses) == set(keyed) == set(chapters)
    assert set(parses.values()) == set(keyed.values()) == {1}, (parses, keyed)
    assert set(build.executions) == set(chapters)


def test_a_translation_merges_each_catalog_and_parses_each_chapter_once(monkeypatch, fresh_parses):
    parses = counting(monkeypatch, source, "parse", key=lambda text, path, name: path)
    keyed = counting(monkeypatch, execute, "cache_key", key=by_chapter)
    merges = counting(monkeypatch, translate, "merged")
    build = Build(TOOLING)
    sources, _ = compose.translated(build, "vi")
    pages = {build.english / page.uri for page in sources}
    assert set(merges) == pages and set(merges.values()) == {1}, merges
    assert set(parses) == set(keyed) == set(build.chapters())
    assert set(parses.values()) == set(keyed.values()) == {1}, (parses, keyed)


def test_check_and_update_read_the_builds_execution_and_execute_nothing(tmp_path, monkeypatch):
    build = make_checkout(tmp_path / "book")
    chapter = write_chapter(build.english, "# %%\nprint(6 * 7)\n")
    notebook, ran = execute.execute(build, chapter)
    assert ran

    def refuse(build, parsed, target):
        raise AssertionError(f"executed {parsed.name} again")

    monkeypatch.setattr(execute, "_run", refuse)
    (error,) = check(build, build.chapter(chapter)).errors
    assert "printed output but states none" in error
    assert update(build, chapter) is True
    assert chapter.read_text(encoding="utf-8") == "# %%\nprint(6 * 7)\n# Out:\n# 42\n"
    assert check(build, build.chapter(chapter)).errors == []
    # The next build finds the same execution: the stated outputs are not in its key.
    assert execute.execute(Build(build.root), chapter) == (notebook, False)


def test_a_parsed_chapter_is_shared_and_a_changed_file_is_parsed_again(tmp_path, fresh_parses):
    chapter = tmp_path / "chapter.py"
    chapter.write_text("# %%\nprint(1)\n# Out:\n# 1\n", encoding="utf-8")
    first = source.read(chapter, "chapter.py")
    assert source.read(chapter, "chapter.py") is first
    chapter.write_text("# %%\nprint(2)\n# Out:\n# 2\n", encoding="utf-8")
    second = source.read(chapter, "chapter.py")
    assert second.cells[0].expected == ("2",) and first.cells[0].expected == ("1",)
    rewritten = second.stating([["3"]])  # a new chapter; the shared one is unchanged
    assert rewritten.text() == "# %%\nprint(2)\n# Out:\n# 3\n"
    assert source.read(chapter, "chapter.py").text() == "# %%\nprint(2)\n# Out:\n# 2\n"
    with pytest.raises(ValueError, match="2 outputs for 1 code cells"):
        second.stating([["3"], None])


@pytest.fixture
def tooling(tmp_path) -> Build:
    """A checkout whose package is one module, every file last modified an hour ago."""
    build = make_checkout(tmp_path / "book")
    (build.package / "module.py").write_text("x = 1\n", encoding="utf-8")
    settle(tmp_path)
    return build


def settle(folder: Path) -> None:
    """Make every file of ``folder`` look last modified an hour ago."""
    hour_ago = time.time() - 3600
    for path in folder.rglob("*"):
        os.utime(path, (hour_ago, hour_ago))


def test_the_key_is_the_same_while_nothing_changes_and_each_edit_is_seen(tooling):
    chapter = write_chapter(tooling.english, "# %%\nprint(1)\n")
    settle(tooling.root)

    def key() -> str:  # each time a new build: nothing it found before is reused
        build = Build(tooling.root)
        return execute.cache_key(build, build.chapter(chapter))

    first = key()
    assert [key() for _ in range(3)] == [first] * 3

    module = tooling.package / "module.py"
    module.write_text("x = 2\n", encoding="utf-8")  # the same size, just now
    edited = key()
    assert edited != first
    # A second edit within the same clock tick keeps the file's time and size: the edit is
    # seen all the same.
    before = module.stat()
    module.write_text("x = 3\n", encoding="utf-8")
    os.utime(module, ns=(before.st_atime_ns, before.st_mtime_ns))
    again = key()
    assert again not in (first, edited)

    settle(tooling.root)
    assert key() == again
    assert key() == again


# The words that name the book's places and its own language: `book.build` says each once.
SAID_ONCE = {"en", "docs", "src", ".cache", "node_modules", "mkdocs.yml", "attention_mechanisms"}


@pytest.mark.parametrize("module", sorted(TOOLS.glob("*.py")), ids=lambda p: p.name)
def test_paths_and_the_english_language_are_said_in_book_build_only(module):
    said = [
        f"line {node.lineno}: {node.value!r}"
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and node.value in SAID_ONCE
    ]
    assert (said != []) == (module.name == "build.py"), said


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
