"""The book's executor and checker (tools/book): execution, caching and the chapter rules."""

from __future__ import annotations

import importlib.metadata
import multiprocessing
import os
import sys
import textwrap
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path

import nbformat
import pytest

from book import ROOT, BookError, checker, cli, executor, keys, paths, shown, source


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    """Each test executes into its own cache, never the repository's."""
    monkeypatch.setattr(paths, "CACHE", tmp_path / "cache")


def write_chapter(directory: Path, source: str, name: str = "chapter.py") -> Path:
    path = directory / name
    path.write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    return path


def outputs_of(path: Path) -> list[str]:
    nb = nbformat.read(path, as_version=4)
    return [
        "".join(output.get("text", ""))
        for cell in nb.cells
        if cell.cell_type == "code"
        for output in cell.outputs
    ]


def test_executes_once_then_reuses_the_cache(tmp_path):
    chapter = write_chapter(
        tmp_path,
        """
        # %% [markdown]
        # # A chapter
        # %%
        print(6 * 7)
        """,
    )
    path, ran = executor.execute(chapter)
    assert ran
    assert path.name == "chapter.ipynb"
    assert outputs_of(path) == ["42\n"]
    assert executor.execute(chapter) == (path, False)


def test_what_a_cell_prints_is_one_block_even_when_it_arrives_in_parts(tmp_path):
    # A flush sends what was printed so far (as a slow step after a table header does).
    chapter = write_chapter(
        tmp_path, "# %%\nimport sys\nprint('a')\nsys.stdout.flush()\nprint('b')\n"
    )
    path, _ = executor.execute(chapter)
    assert outputs_of(path) == ["a\nb\n"]


def test_a_changed_chapter_executes_again_and_replaces_the_old_result(tmp_path):
    chapter = write_chapter(tmp_path, "# %%\nprint(1)\n")
    first, _ = executor.execute(chapter)
    chapter.write_text("# %%\nprint(2)\n", encoding="utf-8")
    second, ran = executor.execute(chapter)
    assert ran
    assert second != first
    assert not first.exists()
    assert outputs_of(second) == ["2\n"]


def test_processes_asking_for_one_chapter_at_once_execute_it_once(tmp_path, monkeypatch):
    """The test workers and the site build may ask together: one runs it, the rest wait."""
    chapter = write_chapter(tmp_path, "# %%\nprint(1)\n")
    runs, running = [], threading.Event()

    def slow_run(chapter: Path, target: Path) -> None:
        runs.append(chapter)
        running.set()
        time.sleep(0.5)  # long enough for the other caller to arrive while this one runs
        target.parent.mkdir(parents=True)
        target.write_text("{}", encoding="utf-8")

    monkeypatch.setattr(executor, "_run", slow_run)
    results: list[tuple[Path, bool]] = []
    first = threading.Thread(target=lambda: results.append(executor.execute(chapter)))
    first.start()
    running.wait()
    results.append(executor.execute(chapter))  # arrives while the first one runs
    first.join()
    assert len(runs) == 1
    assert sorted(ran for _, ran in results) == [False, True]
    assert results[0][0] == results[1][0] == executor.executed_path(chapter)


@pytest.mark.parametrize("start", ["fork", "spawn"])
def test_the_command_executes_chapters_side_by_side_into_the_same_cache(
    tmp_path, monkeypatch, capsys, start
):
    # However its workers start (spawn is macOS's default), they use the places it moved.
    pool = partial(ProcessPoolExecutor, mp_context=multiprocessing.get_context(start))
    monkeypatch.setattr(cli, "ProcessPoolExecutor", pool)
    monkeypatch.setattr(paths, "DOCS", tmp_path)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    threads = "import os\nprint(os.environ['OMP_NUM_THREADS'])\n"
    (tmp_path / "en").mkdir()
    first = write_chapter(tmp_path / "en", f"# %%\nprint('one')\n{threads}", "one.py")
    second = write_chapter(tmp_path / "en", f"# %%\nprint('two')\n{threads}", "two.py")
    assert cli.main(["execute", "--jobs", "2", str(first), str(second)]) == 0
    # Each kernel gets its share of the cores, so their threads do not compete.
    share = f"{max(1, (os.cpu_count() or 1) // 2)}\n"
    assert outputs_of(executor.executed_path(first)) == ["one\n" + share]
    assert outputs_of(executor.executed_path(second)) == ["two\n" + share]
    assert "2 of 2 chapters executed" in capsys.readouterr().out
    assert cli.main(["execute", "--jobs", "2", str(first), str(second)]) == 0
    assert "0 of 2 chapters executed" in capsys.readouterr().out


