"""The playground's trained stage: the export of the model, and its JavaScript against it.

A small untrained model stands in for the chapter's (which takes a training run): the
JavaScript must compute what the package computes for any weights.
"""

from __future__ import annotations

import array
import json
import shutil

import pytest
import torch

from attention_mechanisms.induction import SYMBOLS, AttentionOnlyTransformer
from book import playground, playground_check, trained
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


def test_the_model_is_trained_once_per_package_and_kept(monkeypatch, tmp_path):
    calls = []

    def train(**_):
        calls.append(1)
        torch.manual_seed(1)
        return AttentionOnlyTransformer(64, 5, 8, 2, 2).eval(), [0.0]

    monkeypatch.setattr(trained, "CACHE", tmp_path)
    monkeypatch.setattr(trained, "train_induction", train)
    trained.model.cache_clear()
    try:
        first = trained.model()
        trained.model.cache_clear()
        again = trained.model()
    finally:
        trained.model.cache_clear()
        shutil.rmtree(tmp_path / "trained", ignore_errors=True)
    assert calls == [1]
    assert all(
        torch.equal(a, b) for a, b in zip(first.parameters(), again.parameters(), strict=True)
    )
