"""Each recipe of CONTRIBUTING.md, followed on a scratch copy of the repository as a
contributor follows it, step by step, to a green build.

The copy holds what git would commit (`git ls-files --cached --others --exclude-standard`),
the stores of ``.cache/`` whose keys are made from content (``book``, ``pages``,
``mkdocs-jupyter``, ``translations``: a chapter or page that the recipe leaves alone is found
there, not executed or typeset again) and a link to ``node_modules``. Every command runs in
the copy, with the copy's package and tooling first on the path, as an editable install of
the copy gives them: ``python -m book --root <copy>``, MkDocs on the copy's config (its hook
makes the `Build` of the checkout that holds the config), pytest on the copy's tests.

A recipe that changes the package changes the key of every chapter's execution, so its
build is the recipe's own commands, scoped to what it changed; each test says what it
builds, and why no more.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import polib
import pytest

from book.build import Build

ROOT = Path(__file__).resolve().parents[1]
STORES = ("book", "pages", "mkdocs-jupyter", "translations")  # keyed by content
LIMIT = 1800  # seconds: a command that hangs fails the test (no time is asserted)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (ROOT / ".git").exists(), reason="the copy is made with git"),
]


class Copy:
    """A scratch copy of the repository, and the commands a contributor runs in it."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def __truediv__(self, name: str) -> Path:
        return self.root / name

    def edit(self, name: str, old: str, new: str) -> None:
        """Replace the one ``old`` of file ``name`` with ``new``."""
        path = self.root / name
        text = path.read_text(encoding="utf-8")
        assert text.count(old) == 1, f"{name}: {old!r} is not there once"
        path.write_text(text.replace(old, new), encoding="utf-8")

    def sub(self, name: str, pattern: str, new: str) -> None:
        """Replace the one match of ``pattern`` (a line-wise regex) in file ``name``."""
        path = self.root / name
        text, count = re.subn(pattern, new, path.read_text(encoding="utf-8"), flags=re.M)
        assert count == 1, f"{name}: {pattern!r} matches {count} times"
        path.write_text(text, encoding="utf-8")

    def environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
        paths = [str(self.root / "src"), str(self.root / "tools"), env.get("PYTHONPATH", "")]
        scratch = self.root.parent / "tmp"  # every temporary file of theirs stays in tmp_path
        scratch.mkdir(exist_ok=True)
        return {
            **env,
            "PYTHONPATH": os.pathsep.join(filter(None, paths)),
            "NO_MKDOCS_2_WARNING": "1",
            "TMPDIR": str(scratch),
            "JUPYTER_RUNTIME_DIR": str(scratch / "jupyter"),
        }

    def run(self, *args: object, status: int = 0) -> str:
        """Run ``python *args`` in the copy; its output, once it exits with ``status``."""
        command = [sys.executable, *map(str, args)]
        done = subprocess.run(
            command, cwd=self.root, env=self.environment(), capture_output=True, text=True,
            timeout=LIMIT,
        )  # fmt: skip
        output = done.stdout + done.stderr
        shown = " ".join(map(str, args))
        assert done.returncode == status, f"{shown}: exit {done.returncode}\n{output[-8000:]}"
        return output

    def book(self, *args: object) -> str:
        return self.run("-m", "book", "--root", self.root, *args)

    def mkdocs(self, language: str) -> Path:
        """Build ``language``'s site, strict; its folder."""
        self.run("-m", "mkdocs", "build", "--strict", "-f", Build(self.root).config(language))
        return self.root / "site" / language

    def pytest(self, *args: object) -> str:
        return self.run("-m", "pytest", "-q", "-p", "no:cacheprovider", *args)


def _copy_store(source: Path, target: Path) -> None:
    """Copy the store ``source`` to ``target``, which another build may be writing: not its
    locks or partial files, nor a result removed meanwhile or a JSON file half written
    (mkdocs-jupyter writes in place). A result left out is a miss, made again."""
    for path in sorted(source.rglob("*")):
        if path.is_dir() or path.suffix == ".lock" or ".partial" in path.name:
            continue
        try:
            data = path.read_bytes()
            if path.suffix == ".json":
                json.loads(data)
        except (FileNotFoundError, ValueError):
            continue
        destination = target / path.relative_to(source)
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(data)


