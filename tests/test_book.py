"""The book's executor and checker (tools/book): execution, caching and the chapter rules."""

from __future__ import annotations

import importlib.metadata
import multiprocessing
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path

import nbformat
import pytest
from checkouts import make_checkout, write_chapter

from book import BookError, cli, execute, source
from book.build import TOOLING, Build, environment
from book.check import check, check_docstrings, update

ROOT = TOOLING
REAL = Build(ROOT)


@pytest.fixture
def book(tmp_path) -> Build:
    """A checkout of its own for each test: its own chapters, package and cache."""
    return make_checkout(tmp_path / "book")


def checked(book: Build, chapter: Path, text: str | None = None):
    """The check of ``chapter``, or of ``text`` stating other outputs for the same code."""
    parsed = book.chapter(chapter) if text is None else source.parse(text, chapter, "chapter.py")
    return check(book, parsed)


def outputs_of(path: Path) -> list[str]:
    nb = nbformat.read(path, as_version=4)
    return [
        "".join(output.get("text", ""))
        for cell in nb.cells
        if cell.cell_type == "code"
        for output in cell.outputs
    ]


def test_executes_once_then_reuses_the_cache(book):
    chapter = write_chapter(
        book.english,
        """
        # %% [markdown]
        # # A chapter
        # %%
        print(6 * 7)
        """,
    )
    path, ran = execute.execute(book, chapter)
    assert ran
    assert path.name == "chapter.ipynb"
    assert outputs_of(path) == ["42\n"]
    assert execute.execute(book, chapter) == (path, False)


def test_what_a_cell_prints_is_one_block_even_when_it_arrives_in_parts(book):
    # A flush sends what was printed so far (as a slow step after a table header does).
    chapter = write_chapter(
        book.english, "# %%\nimport sys\nprint('a')\nsys.stdout.flush()\nprint('b')\n"
    )
    path, _ = execute.execute(book, chapter)
    assert outputs_of(path) == ["a\nb\n"]


def test_a_changed_chapter_executes_again_and_replaces_the_old_result(book):
    chapter = write_chapter(book.english, "# %%\nprint(1)\n")
    first, _ = execute.execute(book, chapter)
    chapter.write_text("# %%\nprint(2)\n", encoding="utf-8")
    second, ran = execute.execute(Build(book.root), chapter)  # the next build
    assert ran
    assert second != first
    assert not first.exists()
    assert outputs_of(second) == ["2\n"]


def test_processes_asking_for_one_chapter_at_once_execute_it_once(book, monkeypatch):
    """The test workers and the site build may ask together: one runs it, the rest wait."""
    chapter = write_chapter(book.english, "# %%\nprint(1)\n")
    runs, running = [], threading.Event()

    def slow_run(build: Build, chapter: source.Chapter, target: Path) -> None:
        runs.append(chapter)
        running.set()
        time.sleep(0.5)  # long enough for the other caller to arrive while this one runs
        target.parent.mkdir(parents=True)
        target.write_text("{}", encoding="utf-8")

    monkeypatch.setattr(execute, "_run", slow_run)
    results: list[tuple[Path, bool]] = []
    # Two processes: two builds of the same checkout.
    first = threading.Thread(target=lambda: results.append(execute.execute(book, chapter)))
    first.start()
    running.wait()
    results.append(execute.execute(Build(book.root), chapter))  # arrives while the first runs
    first.join()
    assert len(runs) == 1
    assert sorted(ran for _, ran in results) == [False, True]
    assert results[0][0] == results[1][0] == execute.executed_path(book, book.chapter(chapter))


