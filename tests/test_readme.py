"""The README and the contributor guide say what is true.

The README's example prints what its comment says, its quick start is what CI runs and
installs no Node.js, its attention-check commands parse, it states the Python floor, and
it stays short. CONTRIBUTING.md describes every nox session, its recipes name files that
exist and every place that lists what they add (tests/test_recipes.py follows each), and no
relative link in the three documents leads nowhere.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import tomllib
from pathlib import Path

import pytest

from attention_mechanisms.check.cli import _parser

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
CONTRIBUTING = ROOT / "CONTRIBUTING.md"
CHANGELOG = ROOT / "CHANGELOG.md"
MAX_WORDS = 1200  # the README is for readers and users; detail goes to CONTRIBUTING.md
QUICK_START = "python3 -m venv .venv && .venv/bin/pip install -c constraints.txt nox"


def blocks(path: Path, language: str) -> list[str]:
    """The fenced code blocks of ``path`` in ``language``."""
    return re.findall(rf"```{language}\n(.*?)```", path.read_text(encoding="utf-8"), re.S)


def commands(path: Path) -> list[str]:
    """Every line of the bash blocks of ``path``, without its comment."""
    lines = (
        line.partition("#")[0].strip()
        for block in blocks(path, "bash")
        for line in block.splitlines()
    )
    return [line for line in lines if line]


def test_readme_example_prints_the_books_first_row():
    # The first Python block is the example at the top of the README.
    code = blocks(README, "python")[0]
    promised = re.search(r"# (tensor\(\[[^\]]*\])", code).group(1)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(README), "exec"), {})
    assert out.getvalue().startswith(promised), (promised, out.getvalue())


def test_the_readme_states_the_python_floor():
    # `nox -s pins` checks the same sentence; this says so before a session runs.
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    floor = re.fullmatch(r">=\s*(3\.\d+)", pyproject["project"]["requires-python"])[1]
    assert f"Python {floor} or newer" in README.read_text(encoding="utf-8")


def test_the_readme_is_short():
    words = len(README.read_text(encoding="utf-8").split())  # as `wc -w` counts them
    assert words <= MAX_WORDS, f"README.md has {words} words; move detail to CONTRIBUTING.md"


def test_the_quick_start_installs_no_nodejs():
    # apt refuses Debian's npm beside NodeSource's nodejs (`nodejs : Conflicts: npm`); nox
    # takes Node.js from PyPI instead, so the quick start works whatever Node.js is there.
    installs = [line for line in commands(README) if "apt-get install" in line]
    assert installs
    for line in installs:
        assert not {"nodejs", "npm"} & set(line.split()), line


def test_ci_runs_the_quick_start():
    assert QUICK_START in commands(README)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert QUICK_START in ci
    assert ".venv/bin/nox" in commands(README) and ".venv/bin/nox" in ci
    workflow = (ROOT / ".github" / "workflows" / "ci.yml").read_text(encoding="utf-8")
    assert "run: bash .ci/run" in workflow


@pytest.mark.parametrize(
    "line", [line for line in commands(README) if line.startswith("attention-check ")]
)
def test_the_readmes_attention_check_commands_parse(line):
    _parser().parse_args(shlex.split(line)[1:])  # exits with status 2 on a bad option


def test_every_nox_session_is_described_for_contributors():
    noxfile = (ROOT / "noxfile.py").read_text(encoding="utf-8")
    sessions = re.findall(r"^@nox\.session\b.*\n(?:@timed\n)?def (\w+)", noxfile, re.M)
    assert "tests" in sessions
    guide = CONTRIBUTING.read_text(encoding="utf-8")
    assert [s for s in sessions if f"`nox -s {s}" not in guide] == []


def test_the_readme_leads_contributors_to_the_guide():
    assert "(CONTRIBUTING.md)" in README.read_text(encoding="utf-8")


@pytest.mark.parametrize("path", [README, CONTRIBUTING, CHANGELOG], ids=lambda p: p.name)
def test_relative_links_lead_to_files(path):
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    text = re.sub(r"(`+).+?\1", "", text, flags=re.S)  # code spans may show link syntax
    targets = re.findall(r"\]\(([^)\s]+)\)", text)
    local = [t.partition("#")[0] for t in targets if not re.match(r"[a-z]+:|#", t)]
    assert [t for t in local if not (path.parent / t).exists()] == []


def test_the_readme_names_every_public_module_and_every_part_of_the_book():
    text = README.read_text(encoding="utf-8")
    package = ROOT / "src" / "attention_mechanisms"
    modules = [p.name for p in package.glob("*.py") if not p.name.startswith("_")]
    modules += [f"{p.name}/" for p in package.iterdir() if (p / "__init__.py").exists()]
    assert [m for m in modules if f"`{m}`" not in text] == []
    # The chapters beyond the book, by their titles, as the navigation lists them.
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8").split("- Beyond the book:")[1]
    pages = re.findall(r"^\s+- (\S+\.py)$", nav.split("- API reference:")[0], re.M)
    titles = [
        re.search(r"^# # (.+)$", (ROOT / "docs" / "en" / page).read_text(encoding="utf-8"), re.M)[1]
        for page in pages
    ]
    assert len(titles) >= 7
    prose = " ".join(text.split()).lower()  # a title may wrap across lines
    assert [t for t in titles if t.lower() not in prose] == []


# CONTRIBUTING.md: short, with recipes whose steps name files that exist.
MAX_GUIDE_WORDS = 2500
RECIPES = (
    "Add a chapter",
    "Add an attention class",
    "Add a language",
    "Add a check to attention-check",
)
# A placeholder in a recipe's path stands for any instance; these instances exist.
INSTANCES = {
    "<lang>": "id",
    "<part>": "llms",
    "<page>": "latent-attention",
    "<module>": "causal",
    "<mistake>": "scale_after_softmax",
}
FILE_ENDINGS = (".py", ".md", ".yml", ".toml", ".po", ".js", ".css", ".html", ".txt", ".json")
# What the language recipe must name: the files each language has, and the lists of codes.
LANGUAGE_FILES = (
    "mkdocs.<lang>.yml",
    "docs/<lang>/",
    "translations/<lang>.md",
    "src/attention_mechanisms/check/messages/<lang>.toml",
)
LANGUAGE_LISTS = ("extra.languages", "LANGUAGES", "QUERIES", "COMMA", "RULES")
# What the check recipe must name: where a check is declared, its words, the notebook of the
# mistake it catches, and the tables that hold each check to a case (name: where it is).
CHECK_FILES = (
    "src/attention_mechanisms/check/checks.py",
    "src/attention_mechanisms/check/messages/<lang>.toml",
    "tests/fixtures/check/mistakes/<mistake>.py",
    "tests/fixtures/check/README.md",
    "docs/en/chapter-3/check-your-code.py",
)
CHECK_LISTS = {
    "TABLE": "src/attention_mechanisms/check/checks.py",
    "MISTAKES": "tests/test_check.py",
    "BROKEN": "tests/test_check_cases.py",
}


def recipe(title: str) -> str:
    """The text of the recipe ``### title`` in CONTRIBUTING.md, up to the next heading."""
    text = CONTRIBUTING.read_text(encoding="utf-8")
    found = re.search(rf"^### {re.escape(title)}\n(.*?)(?=^#|\Z)", text, re.M | re.S)
    assert found, f"CONTRIBUTING.md has no recipe {title!r}"
    return found[1]