@pytest.fixture
def copy(tmp_path: Path) -> Copy:
    root = tmp_path / "checkout"
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT, capture_output=True, check=True,
    ).stdout.decode()  # fmt: skip
    for name in filter(None, listed.split("\0")):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        try:
            shutil.copy2(ROOT / name, root / name)
        except FileNotFoundError:  # a tracked file deleted in the working tree is listed too
            continue
    for store in STORES:
        if (ROOT / ".cache" / store).is_dir():
            _copy_store(ROOT / ".cache" / store, root / ".cache" / store)
    if (ROOT / ".mypy_cache").is_dir():  # mypy, in the copy, checks again what changed only
        shutil.copytree(ROOT / ".mypy_cache", root / ".mypy_cache", dirs_exist_ok=True)
    if (ROOT / "node_modules").is_dir():
        (root / "node_modules").symlink_to(ROOT / "node_modules", target_is_directory=True)
    scratch = Copy(root)
    found = scratch.run(
        "-c", "import importlib.util as u; print(u.find_spec('book').origin); "
        "print(u.find_spec('attention_mechanisms').origin)",
    )  # fmt: skip
    assert all(Path(line).is_relative_to(root) for line in found.split()), found
    return scratch


# ------------------------------------------------------------------------------ a chapter

CHAPTER = """\
# %% [markdown]
# # A tiny chapter
#
# The softmax turns three scores into weights that sum to 1.

# %%
import torch

weights = torch.softmax(torch.tensor([1.0, 2.0, 3.0]), dim=0)
print(weights)
"""
TITLES = {"en": "A tiny chapter", "vi": "Một chương nhỏ", "zh": "一个小章节", "id": "Bab kecil"}


def test_add_a_chapter(copy):
    """CONTRIBUTING.md, "Add a chapter": a tiny chapter at the end of chapter 3, in the
    navigation of every language, its outputs written from its execution, a catalog for it
    in every language with its title translated; then English and Vietnamese, strict. Only
    the new chapter executes: every other one is found in the copied store (when the
    repository's is current)."""
    build = Build(copy.root)
    page = "chapter-3/tiny.py"
    # 1. The chapter; it includes no package class, so ruff needs no per-file-ignores.
    (copy / f"docs/en/{page}").write_text(CHAPTER, encoding="utf-8")
    # 2. Its place in the navigation of every language, with a translated title.
    for language in build.languages:
        title = TITLES.get(language, TITLES["en"])
        config = build.config(language).name
        copy.sub(config, r"^( +)(- .*chapter-3/check-your-code\.py\n)",
                 rf"\1\2\1- {title}: {page}\n")  # fmt: skip
    # 3. Its stated outputs, written from execution.
    assert "expected outputs rewritten" in copy.book("check", "--update", f"docs/en/{page}")
    stated = (copy / f"docs/en/{page}").read_text(encoding="utf-8")
    assert "# Out:\n# tensor([0.0900, 0.2447, 0.6652])" in stated
    # 4. A catalog for every language; here the title is translated.
    copy.book("translations", "--update")
    for language in build.translations:
        catalog = polib.pofile(str(copy / f"docs/{language}/chapter-3/tiny.po"))
        catalog.find("# A tiny chapter").msgstr = f"# {TITLES.get(language, TITLES['en'])}"
        catalog.save()
    # 5. No card on the home page: the navigation leads to it.
    # 6. The build, strict: English, and one translation (the others build the same way,
    # from the same catalogs, which `translations` read above).
    for language in build.languages[:2]:
        html = (copy.mkdocs(language) / "chapter-3" / "tiny" / "index.html").read_text("utf-8")
        assert TITLES.get(language, TITLES["en"]) in html, language
        assert "0.6652" in html, language


