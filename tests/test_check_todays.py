"""attention-check on a learner's own version of today's attention (`check.todays`): each
class and rotary function of tests/fixtures/check/todays/, written as the book's bonus code
or another way, passes; each mistake fails the check that names it, and only that one.
Checked in this process (`checking.check_source`); the folder also runs through the
installed command with the other fixtures (test_check.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from checking import check_source, failures, message

from attention_mechanisms.check.messages import link

TODAYS = Path(__file__).parent / "fixtures" / "check" / "todays"

# fixture -> the component and its role, when it is correct
CORRECT = {
    "gqa_book.py": ("GroupedQueryAttention", "GroupedQueryAttention"),
    "gqa_own_names_sdpa.py": ("GQA", "GroupedQueryAttention"),
    "swa_book.py": ("MultiHeadAttentionWithSWA", "MultiHeadAttentionWithSWA"),
    "swa_band_tril_triu.py": ("SlidingWindowAttention", "MultiHeadAttentionWithSWA"),
    "mla_book.py": ("MultiHeadLatentAttention", "MultiHeadLatentAttention"),
    "mla_own_names.py": ("MLA", "MultiHeadLatentAttention"),
    "gated_deltanet_book.py": ("GatedDeltaNet", "GatedDeltaNet"),
}
# fixture -> (component, the checks it fails, the one whose message names the cause, what the
# message says, the section it links to)
MISTAKES = {
    "gqa_tiled_repeat.py": (
        "GroupedQueryAttention", {"matches_book", "kv_groups"}, "kv_groups",
        "repeated as [K1, K2, K1, K2]", "GroupedQueryAttention",
    ),
    "gqa_tiled_expand.py": (
        "GroupedQueryAttention", {"matches_book", "kv_groups"}, "kv_groups",
        "use repeat_interleave(group_size, dim=1)", "GroupedQueryAttention",
    ),
    "gqa_full_kv_heads.py": (
        "GroupedQueryAttention", {"matches_book", "kv_groups"}, "kv_groups",
        "W_key.weight is (8, 4), where 2 key-value heads of head_dim 2 need (4, 4)",
        "GroupedQueryAttention",
    ),
    "swa_window_one_too_wide.py": (
        "MultiHeadAttentionWithSWA", {"matches_book", "window"}, "window",
        "changing token 1 moves the output of token 4", "MultiHeadAttentionWithSWA",
    ),
    "swa_window_one_too_narrow.py": (
        "SlidingWindowAttention", {"matches_book", "window"}, "window",
        "leaves the output of token 3 as it was", "MultiHeadAttentionWithSWA",
    ),
    "mla_values_from_key_up.py": (
        "MultiHeadLatentAttention", {"matches_book"}, "matches_book",
        "changing W_UV.weight leaves the output as it was", "MultiHeadLatentAttention",
    ),
    "mla_values_from_k_up.py": (
        "MLA", {"matches_book"}, "matches_book", "changing v_up.weight leaves the output as it was",
        "MultiHeadLatentAttention",
    ),
    "gated_deltanet_decay_after_write.py": (
        "GatedDeltaNet", {"matches_book"}, "matches_book", "differs from the book", "GatedDeltaNet",
    ),
    "gated_deltanet_keys_not_normalised.py": (
        "GatedDeltaNet", {"matches_book"}, "matches_book", "differs from the book",
        "GatedDeltaNet",
    ),
    "rope_interleaved_pairs.py": (
        "apply_rope", {"rotation"}, "rotation", "rotates neighbouring features (2k, 2k + 1)",
        "rope_layout",
    ),
    "rope_interleaved_complex.py": (
        "apply_rotary_emb", {"rotation"}, "rotation", "as Meta's reference Llama code does",
        "rope_layout",
    ),
    "rope_params_all_features.py": (
        "compute_rope_params", {"matches_book"}, "matches_book", "differs from the book",
        "compute_rope_params",
    ),
}  # fmt: skip


def report(name: str) -> dict:
    return check_source((TODAYS / name).read_text(encoding="utf-8"))


def test_each_check_of_todays_attention_has_a_mistake_that_breaks_it():
    broken = {check for *_, check, _, _ in MISTAKES.values()}
    assert {"window", "kv_groups", "rotation", "matches_book"} <= broken


def test_every_fixture_has_a_case():
    named = set(CORRECT) | set(MISTAKES) | {"rope_book.py"}
    assert named == {p.name for p in TODAYS.iterdir()}


@pytest.mark.parametrize("name", CORRECT)
def test_a_correct_class_passes_every_check_that_applies(name):
    component, role = CORRECT[name]
    (found,) = report(name)["components"]
    assert (found["name"], found["role"]) == (component, role)
    statuses = {k["check"]: k["status"] for k in found["checks"]}
    assert "fail" not in statuses.values(), found
    assert statuses["matches_book"] == statuses["causal"] == "pass"
    extra = {"GroupedQueryAttention": "kv_groups", "MultiHeadAttentionWithSWA": "window"}
    if role in extra:
        assert statuses[extra[role]] == "pass"


def test_the_books_rotary_functions_pass():
    found = report("rope_book.py")["components"]
    assert [(c["name"], c["role"]) for c in found] == [
        ("compute_rope_params", "compute_rope_params"),
        ("apply_rope", "apply_rope"),
    ]
    statuses = {(c["name"], k["check"]): k["status"] for c in found for k in c["checks"]}
    assert "fail" not in statuses.values()
    assert statuses["apply_rope", "rotation"] == statuses["apply_rope", "matches_book"] == "pass"


@pytest.mark.parametrize("name", MISTAKES)
def test_a_mistake_fails_and_names_its_cause(name):
    component, checks, check, fragment, topic = MISTAKES[name]
    found = report(name)
    assert {c: f for c, f in failures(found).items() if f} == {component: checks}
    text = message(found, component, check)
    assert fragment in text, text
    assert text.endswith(f"(see {link(topic, 'en')})")


def test_weights_are_taken_by_name_or_read_by_their_shapes():
    by_name = message(report("gqa_book.py"), "GroupedQueryAttention", "matches_book")
    by_shape = message(report("gqa_own_names_sdpa.py"), "GQA", "matches_book")
    assert "holding your weights (taken by name)" in by_name
    assert "holding your weights (read by their shapes)" in by_shape


def test_rotary_functions_are_found_by_the_word_not_by_letters():
    source = (
        "# %%\nimport torch\n\n\ndef scale_property(a, b, c):\n    return a\n\n\n"
        "def apply_rotary_emb(x, cos, sin):\n    return x\n"
    )
    assert [(c["name"], c["role"]) for c in check_source(source)["components"]] == [
        ("apply_rotary_emb", "apply_rope")
    ]