def recipe_paths(title: str) -> list[str]:
    """The repository paths that the recipe writes in backticks."""
    spans = re.findall(r"`([^`\s]+)`", recipe(title))
    return [s for s in spans if "/" in s or s.endswith(FILE_ENDINGS)]


def instance(path: str) -> str:
    for placeholder, value in INSTANCES.items():
        path = path.replace(placeholder, value)
    return path


def test_the_guide_is_short():
    words = len(CONTRIBUTING.read_text(encoding="utf-8").split())  # as `wc -w` counts them
    assert words <= MAX_GUIDE_WORDS, f"CONTRIBUTING.md has {words} words; say each thing once"


def test_the_guides_sections_named_elsewhere_are_headings():
    # Comments in the code point to sections by name: CONTRIBUTING.md, "Fonts".
    headings = re.findall(r"^#+ (.+)$", CONTRIBUTING.read_text(encoding="utf-8"), re.M)
    files = [
        p for d in (".ci", "docs/overrides", "src", "tools/book") for p in (ROOT / d).rglob("*")
    ]
    cited = {
        name
        for path in [*files, README]
        if path.is_file()
        for name in re.findall(r'CONTRIBUTING\.md, "([^"]+)"', path.read_text("utf-8", "ignore"))
    }
    assert {"Fonts", "The playground's markup"} <= cited
    assert sorted(cited - set(headings)) == []


@pytest.mark.parametrize("title", RECIPES)
def test_each_recipe_is_a_short_numbered_list(title):
    numbers = [int(n) for n in re.findall(r"^(\d+)\. ", recipe(title), re.M)]
    assert numbers == list(range(1, len(numbers) + 1)), numbers
    assert 4 <= len(numbers) <= 8, f"{title}: {len(numbers)} steps"