# ----------------------------------------------------------------------------- a class

MODULE = '''\
"""Multi-query attention: every query head shares one key head and one value head.

Grouped-query attention with a single key-value group (Shazeer, 2019): the smallest cache,
one head's keys and values per token and layer.
"""

from __future__ import annotations

import torch

from .grouped_query import GroupedQueryAttention

__all__ = ["MultiQueryAttention"]


class MultiQueryAttention(GroupedQueryAttention):
    """Causal attention with ``num_heads`` query heads sharing one key-value head.

    Args:
        d_in: Size of each input embedding.
        d_out: Size of the output, split evenly across the query heads.
        dropout: Probability in ``[0, 1)`` of zeroing each attention weight in training.
        num_heads: Number of query heads; must divide ``d_out``.
        qkv_bias: Give the query, key and value projections a bias term.
        dtype: Floating-point type of the parameters (``None``: PyTorch's default).

    Example:
        >>> mqa = MultiQueryAttention(8, 8, 0.0, num_heads=4)
        >>> mqa.W_key.weight.shape  # one key head of 2 features
        torch.Size([2, 8])
    """

    def __init__(
        self,
        d_in: int,
        d_out: int,
        dropout: float,
        num_heads: int,
        qkv_bias: bool = False,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__(d_in, d_out, dropout, num_heads, 1, qkv_bias, dtype=dtype)
'''
CLASS_TEST = '''\
"""MultiQueryAttention is grouped-query attention with one key-value head."""

from __future__ import annotations

import torch

from attention_mechanisms import GroupedQueryAttention, MultiQueryAttention


def test_it_is_grouped_query_attention_with_one_group():
    torch.manual_seed(123)
    mqa = MultiQueryAttention(6, 8, 0.0, num_heads=4)
    torch.manual_seed(123)
    gqa = GroupedQueryAttention(6, 8, 0.0, num_heads=4, num_kv_groups=1)
    x = torch.rand(2, 5, 6)
    torch.testing.assert_close(mqa(x), gqa(x), rtol=0, atol=0)
    assert mqa.W_key.weight.shape == (2, 6)
'''
FUNCTIONAL_TEST = """

def test_multi_query_attention_equals_the_functional_form():
    torch.manual_seed(0)
    mqa = MultiQueryAttention(5, 6, 0.0, num_heads=3).double()
    x = torch.randn(2, 7, 5, dtype=torch.float64)
    b, t, _ = x.shape
    q = mqa.W_query(x).view(b, t, 3, 2).transpose(1, 2)  # (b, h, T, d_head)
    k, v = (
        proj(x).view(b, t, 1, 2).transpose(1, 2).expand(b, 3, t, 2)  # one head, shared
        for proj in (mqa.W_key, mqa.W_value)
    )
    context, _ = scaled_dot_product_attention(q, k, v, causal=True)
    expected = mqa.out_proj(context.transpose(1, 2).reshape(b, t, 6))
    torch.testing.assert_close(mqa(x), expected, rtol=0, atol=1e-12)
"""
FACTORY = """\
    "MultiQueryAttention": lambda d_in=3, d_out=2, dropout=0.0, num_heads=2: MultiQueryAttention(
        d_in, d_out, dropout, num_heads
    ),
"""
DOCSTRINGS = """\
import sys
from pathlib import Path

from book.build import Build
from book.check import check_docstrings

report = check_docstrings(Build(Path.cwd()))
print(report.checked, "examples")
sys.exit("\\n".join(report.errors) or None)
"""