@pytest.mark.parametrize("start", ["fork", "spawn"])
def test_the_command_executes_chapters_side_by_side_into_the_same_cache(
    book, monkeypatch, capsys, start
):
    # However its workers start (spawn is macOS's default), each makes the build of --root.
    pool = partial(ProcessPoolExecutor, mp_context=multiprocessing.get_context(start))
    monkeypatch.setattr(cli, "ProcessPoolExecutor", pool)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    threads = "import os, torch\nprint(os.environ['OMP_NUM_THREADS'], torch.get_num_threads())\n"
    first = write_chapter(book.english, f"# %%\nprint('one')\n{threads}", "one.py")
    second = write_chapter(book.english, f"# %%\nprint('two')\n{threads}", "two.py")
    command = ["--root", str(book.root), "execute", "--jobs", "2", str(first), str(second)]
    assert cli.main(command) == 0
    # Each kernel runs torch on one thread: threads that wait on each other at every
    # kernel make a busy machine slow (book.execute.KERNEL_THREADS).
    assert outputs_of(execute.executed_path(book, book.chapter(first))) == ["one\n1 1\n"]
    assert outputs_of(execute.executed_path(book, book.chapter(second))) == ["two\n1 1\n"]
    assert "2 of 2 chapters executed" in capsys.readouterr().out
    assert cli.main(command) == 0
    assert "0 of 2 chapters executed" in capsys.readouterr().out