@pytest.mark.parametrize("title", RECIPES)
def test_every_path_in_a_recipe_exists(title):
    paths = recipe_paths(title)
    assert len(paths) >= 4, paths
    assert [p for p in paths if not (ROOT / instance(p)).exists()] == []


def languages_with(template: str) -> set[str]:
    """The languages for which the file ``template`` names exists."""
    head, _, tail = template.partition("<lang>")
    pattern = re.compile(re.escape(head) + r"([a-z]{2,3})" + re.escape(tail.rstrip("/")))
    found = ROOT.glob(template.replace("<lang>", "*").rstrip("/"))
    return {m[1] for p in found if (m := pattern.fullmatch(p.relative_to(ROOT).as_posix()))}


def test_the_language_recipe_names_every_place_that_lists_the_languages():
    from attention_mechanisms.check.messages import LANGUAGES

    text = recipe("Add a language")
    paths = recipe_paths("Add a language")
    assert [f for f in LANGUAGE_FILES if f not in paths] == []
    assert [name for name in LANGUAGE_LISTS if f"`{name}`" not in text] == []
    translations = set(LANGUAGES) - {"en"}
    assert translations >= {"vi", "zh", "id"}
    for template in (p for p in paths if "<lang>" in p):
        assert languages_with(template) - {"en"} == translations, template
    mkdocs = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert re.findall(r"^\s+lang: (\S+)$", mkdocs, re.M) == list(LANGUAGES)
    browser = (ROOT / "tests" / "browser" / "test_languages.py").read_text(encoding="utf-8")
    queries = re.search(r"^QUERIES = \{(.*?)^\}", browser, re.M | re.S)[1]
    assert set(re.findall(r'^\s+"(\w+)":', queries, re.M)) == set(LANGUAGES)


def test_a_chapter_that_prints_a_report_per_language_is_in_the_language_recipe():
    # A cell marked lang="<code>" is shown on that language's page alone: a new language
    # without its own copy of each such cell shows none of them (tests/test_one_source.py).
    text = recipe("Add a language")
    paths = recipe_paths("Add a language")
    english = ROOT / "docs" / "en"
    chapters = [
        path.relative_to(ROOT).as_posix()
        for path in sorted(english.rglob("*.py"))
        if re.search(r'^# %%.*\blang="', path.read_text(encoding="utf-8"), re.M)
    ]
    assert "docs/en/chapter-3/check-your-code.py" in chapters
    assert [chapter for chapter in chapters if chapter not in paths] == []
    assert 'lang="<lang>"' in text


def test_the_translators_guide_leads_to_the_one_language_recipe():
    # The steps are CONTRIBUTING.md's alone: two lists would drift apart.
    text = (ROOT / "translations" / "README.md").read_text(encoding="utf-8")
    section = text.split("## A new language")[1]
    assert "(../CONTRIBUTING.md#add-a-language)" in section
    assert re.findall(r"^\d+\. ", text, re.M) == [], "translations/README.md lists steps"


def test_the_check_recipe_names_every_place_that_lists_the_checks():
    from attention_mechanisms.check.messages import LANGUAGES

    text = recipe("Add a check to attention-check")
    paths = recipe_paths("Add a check to attention-check")
    assert [f for f in CHECK_FILES if f not in paths] == []
    assert languages_with("src/attention_mechanisms/check/messages/<lang>.toml") == set(LANGUAGES)
    for name, path in CHECK_LISTS.items():
        assert f"`{name}`" in text, name
        assert re.search(rf"^{name}\b[^=\n]*=", (ROOT / path).read_text("utf-8"), re.M), path


def test_the_check_your_code_table_lists_every_check():
    # The recipe's step: each check has its row in the chapter's table, in the table's order.
    from attention_mechanisms.check.checks import CHECKS

    chapter = (ROOT / "docs" / "en" / "chapter-3" / "check-your-code.py").read_text("utf-8")
    rows = re.findall(r"^# \| `(\w+)` \|", chapter, re.M)
    assert rows == list(CHECKS)


@pytest.mark.parametrize("title", RECIPES)
def test_every_recipe_is_followed_by_a_test(title):
    recipes = (ROOT / "tests" / "test_recipes.py").read_text(encoding="utf-8")
    assert f'CONTRIBUTING.md, "{title}"' in recipes


def test_every_class_the_readme_names_is_the_packages():
    import attention_mechanisms

    table = README.read_text(encoding="utf-8").split("| module |")[1].split("\n\n")[0]
    named = re.findall(r"`([A-Z][A-Za-z0-9_]+)`", table)  # classes: CamelCase
    assert len(named) >= 10
    assert [n for n in named if not hasattr(attention_mechanisms, n)] == []