def test_add_an_attention_class(copy):
    """CONTRIBUTING.md, "Add an attention class": `MultiQueryAttention`, grouped-query
    attention with one key-value head, in a module of its own, exported, tested, in the API
    reference, the README and the changelog; then what the recipe runs, scoped to what
    changed: ruff and mypy, the new tests and the tests that list the classes, and the
    package's docstring examples.

    Not the site: the package is part of every chapter's key, so building even the API
    reference page would execute every chapter again (minutes) for a change that no chapter
    shows."""
    # 1. The module, its arguments checked by checks.py (through GroupedQueryAttention's).
    (copy / "src/attention_mechanisms/multi_query.py").write_text(MODULE, encoding="utf-8")
    # 2. Exported.
    init = "src/attention_mechanisms/__init__.py"
    copy.edit(init, "from .multihead import", "from .multi_query import MultiQueryAttention\n"
              "from .multihead import")  # fmt: skip
    copy.edit(init, '    "MultiHeadLatentAttention",\n',
              '    "MultiHeadLatentAttention",\n    "MultiQueryAttention",\n')  # fmt: skip
    # 3. Its tests, its row in FACTORIES, and its equality with the functional form.
    (copy / "tests/test_multi_query.py").write_text(CLASS_TEST, encoding="utf-8")
    validation = "tests/test_validation.py"
    copy.edit(
        validation,
        "    MultiHeadAttentionWrapper,\n    SelfAttention_v1,",
        "    MultiHeadAttentionWrapper,\n    MultiQueryAttention,\n    SelfAttention_v1,",
    )
    copy.edit(validation, "FACTORIES = {\n", "FACTORIES = {\n" + FACTORY)
    functional = "tests/test_classes_and_functional.py"
    copy.edit(
        functional,
        "    MultiHeadAttentionWrapper,\n    SelfAttention_v1,",
        "    MultiHeadAttentionWrapper,\n    MultiQueryAttention,\n    SelfAttention_v1,",
    )
    with (copy / functional).open("a", encoding="utf-8") as file:
        file.write(FUNCTIONAL_TEST)
    # 4. Its API reference page, its row in the reference's index, its place in the nav.
    causal = (copy / "docs/en/reference/causal.md").read_text(encoding="utf-8")
    (copy / "docs/en/reference/multi_query.md").write_text(
        causal.replace("causal", "multi_query"), encoding="utf-8"
    )
    copy.sub("docs/en/reference/index.md", r"^(\| \[`grouped_query`\].*\n)",
             r"\1| [`multi_query`](multi_query.md) | today's LLMs | "
             "[`MultiQueryAttention`][attention_mechanisms.multi_query.MultiQueryAttention]: "
             "every query head shares one key-value head |\n")  # fmt: skip
    copy.sub("mkdocs.yml", r"^( +)(- reference/grouped_query\.md\n)",
             r"\1\2\1- reference/multi_query.md\n")  # fmt: skip
    # 5. The README's module table, and the changelog.
    copy.sub("README.md", r"^(\| `grouped_query\.py` .*\n)",
             r"\1| `multi_query.py` | today's LLMs | `MultiQueryAttention` |\n")  # fmt: skip
    copy.edit("CHANGELOG.md", "## Unreleased\n\n", "## Unreleased\n\n- `MultiQueryAttention`: "
              "grouped-query attention with one key-value head.\n")  # fmt: skip
    # 6. nox -s lint, tests and examples, on what changed.
    changed = ["src/attention_mechanisms/multi_query.py", init, "tests/test_multi_query.py",
               validation, functional]  # fmt: skip
    copy.run("-m", "ruff", "check", *changed)
    copy.run("-m", "ruff", "format", "--check", *changed)
    copy.run("-m", "mypy")
    copy.pytest("tests/test_multi_query.py", validation, functional, "tests/test_readme.py")
    assert "examples" in copy.run("-c", DOCSTRINGS)


# -------------------------------------------------------------------------- a language

MALAY = "ms"  # a language Material speaks; its words copied from Indonesian, as a start


def _report_cells(text: str, language: str) -> list[str]:
    """The cells of the check-your-code chapter marked ``lang="<language>"``, whole."""
    marker = rf'^# %% tags=\["wrap-output"\] lang="{language}"\n'
    return re.findall(rf"{marker}.*?(?=\n\n# %%|\n*\Z)", text, re.M | re.S)