def test_a_kernel_keeps_the_threads_that_omp_num_threads_asks_for(book, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    chapter = write_chapter(book.english, "# %%\nimport torch\nprint(torch.get_num_threads())\n")
    assert outputs_of(execute.execute(book, chapter)[0]) == ["2\n"]


def test_cache_key_covers_the_package_the_parser_and_the_environment(book, monkeypatch):
    chapter = write_chapter(book.english, "# %%\nprint(1)\n")
    package = book.package
    (package / "module.py").write_text("x = 1\n", encoding="utf-8")

    def key() -> str:
        return execute.cache_key(book, book.chapter(chapter))

    first = key()
    assert key() == first
    (package / "module.py").write_text("x = 2\n", encoding="utf-8")
    changed_code = key()
    assert changed_code != first

    # Package data changes what a chapter prints too (attention-check's messages).
    (package / "messages").mkdir()
    (package / "messages" / "zh.toml").write_text('as_role = "a"\n', encoding="utf-8")
    with_data = key()
    assert with_data != changed_code
    (package / "messages" / "zh.toml").write_text('as_role = "b"\n', encoding="utf-8")
    changed_src = key()
    assert changed_src != with_data
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "module.cpython-311.pyc").write_bytes(b"bytecode")
    assert key() == changed_src  # bytecode is not the package

    # The parser decides what executes (it strips the stated outputs).
    parser = book.root / "source.py"
    parser.write_bytes(Path(source.__file__).read_bytes())
    monkeypatch.setattr(
        execute, "TOOLING", (execute.__file__, str(parser), execute.include.__file__)
    )
    assert key() == changed_src
    parser.write_text(parser.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    changed_parser = key()
    assert changed_parser != changed_src

    monkeypatch.setattr(execute, "_environment", lambda: "python-3.99\ntorch-0.0.1")
    assert key() != changed_parser


def test_the_environment_names_python_and_torch():
    lines = environment().splitlines()
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


def test_an_include_cell_shows_and_defines_the_packages_code(book):
    package = book.package
    (package / "module.py").write_text(PACKAGED, encoding="utf-8")
    chapter = write_chapter(
        book.english, '# %% include="attention_mechanisms.module.twice"\n\n# %%\nprint(twice(21))\n'
    )
    path, _ = execute.execute(book, chapter)
    nb = nbformat.read(path, as_version=4)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert code[0].source == "def twice(x):\n    return 2 * x"  # as the book shows it
    # The page links to the full source from the tag (book.page).
    assert code[0].metadata == {"tags": ["include:attention_mechanisms.module.twice"]}
    assert outputs_of(path) == ["42\n"]
    # Editing the function executes the chapter again and changes what it prints.
    (package / "module.py").write_text(PACKAGED.replace("2 * x", "3 * x"), encoding="utf-8")
    path, ran = execute.execute(Build(book.root), chapter)  # the next build
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
def test_a_bad_include_is_named(book, cell, message):
    package = book.package
    (package / "module.py").write_text(PACKAGED, encoding="utf-8")
    with pytest.raises(BookError, match=message):
        execute.execute(book, write_chapter(book.english, cell))


def test_a_failing_cell_fails_with_the_chapter_named(book):
    chapter = write_chapter(book.english, "# %%\nprint(1)\n# %%\n1 / 0\n")
    message = r"chapter\.py, line 3: raised ZeroDivisionError: division by zero\n1 / 0\n"
    with pytest.raises(BookError, match=message):
        execute.execute(book, chapter)


def test_a_failing_cell_after_one_allowed_to_raise_is_the_one_named(book):
    chapter = write_chapter(
        book.english,
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
        execute.execute(book, chapter)


def test_a_marked_cell_must_raise_the_stated_error(book):
    good = write_chapter(
        book.english,
        """
        # %% tags=["raises-exception"] raises="ZeroDivisionError: division by zero"
        1 / 0
        # %%
        print("after")
        """,
        name="good.py",
    )
    path, _ = execute.execute(book, good)
    assert outputs_of(path)[-1] == "after\n"

    wrong_message = write_chapter(
        book.english,
        '# %% tags=["raises-exception"] raises="ZeroDivisionError: something else"\n1 / 0\n',
        name="wrong_message.py",
    )
    with pytest.raises(BookError, match=r"line 1: expected 'ZeroDivisionError: some"):
        execute.execute(book, wrong_message)

    silent = write_chapter(
        book.english,
        '# %% tags=["raises-exception"] raises="ValueError"\nx = 1\n',
        name="silent.py",
    )
    with pytest.raises(BookError, match=r"expected 'ValueError', but the cell raised nothing"):
        execute.execute(book, silent)


def test_a_raising_cell_needs_both_the_tag_and_the_stated_error(book):
    chapter = write_chapter(
        book.english, '# %% tags=["raises-exception"]\nraise ValueError("x")\n', name="untold.py"
    )
    with pytest.raises(BookError, match=r"needs both the tag 'raises-exception' and"):
        execute.execute(book, chapter)


def test_the_executed_notebook_is_plain(book):
    """What the reader downloads: nbformat 4, the cells of the source and nothing else."""
    chapter = write_chapter(
        book.english,
        """
        # %% [markdown]
        # Exercise
        # %% tags=["solution"]
        print("answer")
        # %% [markdown] tags=["solution"]
        # Why it works
        """,
    )
    path, _ = execute.execute(book, chapter)
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


def test_check_passes_and_counts(book):
    chapter = write_chapter(book.english, CHECKED)
    report = checked(book, chapter)
    assert report.errors == []
    assert (report.checked, report.prose) == (1, 1)


def test_one_changed_digit_in_an_expectation_fails(book):
    chapter = write_chapter(book.english, CHECKED.replace("# 0.3333", "# 0.3334"))
    (error,) = checked(book, chapter).errors
    assert "chapter.py, line 5: output differs" in error
    assert "expected 0.3334, got 0.3333" in error


def test_a_code_change_that_alters_an_output_fails_and_update_repairs_it(book):
    chapter = write_chapter(book.english, CHECKED.replace("1 / 3", "2 / 3"))
    output_error, prose_error = checked(book, chapter).errors
    assert "expected 0.3333, got 0.6667" in output_error
    assert "the prose quotes 0.333" in prose_error
    assert update(book, chapter)
    assert "# 0.6667" in chapter.read_text(encoding="utf-8")
    report = checked(book, chapter)
    # The prose now quotes a number the chapter no longer prints.
    assert report.errors == [
        "docs/en/chapter.py, line 1: the prose quotes 0.333, which no output of the chapter prints"
    ]
    assert not update(book, chapter)  # nothing left to rewrite


def test_update_does_not_execute_again(book):
    chapter = write_chapter(book.english, CHECKED.replace("# Out:\n# 0.3333\n", ""))
    _, ran = execute.execute(book, chapter)
    assert ran
    assert update(book, chapter)
    assert execute.execute(book, chapter)[1] is False  # expectations are not part of the cache key
    assert checked(book, chapter).errors == []


def test_output_without_expectation_fails(book):
    chapter = write_chapter(book.english, "# %%\nprint('hello')\n")
    (error,) = checked(book, chapter).errors
    assert "printed output but states none" in error
    assert "| hello" in error


def test_nondeterministic_needs_a_reason(book):
    with_reason = write_chapter(
        book.english,
        '# %% nondeterministic="depends on the clock"\nimport time\nprint(time.time())\n',
    )
    report = checked(book, with_reason)
    assert report.errors == []
    assert report.nondeterministic == ["docs/en/chapter.py, line 1: depends on the clock"]

    without = write_chapter(
        book.english, '# %% nondeterministic=""\nprint(1)\n', name="without_reason.py"
    )
    (error,) = checked(book, without).errors
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


def test_code_cells_of_one_language_are_checked_and_the_prose_quotes_englishs(book):
    chapter = write_chapter(book.english, LANGUAGE_CELLS)
    report = checked(book, chapter)
    assert (report.errors, report.checked, report.prose) == ([], 2, 1)
    text = chapter.read_text(encoding="utf-8")
    (error,) = checked(book, chapter, text.replace("# 0.250", "# 0.251")).errors
    assert "line 9: output differs" in error  # the Vietnamese cell is checked too
    chapter.write_text(text.replace("English: 0.125", "English: 0.250"), encoding="utf-8")
    (error,) = checked(Build(book.root), chapter).errors  # printed on the Vietnamese page only
    assert error.endswith("line 1: the prose quotes 0.250, which no output of the chapter prints")


def test_a_lang_that_is_not_a_language_of_the_book_fails_the_check(book):
    text = LANGUAGE_CELLS.replace('lang="vi"', 'lang="fr"').replace(
        "[markdown]", '[markdown] lang="en"'
    )
    chapter = write_chapter(book.english, text)
    markdown, code = checked(book, chapter).errors
    assert markdown.startswith("docs/en/chapter.py, line 1: lang='en' on a Markdown cell; only")
    assert code.startswith("docs/en/chapter.py, line 9: lang='fr' is not a language of the book (")


def test_docstring_examples_pass():
    report = check_docstrings(REAL)
    assert report.errors == []
    assert report.checked >= 20


REAL_CHAPTERS = REAL.chapters()


def edit_first_stated_digit(text: str) -> str:
    """The chapter source with one digit of its first stated number changed."""
    chapter = source.parse(text, Path("chapter.py"), "chapter.py")
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
def test_every_chapter_fails_when_a_stated_value_is_edited(chapter):
    # The real chapters share the repository's cache with the site build: execute once.
    build = Build(ROOT)
    assert check(build, build.chapter(chapter)).errors == []
    edited = edit_first_stated_digit(chapter.read_text("utf-8"))
    errors = check(build, source.parse(edited, chapter, build.shown(chapter))).errors
    assert len(errors) == 1
    assert errors[0].startswith(f"{build.shown(chapter)}, line ")
    assert "output differs from the source" in errors[0]


@pytest.mark.parametrize(
    "chapter", REAL_CHAPTERS, ids=lambda p: p.relative_to(ROOT / "docs/en").as_posix()
)
def test_no_heading_is_folded_into_a_solution(chapter):
    """A solution's fold ends where the next exercise starts: a heading is never tagged."""
    for cell in REAL.chapter(chapter).cells:
        if cell.kind == "markdown" and "solution" in cell.metadata.get("tags", []):
            headings = [line for line in cell.source.splitlines() if line.startswith("#")]
            assert headings == [], f"{REAL.shown(chapter)}, line {cell.line}: {headings}"


def test_the_site_command_holds_the_playground_to_the_package_before_building(
    book, monkeypatch, capsys
):
    """`python -m book site` builds nothing while the playground's JavaScript differs."""
    built = []
    monkeypatch.setattr(cli.playground_check, "verify", lambda build: ["stage 3.5: differs"])
    monkeypatch.setattr(cli.playground_check, "verify_trained", lambda build: [])
    monkeypatch.setattr(cli.publish, "build_site", lambda *args: built.append(args) or [])
    assert cli.main(["--root", str(book.root), "site"]) == 1
    assert built == []
    assert "stage 3.5: differs" in capsys.readouterr().err
    monkeypatch.setattr(cli.playground_check, "verify", lambda build: [])
    assert cli.main(["--root", str(book.root), "site", "vi"]) == 0
    assert [languages for _, languages in built] == [["vi"]]
