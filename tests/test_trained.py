"""The playground's trained stage: the export of the model, and its JavaScript against it.

A small untrained model stands in for the chapter's (which takes a training run): the
JavaScript must compute what the package computes for any weights.
"""

from __future__ import annotations

import array
import inspect
import json

import nbformat
import pytest
import torch
from checkouts import make_checkout, write_chapter

from attention_mechanisms.induction import AttentionOnlyTransformer, train_induction
from attention_mechanisms.repeats import SYMBOLS
from book import BookError, cli, playground_check, trained
from book.build import TOOLING, Build
from book.execute import execute
from book.playground import MODULE

BOOK = Build(TOOLING)


@pytest.fixture
def small(monkeypatch):
    torch.manual_seed(0)
    model = AttentionOnlyTransformer(64, 9, d_model=8, num_heads=2, num_layers=2).eval()
    with torch.no_grad():
        for parameter in model.parameters():  # weights large enough for sharp attention
            parameter.mul_(3.0)
    monkeypatch.setattr(trained, "model", lambda build: model)
    return model


def test_the_export_holds_every_tensor_where_the_manifest_says(small):
    manifest, blob = trained.manifest(BOOK), trained.export(BOOK)
    numbers = array.array("f", blob)
    assert manifest["size"] == len(blob) == 4 * len(numbers)
    state = small.state_dict()
    assert [t["name"] for t in manifest["tensors"]] == [k for k in state if "mask" not in k]
    for entry in manifest["tensors"]:
        tensor = state[entry["name"]]
        assert entry["shape"] == list(tensor.shape)
        found = torch.tensor(numbers[entry["offset"] : entry["offset"] + tensor.numel()])
        assert torch.equal(found.view(tensor.shape), tensor)
    assert manifest["config"] == {
        "vocab_size": 64,
        "context_length": 9,
        "d_model": 8,
        "num_heads": 2,
        "num_layers": 2,
        "rope_base": 10_000,
    }
    assert manifest["symbols"] == SYMBOLS and set(manifest["default"]) <= set(SYMBOLS)


def test_the_javascript_computes_what_the_package_does_on_random_sequences(small):
    assert playground_check.verify_trained(BOOK, count=30) == []


@pytest.mark.parametrize(
    ("change", "what"),
    [
        ("return s / Math.sqrt(headDim);", "return s / headDim;"),  # another scale
        ("if (j > i) return -Infinity;", "if (j > i + 1) return -Infinity;"),  # a future key
        ("a * Math.cos(angle) - b * Math.sin(angle)", "a * Math.cos(angle) + b * Math.sin(angle)"),
        ("return p.tok[id].slice();", "return p.tok[id].map(function (v) { return v + 0.1; });"),
        (
            "x = x.map(function (row, i) { return row.map(function (v, d) { return v + ",
            "x = x.map(function (row, i) { return row.map(function (v, d) { return 0 + ",
        ),
    ],
)
def test_a_wrong_javascript_fails_and_names_the_sequence(small, tmp_path, change, what):
    # A checkout whose induction.js is wrong: the check runs the checkout's own script.
    build = make_checkout(tmp_path / "book")
    module = build.root / MODULE.with_name("induction.js")
    module.parent.mkdir(parents=True)
    text = (BOOK.root / MODULE.with_name("induction.js")).read_text(encoding="utf-8")
    assert change in text
    module.write_text(text.replace(change, what), encoding="utf-8")
    problems = playground_check.verify_trained(build, count=10)
    assert problems and all("the JavaScript differs from the package" in p for p in problems)
    assert "sequence [64," in problems[0]


def test_the_browser_tests_get_the_package_numbers_as_plain_json(small):
    (result,) = cli.package_results(BOOK, [{"stage": "trained", "sequence": "abcab"}])
    text = json.dumps(result)  # plain JSON: the browser tests run without torch
    assert json.loads(text) == result
    assert len(result["weights"]) == 2 and len(result["weights"][0]) == 2
    assert len(result["weights"][0][0]) == 6  # the start token and five characters
    assert all(abs(sum(row) - 1) < 1e-5 for row in result["weights"][1][1])
    assert [p["probability"] for p in result["predicted"]] == sorted(
        (p["probability"] for p in result["predicted"]), reverse=True
    )


def test_the_model_is_the_one_its_chapter_trained_and_exported(tmp_path):
    build = make_checkout(tmp_path / "book")
    write_chapter(
        build.english,
        """
        # %%
        import torch
        from attention_mechanisms.induction import AttentionOnlyTransformer

        # %% export="model losses"
        torch.manual_seed(3)
        model = AttentionOnlyTransformer(8, 5, d_model=4, num_heads=2, num_layers=1)
        losses = [2.5, 0.25]
        """,
        name=trained.CHAPTER,
    )
    found, losses = trained.model(build), trained.exported(build)["losses"]
    # A new build of the same checkout finds that execution in the store: nothing ran again.
    notebook, ran = execute(Build(build.root), build.english / trained.CHAPTER)
    assert losses == [2.5, 0.25]
    torch.manual_seed(3)
    expected = AttentionOnlyTransformer(8, 5, d_model=4, num_heads=2, num_layers=1)
    assert found.state_dict().keys() == expected.state_dict().keys()
    assert all(torch.equal(found.state_dict()[k], v) for k, v in expected.state_dict().items())
    assert not ran  # cached: the model comes from that one execution
    cells = nbformat.read(notebook, as_version=4).cells
    assert [c.source.splitlines()[0] for c in cells] == ["import torch", "torch.manual_seed(3)"]
    assert notebook.is_relative_to(build.root / ".cache" / "book")  # the checkout's own store


@pytest.mark.parametrize("mark", ["", "model, losses", "1st", "model-2"])
def test_an_export_that_names_no_variable_is_refused(tmp_path, mark):
    build = make_checkout(tmp_path / "book")
    chapter = write_chapter(build.english, f'# %% export="{mark}"\nx = 1\n', name="bad.py")
    with pytest.raises(
        BookError, match=r'^docs/en/bad\.py: export= must name variables: export="model losses"'
    ):
        execute(build, chapter)


def test_the_chapters_model_downloads_in_at_most_60_kb(monkeypatch):
    # The chapter's sizes (train_induction's defaults), untrained: the file holds the same
    # tensors whatever their values.
    defaults = {
        name: p.default for name, p in inspect.signature(train_induction).parameters.items()
    }
    model = AttentionOnlyTransformer(
        defaults["vocab_size"],
        1 + defaults["lengths"][1],
        defaults["d_model"],
        defaults["num_heads"],
        defaults["num_layers"],
    )
    monkeypatch.setattr(trained, "model", lambda build: model)
    assert len(trained.export(BOOK)) == trained.manifest(BOOK)["size"] <= 60_000


def test_the_default_sequence_shows_the_chapters_model_copying_across_a_gap():
    """The run comes back after other tokens, and after its second copy the model predicts
    the token that followed the first: the gap's first token."""
    run, gap = trained.DEFAULT[:7], trained.DEFAULT[7:10]
    assert run + gap + run == trained.DEFAULT and not set(gap) & set(run)
    result = trained.package_result(BOOK, trained.DEFAULT)  # the chapter's model
    assert result["predicted"][0]["token"] == gap[0]