def test_add_a_language(copy):
    """CONTRIBUTING.md, "Add a language": Malay, its catalogs, glossary and attention-check's
    messages copied from Indonesian (a start its translators would take), every step of the
    recipe; then the new language's site, strict, its sample reports written from the
    chapter's execution, and the tests that hold every list of the languages to
    ``extra.languages`` (one source), the catalogues and the numbers.

    The site is built once the book's steps are done (1 to 3), before the package's: the
    messages are part of the package, which is part of every chapter's key, so after step 4
    every chapter would execute again (minutes). After it, only check-your-code, whose
    cells step 5 adds, executes. English is not built: it shows none of the new cells."""
    chapter = "docs/en/chapter-3/check-your-code.py"
    # 1. The one list of the languages.
    copy.sub("mkdocs.yml", r"^( +)(- name: .*\n +lang: id\n)",
             rf"\1\2\1- name: Bahasa Melayu\n\1  lang: {MALAY}\n")  # fmt: skip
    # 2. Its config, from Indonesian's: its code, address and folders, and its words.
    config = f"mkdocs.{MALAY}.yml"
    shutil.copy2(copy / "mkdocs.id.yml", copy / config)
    copy.sub(config, r"^(site_url: \S+/)id/$", rf"\g<1>{MALAY}/")
    copy.sub(config, r"^docs_dir: docs/id\b", f"docs_dir: docs/{MALAY}")
    copy.sub(config, r"^site_dir: site/id$", f"site_dir: site/{MALAY}")
    copy.sub(config, r"^( +language:) id$", rf"\1 {MALAY}")
    copy.sub(config, r"^site_name: .*$", "site_name: Mekanisme attention dalam PyTorch")
    # 3. Its catalogs (translated: here, Indonesian's), merged with today's English, and
    # its glossary.
    shutil.copytree(copy / "docs/id", copy / f"docs/{MALAY}")
    assert re.search(rf"^{MALAY}: ", copy.book("translations", "--update"), re.M)
    shutil.copy2(copy / "translations/id.md", copy / f"translations/{MALAY}.md")
    site = copy.mkdocs(MALAY)
    home = (site / "index.html").read_text(encoding="utf-8")
    assert f'<html lang="{MALAY}"' in home
    assert (site / "chapter-3" / "check-your-code" / "index.html").is_file()
    # 4. attention-check speaks it.
    messages = "src/attention_mechanisms/check/messages"
    shutil.copy2(copy / f"{messages}/id.toml", copy / f"{messages}/{MALAY}.toml")
    copy.sub(f"{messages}.py", r"^(LANGUAGES = \(.*)\)$", rf'\1, "{MALAY}")')
    # 5. The sample reports of check-your-code, once more for it, then their outputs.
    text = (copy / chapter).read_text(encoding="utf-8")
    cells = _report_cells(text, "id")
    assert len(cells) == 2, cells
    for cell in cells:
        ours = cell.split("\n# Out:")[0].replace('"id"', f'"{MALAY}"')
        text = text.replace(cell, f"{cell}\n\n{ours}")
    (copy / chapter).write_text(text, encoding="utf-8")
    copy.book("check", "--update", chapter)
    text = (copy / chapter).read_text(encoding="utf-8")
    assert [cell.split("# Out:")[1] for cell in _report_cells(text, MALAY)] == [
        cell.split("# Out:")[1].replace("/id/chapter-3/", f"/{MALAY}/chapter-3/")
        for cell in _report_cells(text, "id")
    ]
    # 6. The tests' own lists: what a reader searches for, the decimal comma, the numbers.
    copy.sub("tests/browser/test_languages.py", r'^(QUERIES = \{\n(?:.*\n)*?)\}',
             rf'\1    "{MALAY}": ["kausal"],\n}}')  # fmt: skip
    copy.sub("tests/browser/test_playground_reading.py", r'^(COMMA = \{.*)\}$',
             rf'\1, "{MALAY}": ","}}')  # fmt: skip
    with (copy / "tests/test_numbers.py").open("a", encoding="utf-8") as file:
        file.write(f'\nRULES["{MALAY}"] = RULES["id"]  # grouped as Indonesian groups them\n')
    # 7. Malay is written with spaces: no word splitter.
    # 8. The tests of the languages' one source, of the catalogues and of the numbers; and
    # the command, in Malay.
    copy.pytest("tests/test_one_source.py", "tests/test_check_messages.py",
                "tests/test_numbers.py", "tests/test_readme.py")  # fmt: skip
    report = copy.run(
        "-m", "attention_mechanisms.check", "--lang", MALAY,
        "tests/fixtures/check/zh-multihead-attention-buggy.ipynb", status=1,
    )  # fmt: skip
    assert f"/{MALAY}/chapter-3/pitfalls/#" in report


