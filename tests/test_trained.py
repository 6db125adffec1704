"""The playground's trained stage: the export of the model, and its JavaScript against it.

A small untrained model stands in for the chapter's (which takes a training run): the
JavaScript must compute what the package computes for any weights.
"""

from __future__ import annotations

import array
import inspect
import json
import shutil

import nbformat
import pytest
import torch

from attention_mechanisms.induction import SYMBOLS, AttentionOnlyTransformer, train_induction
from book import BookError, executor, paths, playground, playground_check, trained
from book.playground_check import MODULE


@pytest.fixture
def small(monkeypatch):
    torch.manual_seed(0)
    model = AttentionOnlyTransformer(64, 9, d_model=8, num_heads=2, num_layers=2).eval()
    with torch.no_grad():
        for parameter in model.parameters():  # weights large enough for sharp attention
            parameter.mul_(3.0)
    monkeypatch.setattr(trained, "model", lambda: model)
    return model


def test_the_export_holds_every_tensor_where_the_manifest_says(small):
    manifest, blob = trained.manifest(), trained.export()
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
    }
    assert manifest["symbols"] == SYMBOLS and set(manifest["default"]) <= set(SYMBOLS)


def test_the_javascript_computes_what_the_package_does_on_random_sequences(small):
    assert playground_check.verify_trained(count=30) == []


@pytest.mark.parametrize(
    ("change", "what"),
    [
        ("return s / Math.sqrt(headDim);", "return s / headDim;"),  # another scale
        ("if (j > i) return -Infinity;", "if (j > i + 1) return -Infinity;"),  # a future key
        (
            "x = x.map(function (row, i) { return row.map(function (v, d) { return v + ",
            "x = x.map(function (row, i) { return row.map(function (v, d) { return 0 + ",
        ),
    ],
)
def test_a_wrong_javascript_fails_and_names_the_sequence(
    small, tmp_path, monkeypatch, change, what
):
    module = tmp_path / "javascripts" / "induction.js"
    module.parent.mkdir()
    text = MODULE.with_name("induction.js").read_text(encoding="utf-8")
    assert change in text
    module.write_text(text.replace(change, what), encoding="utf-8")
    monkeypatch.setattr(playground_check, "MODULE", module.with_name("attention.js"))
    problems = playground_check.verify_trained(count=10)
    assert problems and all("the JavaScript differs from the package" in p for p in problems)
    assert "sequence [64," in problems[0]


def test_the_browser_tests_get_the_package_numbers_as_plain_json(small):
    (result,) = playground.package_results([{"stage": "trained", "sequence": "abcab"}])
    text = json.dumps(result)  # plain JSON: the browser tests run without torch
    assert json.loads(text) == result
    assert len(result["weights"]) == 2 and len(result["weights"][0]) == 2
    assert len(result["weights"][0][0]) == 6  # the start token and five characters
    assert all(abs(sum(row) - 1) < 1e-5 for row in result["weights"][1][1])
    assert [p["probability"] for p in result["predicted"]] == sorted(
        (p["probability"] for p in result["predicted"]), reverse=True
    )


def test_the_model_is_the_one_its_chapter_trained_and_exported(monkeypatch, tmp_path):
    chapter = tmp_path / "en" / trained.CHAPTER
    chapter.parent.mkdir(parents=True)
    chapter.write_text(
        "# %%\nimport torch\nfrom attention_mechanisms.induction import AttentionOnlyTransformer\n"
        '\n# %% export="model losses"\ntorch.manual_seed(3)\n'
        "model = AttentionOnlyTransformer(8, 5, d_model=4, num_heads=2, num_layers=1)\n"
        "losses = [2.5, 0.25]\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(paths, "DOCS", tmp_path)
    monkeypatch.setattr(paths, "CACHE", tmp_path / "cache")
    trained.forget()
    try:
        found, losses = trained.model(), trained.exported()["losses"]
        notebook, ran = executor.execute(chapter)
    finally:
        trained.forget()
    assert losses == [2.5, 0.25]
    torch.manual_seed(3)
    expected = AttentionOnlyTransformer(8, 5, d_model=4, num_heads=2, num_layers=1)
    assert found.state_dict().keys() == expected.state_dict().keys()
    assert all(torch.equal(found.state_dict()[k], v) for k, v in expected.state_dict().items())
    assert not ran  # cached: the model comes from that one execution
    cells = nbformat.read(notebook, as_version=4).cells
    assert [c.source.splitlines()[0] for c in cells] == ["import torch", "torch.manual_seed(3)"]
    shutil.rmtree(notebook.parent)


@pytest.mark.parametrize("mark", ["", "model, losses", "1st", "model-2"])
def test_an_export_that_names_no_variable_is_refused(tmp_path, mark):
    chapter = tmp_path / "bad.py"
    chapter.write_text(f'# %% export="{mark}"\nx = 1\n', encoding="utf-8")
    with pytest.raises(BookError, match='export= must name variables: export="model losses"'):
        executor.execute(chapter)


def test_the_chapters_model_downloads_in_at_most_60_kb(monkeypatch):
    # The chapter's sizes (train_induction's defaults), untrained: the file holds the same
    # tensors whatever their values.
    defaults = {
        name: p.default for name, p in inspect.signature(train_induction).parameters.items()
    }
    model = AttentionOnlyTransformer(
        defaults["vocab_size"],
        1 + 2 * defaults["half_lengths"][1],
        defaults["d_model"],
        defaults["num_heads"],
        defaults["num_layers"],
    )
    monkeypatch.setattr(trained, "model", lambda: model)
    assert len(trained.export()) == trained.manifest()["size"] <= 60_000