def test_cache_key_covers_the_package_the_parser_and_the_environment(tmp_path, monkeypatch):
    chapter = write_chapter(tmp_path, "# %%\nprint(1)\n")
    package = tmp_path / "package"
    package.mkdir()
    (package / "module.py").write_text("x = 1\n", encoding="utf-8")
    monkeypatch.setattr(paths, "PACKAGE", package)
    key = keys.cache_key(source.read(chapter))
    assert keys.cache_key(source.read(chapter)) == key

    (package / "module.py").write_text("x = 2\n", encoding="utf-8")
    changed_code = keys.cache_key(source.read(chapter))
    assert changed_code != key

    # Package data changes what a chapter prints too (attention-check's messages).
    (package / "messages").mkdir()
    (package / "messages" / "zh.toml").write_text('as_role = "a"\n', encoding="utf-8")
    with_data = keys.cache_key(source.read(chapter))
    assert with_data != changed_code
    (package / "messages" / "zh.toml").write_text('as_role = "b"\n', encoding="utf-8")
    changed_src = keys.cache_key(source.read(chapter))
    assert changed_src != with_data
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "module.cpython-311.pyc").write_bytes(b"bytecode")
    assert keys.cache_key(source.read(chapter)) == changed_src  # bytecode is not the package

    # The parser decides what executes (it strips the stated outputs).
    parser = tmp_path / "source.py"
    parser.write_bytes(Path(source.__file__).read_bytes())
    monkeypatch.setattr(source, "__file__", str(parser))
    assert keys.cache_key(source.read(chapter)) == changed_src
    parser.write_text(parser.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    changed_parser = keys.cache_key(source.read(chapter))
    assert changed_parser != changed_src

    monkeypatch.setattr(keys, "environment", lambda: "python-3.99\ntorch-0.0.1")
    assert keys.cache_key(source.read(chapter)) != changed_parser


def test_the_environment_names_python_and_torch():
    lines = keys.environment().splitlines()
    assert lines[0] == f"python-{sys.version_info.major}.{sys.version_info.minor}"
    assert f"torch-{importlib.metadata.version('torch')}" in lines


PACKAGED = '''
"""A stand-in module of the package."""


def twice(x):
    """Double x."""
    return 2 * x


class Other:
    pass
'''


def test_an_include_cell_shows_and_defines_the_packages_code(tmp_path, monkeypatch):
    package = tmp_path / "attention_mechanisms"
    package.mkdir()
    (package / "module.py").write_text(PACKAGED, encoding="utf-8")
    monkeypatch.setattr(paths, "PACKAGE", package)
    chapter = write_chapter(
        tmp_path, '# %% include="attention_mechanisms.module.twice"\n\n# %%\nprint(twice(21))\n'
    )
    path, _ = executor.execute(chapter)
    nb = nbformat.read(path, as_version=4)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert code[0].source == "def twice(x):\n    return 2 * x"  # as the book shows it
    # The page links to the full source from the tag (book.page).
    assert code[0].metadata == {"tags": ["include:attention_mechanisms.module.twice"]}
    assert outputs_of(path) == ["42\n"]
    # Editing the function executes the chapter again and changes what it prints.
    (package / "module.py").write_text(PACKAGED.replace("2 * x", "3 * x"), encoding="utf-8")
    path, ran = executor.execute(chapter)
    assert ran and outputs_of(path) == ["63\n"]


@pytest.mark.parametrize(
    ("cell", "message"),
    [
        (
            '# %% include="attention_mechanisms.module.twice"\nprint(1)\n',
            r"chapter\.py, line 1: a cell marked include='attention_mechanisms\.module\.twice' "
            r"must be empty",
        ),
        (
            '# %% include="attention_mechanisms.module.missing"\n',
            r"include='attention_mechanisms\.module\.missing': .*module\.py defines no class or "
            r"function missing",
        ),
        (
            '# %% include="torch.nn.Linear"\n',
            r"include='torch\.nn\.Linear': expected attention_mechanisms\.<module>\.<name>",
        ),
    ],
)
def test_a_bad_include_is_named(tmp_path, monkeypatch, cell, message):
    package = tmp_path / "attention_mechanisms"
    package.mkdir()
    (package / "module.py").write_text(PACKAGED, encoding="utf-8")
    monkeypatch.setattr(paths, "PACKAGE", package)
    with pytest.raises(BookError, match=message):
        executor.execute(write_chapter(tmp_path, cell))


def test_a_failing_cell_fails_with_the_chapter_named(tmp_path):
    chapter = write_chapter(tmp_path, "# %%\nprint(1)\n# %%\n1 / 0\n")
    message = r"chapter\.py, line 3: raised ZeroDivisionError: division by zero\n1 / 0\n"
    with pytest.raises(BookError, match=message):
        executor.execute(chapter)


def test_a_failing_cell_after_one_allowed_to_raise_is_the_one_named(tmp_path):
    chapter = write_chapter(
        tmp_path,
        """
        # %% tags=["raises-exception"] raises="ZeroDivisionError: division by zero"
        1 / 0
        # %%
        print("fine")
        # %%
        {}["missing"]
        """,
    )
    message = r"chapter\.py, line 5: raised KeyError: 'missing'\n\{\}\[\"missing\"\]\n"
    with pytest.raises(BookError, match=message):
        executor.execute(chapter)


def test_a_marked_cell_must_raise_the_stated_error(tmp_path):
    good = write_chapter(
        tmp_path,
        """
        # %% tags=["raises-exception"] raises="ZeroDivisionError: division by zero"
        1 / 0
        # %%
        print("after")
        """,
        name="good.py",
    )
    path, _ = executor.execute(good)
    assert outputs_of(path)[-1] == "after\n"

    wrong_message = write_chapter(
        tmp_path,
        '# %% tags=["raises-exception"] raises="ZeroDivisionError: something else"\n1 / 0\n',
        name="wrong_message.py",
    )
    with pytest.raises(BookError, match=r"line 1: expected 'ZeroDivisionError: some"):
        executor.execute(wrong_message)

    silent = write_chapter(
        tmp_path,
        '# %% tags=["raises-exception"] raises="ValueError"\nx = 1\n',
        name="silent.py",
    )
    with pytest.raises(BookError, match=r"expected 'ValueError', but the cell raised nothing"):
        executor.execute(silent)


def test_a_raising_cell_needs_both_the_tag_and_the_stated_error(tmp_path):
    chapter = write_chapter(
        tmp_path, '# %% tags=["raises-exception"]\nraise ValueError("x")\n', name="untold.py"
    )
    with pytest.raises(BookError, match=r"needs both the tag 'raises-exception' and"):
        executor.execute(chapter)


def test_the_executed_notebook_is_plain(tmp_path):
    """What the reader downloads: nbformat 4, the cells of the source and nothing else."""
    chapter = write_chapter(
        tmp_path,
        """
        # %% [markdown]
        # Exercise
        # %% tags=["solution"]
        print("answer")
        # %% [markdown] tags=["solution"]
        # Why it works
        """,
    )
    path, _ = executor.execute(chapter)
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert [(c.cell_type, c.metadata.get("tags")) for c in nb.cells] == [
        ("markdown", None),
        ("code", ["solution"]),
        ("markdown", ["solution"]),
    ]


CHECKED = """
# %% [markdown]
# # Checked
#
# The answer is 0.333.
# %%
print(round(1 / 3, 4))
# Out:
# 0.3333
"""


def test_check_passes_and_counts(tmp_path):
    chapter = write_chapter(tmp_path, CHECKED)
    report = checker.check(chapter)
    assert report.errors == []
    assert (report.checked, report.prose) == (1, 1)


def test_one_changed_digit_in_an_expectation_fails(tmp_path):
    chapter = write_chapter(tmp_path, CHECKED.replace("# 0.3333", "# 0.3334"))
    (error,) = checker.check(chapter).errors
    assert "chapter.py, line 5: output differs" in error
    assert "expected 0.3334, got 0.3333" in error


def test_a_code_change_that_alters_an_output_fails_and_update_repairs_it(tmp_path):
    chapter = write_chapter(tmp_path, CHECKED.replace("1 / 3", "2 / 3"))
    output_error, prose_error = checker.check(chapter).errors
    assert "expected 0.3333, got 0.6667" in output_error
    assert "the prose quotes 0.333" in prose_error
    assert checker.update(chapter)
    assert "# 0.6667" in chapter.read_text(encoding="utf-8")
    report = checker.check(chapter)
    # The prose now quotes a number the chapter no longer prints.
    assert report.errors == [
        f"{chapter}, line 1: the prose quotes 0.333, which no output of the chapter prints"
    ]
    assert not checker.update(chapter)  # nothing left to rewrite


def test_update_does_not_execute_again(tmp_path):
    chapter = write_chapter(tmp_path, CHECKED.replace("# Out:\n# 0.3333\n", ""))
    _, ran = executor.execute(chapter)
    assert ran
    assert checker.update(chapter)
    assert executor.execute(chapter)[1] is False  # expectations are not part of the cache key
    assert checker.check(chapter).errors == []


def test_output_without_expectation_fails(tmp_path):
    chapter = write_chapter(tmp_path, "# %%\nprint('hello')\n")
    (error,) = checker.check(chapter).errors
    assert "printed output but states none" in error
    assert "| hello" in error


def test_nondeterministic_needs_a_reason(tmp_path):
    with_reason = write_chapter(
        tmp_path, '# %% nondeterministic="depends on the clock"\nimport time\nprint(time.time())\n'
    )
    report = checker.check(with_reason)
    assert report.errors == []
    assert report.nondeterministic == [f"{with_reason}, line 1: depends on the clock"]

    without = write_chapter(
        tmp_path, '# %% nondeterministic=""\nprint(1)\n', name="without_reason.py"
    )
    (error,) = checker.check(without).errors
    assert "marked nondeterministic without a reason" in error


LANGUAGE_CELLS = """
# %% [markdown]
# # Reports
#
# In English: 0.125.
# %% lang="en"
print(f"{1 / 8:.3f}")
# Out:
# 0.125
# %% tags=["wrap-output"] lang="vi"
print(f"{1 / 4:.3f}")
# Out:
# 0.250
"""


def test_code_cells_of_one_language_are_checked_and_the_prose_quotes_englishs(tmp_path):
    chapter = write_chapter(tmp_path, LANGUAGE_CELLS)
    report = checker.check(chapter)
    assert (report.errors, report.checked, report.prose) == ([], 2, 1)
    text = chapter.read_text(encoding="utf-8")
    (error,) = checker.check(chapter, text.replace("# 0.250", "# 0.251")).errors
    assert "line 9: output differs" in error  # the Vietnamese cell is checked too
    chapter.write_text(text.replace("English: 0.125", "English: 0.250"), encoding="utf-8")
    (error,) = checker.check(chapter).errors  # printed, but on the Vietnamese page only
    assert error.endswith("line 1: the prose quotes 0.250, which no output of the chapter prints")


def test_a_lang_that_is_not_a_language_of_the_book_fails_the_check(tmp_path):
    text = LANGUAGE_CELLS.replace('lang="vi"', 'lang="fr"').replace(
        "[markdown]", '[markdown] lang="en"'
    )
    chapter = write_chapter(tmp_path, text)
    markdown, code = checker.check(chapter).errors
    assert markdown.startswith(f"{chapter}, line 1: lang='en' on a Markdown cell; only a code")
    assert code.startswith(f"{chapter}, line 9: lang='fr' is not a language of the book (en, ")


def test_docstring_examples_pass():
    report = checker.check_docstrings()
    assert report.errors == []
    assert report.checked >= 20


REAL_CHAPTERS = executor.chapters()


def edit_first_stated_digit(text: str) -> str:
    """The chapter source with one digit of its first stated number changed."""
    chapter = source.parse(text, Path("chapter.py"))
    outputs = [None if cell.expected is None else list(cell.expected) for cell in chapter.code]
    for stated in outputs:
        for index, line in enumerate(stated or []):
            digits = [i for i, ch in enumerate(line) if ch.isdigit()]
            if digits:
                at = digits[-1]
                changed = str((int(line[at]) + 5) % 10)
                stated[index] = line[:at] + changed + line[at + 1 :]
                return chapter.stating(outputs).text()
    raise AssertionError("the chapter states no number")


@pytest.mark.parametrize("chapter", REAL_CHAPTERS, ids=lambda p: p.name)
def test_every_chapter_fails_when_a_stated_value_is_edited(chapter, monkeypatch):
    # The real chapters share the repository's cache with the site build: execute once.
    monkeypatch.setattr(paths, "CACHE", ROOT / ".cache")
    assert checker.check(chapter).errors == []
    errors = checker.check(chapter, edit_first_stated_digit(chapter.read_text("utf-8"))).errors
    assert len(errors) == 1
    assert errors[0].startswith(f"{shown(chapter)}, line ")
    assert "output differs from the source" in errors[0]


@pytest.mark.parametrize(
    "chapter", executor.chapters(), ids=lambda p: p.relative_to(ROOT / "docs/en").as_posix()
)
def test_no_heading_is_folded_into_a_solution(chapter):
    """A solution's fold ends where the next exercise starts: a heading is never tagged."""
    for cell in source.read(chapter).cells:
        if cell.kind == "markdown" and "solution" in cell.metadata.get("tags", []):
            headings = [line for line in cell.source.splitlines() if line.startswith("#")]
            assert headings == [], f"{shown(chapter)}, line {cell.line}: {headings}"