# ----------------------------------------------------------------------------- a check

GRADIENTS = '''

def gradients(s: ClassSubject) -> Result:
    """Every weight that the output depends on gets a gradient from it: a ``.detach()`` or
    ``torch.no_grad()`` in ``forward`` keeps training from reaching the weights before it (a
    weight never used is another check's mistake)."""
    if isinstance(ran := book_output(s), Result):
        return ran
    module, x, y = ran
    weights = {name: p for name, p in module.named_parameters() if p.requires_grad}
    try:
        with torch.enable_grad():
            out = module(x, x, x) if len(_required(module)) >= 3 else module(x)
            out = out[0] if isinstance(out, tuple) else out
            found = (
                torch.autograd.grad(out.sum(), list(weights.values()), allow_unused=True)
                if out.requires_grad
                else (None,) * len(weights)
            )
    except LEARNER_ERRORS:
        return skipped("skip_other_difference")
    missing = [name for name, grad in zip(weights, found, strict=True) if grad is None]
    if missing:
        never = stages.unused(module, x, y)  # the output does not depend on these at all
        missing = [name for name in missing if name not in never]
    if missing:
        message = msg("cause_no_gradient", cls=s.cls.__name__, names=", ".join(missing))
        return failed(message, s.role)
    return passed("pass_gradients", count=len(weights))


def _required(module: nn.Module) -> list[inspect.Parameter]:
    parameters = inspect.signature(module.forward).parameters.values()
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p for p in parameters if p.default is inspect.Parameter.empty and p.kind in kinds]
'''
# Its words in each language: (pass, fail).
WORDS = {
    "en": (
        "each of its {count} weights gets a gradient from the output",
        "{cls}: {names} get no gradient from the output: a .detach() or torch.no_grad() in "
        "forward keeps training from reaching them",
    ),
    "vi": (
        "cả {count} trọng số đều nhận được gradient từ đầu ra",
        "{cls}: {names} không nhận được gradient từ đầu ra: .detach() hoặc torch.no_grad() "
        "trong forward khiến việc huấn luyện không đến được chúng",
    ),
    "zh": (
        "全部 {count} 个权重都能从输出得到梯度",
        "{cls}\uff1a{names} 无法从输出得到梯度\uff1aforward 中的 .detach() 或 torch.no_grad() "
        "使训练无法更新它们",
    ),
    "id": (
        "semua {count} bobotnya mendapat gradien dari output",
        "{cls}: {names} tidak mendapat gradien dari output: .detach() atau torch.no_grad() "
        "di forward membuat pelatihan tidak menjangkaunya",
    ),
}
MISTAKE = """\
# %% [markdown]
# CausalAttention: the weights are detached, as in code that keeps them for a plot.

# %%
import torch
import torch.nn as nn


# %%
class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)
        self.register_buffer("mask", mask)

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)
        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1).detach()
        attn_weights = self.dropout(attn_weights)
        return attn_weights @ values
"""
NO_GRADIENT = "W_query.weight, W_key.weight get no gradient from the output"


def test_add_a_check_to_attention_check(copy):
    """CONTRIBUTING.md, "Add a check to attention-check": ``gradients``, every weight of a
    chapter-3 class gets a gradient from its output (a forward that detaches the weights
    fails it), with its words in every language, the notebook of the mistake it catches,
    its rows in the tests' tables and in check-your-code's; then what the recipe runs,
    scoped to what changed: ruff and mypy, attention-check's tests (every correct form still
    passes, each mistake fails its one check), check-your-code's outputs and the docstring
    examples, and the installed command on the new notebook.

    Not the site: attention-check is part of the package, which is part of every chapter's
    key, so a build would execute every chapter again (minutes); check-your-code, the one
    chapter whose outputs change, executes."""
    check = "src/attention_mechanisms/check"
    chapter = "docs/en/chapter-3/check-your-code.py"
    fixture = "tests/fixtures/check/mistakes/causal_weights_detached.py"
    # 1. The check, beside the checks that need no reference, and its row in TABLE.
    with (copy / f"{check}/properties.py").open("a", encoding="utf-8") as file:
        file.write(GRADIENTS)
    copy.edit(
        f"{check}/properties.py", "from .causes import", "from . import stages\nfrom .causes import"
    )
    copy.sub(f"{check}/checks.py", r'^( +)(Check\("out_proj", .*\n)',
             r'\1\2\1Check("gradients", CLASSES, ("constructs",), p.gradients),\n')  # fmt: skip
    # 2. Its words, in every catalogue; it links to its class's section, which exists.
    for catalogue in sorted((copy / f"{check}/messages").glob("*.toml")):
        passes, fails = WORDS.get(catalogue.stem, WORDS["en"])
        copy.edit(
            catalogue.relative_to(copy.root).as_posix(),
            "\n[links]\n",
            f'pass_gradients = "{passes}"\ncause_no_gradient = "{fails}"\n\n[links]\n',
        )
    # 3. The mistake it catches, and its rows.
    (copy / fixture).write_text(MISTAKE, encoding="utf-8")
    copy.sub(
        "tests/fixtures/check/README.md",
        r"^(\| `mistakes/scale_after_softmax\.py` .*\n)",
        r"\1| `mistakes/causal_weights_detached.py` | CausalAttention detaches its "
        r"attention weights | gradients: names the weights that get no gradient |\n",
    )
    copy.edit("tests/test_check.py", "MISTAKES = {\n", 'MISTAKES = {\n'
              '    "causal_weights_detached.py": (\n'
              f'        "CausalAttention", "gradients",\n        "{NO_GRADIENT}",\n'
              '        "CausalAttention",\n'
              "    ),\n")  # fmt: skip
    # 4. The line of renamed.py that breaks it alone.
    copy.edit("tests/test_check_cases.py", "BROKEN = {\n", "BROKEN = {\n"
              '    "gradients": in_class(\n'
              '        "CausalAttention",\n'
              '        "attn_weights = self.dropout(attn_weights)",\n'
              '        "attn_weights = self.dropout(attn_weights).detach()",\n'
              "    ),\n")  # fmt: skip
    # 5. Its row in check-your-code's table; the reports, which name it, from execution.
    copy.sub(
        chapter,
        r"^(# \| `out_proj` \|.*\n)",
        r"\1# | `gradients` | every weight gets a gradient from the output |\n",
    )
    copy.book("check", "--update", chapter)
    reports = len(Build(copy.root).languages)  # show() prints each check, in each language
    assert (copy / chapter).read_text(encoding="utf-8").count("skip  gradients") == reports
    copy.book("translations", "--update")
    # 6. nox -s lint, tests and examples, on what changed.
    changed = [f"{check}/properties.py", f"{check}/checks.py", "tests/test_check.py",
               "tests/test_check_cases.py"]  # fmt: skip
    copy.run("-m", "ruff", "check", *changed)
    copy.run("-m", "ruff", "format", "--check", *changed)
    copy.run("-m", "mypy")
    copy.pytest(
        "tests/test_check.py",
        "tests/test_check_cases.py",
        "tests/test_check_messages.py",
        "tests/test_readme.py",
        "-m",
        "not slow",
    )
    report = copy.run("-m", "attention_mechanisms.check", "--lang", "zh", fixture, status=1)
    assert "W_query.weight, W_key.weight 无法从输出得到梯度" in report
