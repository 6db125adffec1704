"""The induction model: its data, its forward pass, the tools that read its heads, training."""

from __future__ import annotations

import math

import pytest
import torch

from attention_mechanisms import MultiHeadAttention, induction
from attention_mechanisms.induction import (
    TRAINING_THREADS,
    AttentionOnlyTransformer,
    RotaryMultiHeadAttention,
    torch_threads,
    train_induction,
)
from attention_mechanisms.interpret import (
    attention_patterns,
    copy_accuracy,
    head_scores,
    zero_heads,
)
from attention_mechanisms.repeats import repeated_tokens
from attention_mechanisms.rope import apply_rope
from book import trained
from book.build import TOOLING, Build


def small_model(seed: int = 0, num_heads: int = 2) -> AttentionOnlyTransformer:
    torch.manual_seed(seed)
    return AttentionOnlyTransformer(
        vocab_size=7, context_length=11, d_model=8, num_heads=num_heads, num_layers=2
    ).eval()


def data(n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Sequences of the small model's size: 10 tokens of 7 after the start token."""
    generator = torch.Generator().manual_seed(seed)
    return repeated_tokens(n, 10, 7, run_lengths=(2, 4), distinct=False, generator=generator)


def test_the_model_is_embeddings_residual_rotary_blocks_and_an_output_head():
    model = small_model()
    assert [type(block) for block in model.blocks] == [RotaryMultiHeadAttention] * 2
    assert all(block.dropout.p == 0.0 and block.num_heads == 2 for block in model.blocks)
    assert model.tok_emb.weight.shape == (8, 8)  # vocab_size + 1 rows: the start token
    assert not hasattr(model, "pos_emb")  # position enters only as the rotation
    assert model.out_head.weight.shape == (7, 8) and model.out_head.bias is None
    ids, _ = data(3, 0)
    x = model.tok_emb(ids)
    for block in model.blocks:
        x = x + block(x)
    assert torch.equal(model(ids), model.out_head(x))
    assert model(ids).shape == (3, 11, 7)


def test_the_model_is_causal():
    model = small_model(1)
    ids, _ = data(2, 2)
    changed = ids.clone()
    changed[:, 6:] = (changed[:, 6:] + 1) % 7
    with torch.no_grad():
        assert torch.equal(model(ids)[:, :6], model(changed)[:, :6])
        assert not torch.equal(model(ids)[:, 6:], model(changed)[:, 6:])


@pytest.mark.parametrize(
    ("ids", "error", "message"),
    [
        (torch.zeros(2, 3), TypeError, "ids must be torch.int64 or torch.int32; got torch.float32"),
        (torch.zeros(2, 3, dtype=torch.uint8), TypeError, "int32; got torch.uint8"),
        (torch.zeros(4, dtype=torch.long), ValueError, r"2-D \(batch, num_tokens\).*shape \(4,\)"),
        (
            torch.zeros(1, 12, dtype=torch.long),
            ValueError,
            "12 tokens, more than context_length=11",
        ),
        (
            torch.tensor([[7, 8]]),
            ValueError,
            r"\[0, 7\] \(7 is the start token\); got values from 7 to 8",
        ),
        (torch.tensor([[-1, 2]]), ValueError, "got values from -1 to 2"),
        ([[1, 2]], TypeError, "ids must be a torch.Tensor of token ids; got list"),
    ],
)
def test_bad_ids_get_a_clear_error(ids, error, message):
    with pytest.raises(error, match=message):
        small_model()(ids)


def test_the_block_is_chapter_3s_attention_with_queries_and_keys_turned():
    """With every turn by angle 0, the block computes MultiHeadAttention's bits."""
    torch.manual_seed(5)
    block = RotaryMultiHeadAttention(8, 8, 12, 0.0, 2).eval()
    plain = MultiHeadAttention(8, 8, 12, 0.0, 2).eval()
    plain.load_state_dict(block.state_dict())
    x = torch.randn(3, 12, 8)
    assert not torch.allclose(block(x), plain(x))
    block.cos, block.sin = torch.ones_like(block.cos), torch.zeros_like(block.sin)
    assert torch.equal(block(x), plain(x))
    assert torch.equal(block(x[0]), plain(x[0]))  # one sequence, as chapter 3's class takes


def test_the_constructor_names_a_bad_size():
    with pytest.raises(ValueError, match="num_heads must divide d_model into an even head_dim"):
        AttentionOnlyTransformer(7, 11, 8, 3, 2)
    with pytest.raises(ValueError, match="got d_model=8, num_heads=8"):
        AttentionOnlyTransformer(7, 11, 8, 8, 2)
    with pytest.raises(ValueError, match="num_layers must be a positive int; got 0"):
        AttentionOnlyTransformer(7, 11, 8, 2, 0)


def test_attention_patterns_are_the_blocks_own_weights():
    model = small_model(2)
    ids, _ = data(2, 3)
    patterns = attention_patterns(model, ids)
    x = model.tok_emb(ids)
    for block, weights in zip(model.blocks, patterns, strict=True):
        q = block.W_query(x).view(2, 11, 2, 4).transpose(1, 2)  # (b, h, T, d_head)
        k = block.W_key(x).view(2, 11, 2, 4).transpose(1, 2)
        q, k = apply_rope(q, block.cos, block.sin), apply_rope(k, block.cos, block.sin)
        scores = (q @ k.transpose(2, 3)).masked_fill(torch.ones(11, 11).triu(1).bool(), -math.inf)
        torch.testing.assert_close(weights, torch.softmax(scores / 2.0, dim=-1))
        x = x + block(x)
    assert not any(block.dropout._forward_hooks for block in model.blocks)  # hooks removed


def test_zeroing_a_head_is_zeroing_its_columns_of_out_proj():
    model = small_model(3)
    ids, _ = data(4, 4)
    before = model(ids)
    with zero_heads(model, [(1, 0), (0, 1)]):
        silenced = model(ids)
    edited = small_model(3)
    with torch.no_grad():
        edited.blocks[1].out_proj.weight[:, 0:4] = 0.0
        edited.blocks[0].out_proj.weight[:, 4:8] = 0.0
    torch.testing.assert_close(silenced, edited(ids), rtol=0, atol=1e-6)
    assert not torch.equal(silenced, before)
    assert torch.equal(model(ids), before)  # the hooks are gone after the block


def test_zero_heads_names_a_head_that_does_not_exist():
    model = small_model()
    with pytest.raises(ValueError, match=r"layer must be in \[0, 2\); got 2"):
        zero_heads(model, [(0, 1), (2, 0)]).__enter__()
    assert not model.blocks[0].out_proj._forward_pre_hooks  # nothing left behind
    with (
        pytest.raises(ValueError, match=r"head must be in \[0, 2\); got 2 \(layer 1\)"),
        zero_heads(model, [(1, 2)]),
    ):
        pass


def test_scores_and_accuracies_are_the_means_they_describe():
    model = small_model(4, num_heads=4)
    ids, repeated = data(6, 5)
    previous, prefix = head_scores(model, ids, repeated)
    assert previous.shape == prefix.shape == (2, 4)
    queries = [(b, t) for b in range(6) for t in range(10) if repeated[b, t + 1]]
    for layer, weights in enumerate(attention_patterns(model, ids)):
        for head in range(4):
            w = weights[:, head]
            prev = sum(w[:, t, t - 1] for t in range(1, 11)) / 10  # every position but 0
            torch.testing.assert_close(previous[layer, head], prev.mean())
            match = [
                sum(w[b, t, j + 1] for j in range(t) if ids[b, j] == ids[b, t]) for b, t in queries
            ]
            torch.testing.assert_close(prefix[layer, head], torch.stack(match).mean())
    others, marked = copy_accuracy(model, ids, repeated)
    right = model(ids[:, :-1]).argmax(-1) == ids[:, 1:]
    assert marked == right[repeated[:, 1:]].float().mean().item()
    assert others == right[~repeated[:, 1:]].float().mean().item()


def test_nothing_marked_is_refused_not_a_nan():
    ids, repeated = data(2, 1)
    with pytest.raises(ValueError, match="repeated marks no token after the first"):
        copy_accuracy(small_model(), ids, torch.zeros_like(repeated))


def test_copy_accuracy_wants_sequences_from_repeated_tokens():
    ids = torch.zeros(2, 6, dtype=torch.long)
    with pytest.raises(
        ValueError, match=r"one shape, from repeated_tokens; got \(2, 6\) and \(2, 5\)"
    ):
        copy_accuracy(small_model(), ids, torch.zeros(2, 5, dtype=torch.bool))
    with pytest.raises(TypeError, match="repeated must be a bool tensor"):
        head_scores(small_model(), ids, torch.zeros(2, 6))


def test_training_is_reproducible_from_its_seed_and_records_the_heads():
    model, losses, history = train_induction(steps=15, seed=7, d_model=16, record_every=5)
    again, losses_again, history_again = train_induction(
        steps=15, seed=7, d_model=16, record_every=5
    )
    _, losses_other, _ = train_induction(steps=15, seed=8, d_model=16)
    assert losses == losses_again and len(losses) == 15
    assert all(
        torch.equal(a, b) for a, b in zip(model.parameters(), again.parameters(), strict=True)
    )
    assert losses != losses_other
    assert not model.training and model.context_length == 49
    assert history == history_again and history.steps == [0, 5, 10, 15]
    assert all(0 <= v <= 1 for v in history.previous_token + history.induction)
    one_layer = train_induction(steps=2, num_layers=1, d_model=16, record_every=1).history
    assert all(math.isnan(v) for v in one_layer.induction) and len(one_layer.steps) == 3


CALLERS_THREADS = 3  # what the caller set: not TRAINING_THREADS, so a switch shows


@pytest.fixture
def caller_threads():
    """The caller runs torch on `CALLERS_THREADS` threads; after the test, on those it had."""
    before = torch.get_num_threads()
    torch.set_num_threads(CALLERS_THREADS)
    assert CALLERS_THREADS != TRAINING_THREADS
    try:
        yield CALLERS_THREADS
    finally:
        torch.set_num_threads(before)


def watched_steps(monkeypatch, fail_at: int | None = None) -> list[int]:
    """The number of torch threads at each training step, seen from inside it: the loop
    draws each step's data with `repeated_tokens`. Step ``fail_at`` (1-based) raises."""
    seen: list[int] = []

    def drawing(*args, **kwargs):
        seen.append(torch.get_num_threads())
        if len(seen) == fail_at:
            raise RuntimeError(f"stopped in step {fail_at}")
        return repeated_tokens(*args, **kwargs)

    monkeypatch.setattr(induction, "repeated_tokens", drawing)
    return seen


def test_training_runs_on_one_thread_and_gives_the_callers_back(caller_threads, monkeypatch):
    # One thread: a step is a few hundred small kernels, which a second thread only slows
    # down on a busy machine (see TRAINING_THREADS).
    assert TRAINING_THREADS == 1
    seen = watched_steps(monkeypatch)
    model, losses, _ = train_induction(steps=4, seed=7, d_model=16)
    assert seen == [TRAINING_THREADS] * 5 and len(losses) == 4  # the History's data, 4 steps
    assert torch.get_num_threads() == caller_threads
    # The caller's threads serve the caller again: the model runs on them.
    with torch.no_grad():
        model(repeated_tokens(2, 8, 64, generator=torch.Generator().manual_seed(0)).ids)
    assert torch.get_num_threads() == caller_threads


def test_the_callers_threads_come_back_when_training_raises(caller_threads, monkeypatch):
    seen = watched_steps(monkeypatch, fail_at=3)
    with pytest.raises(RuntimeError, match="stopped in step 3"):
        train_induction(steps=10, seed=7, d_model=16)
    assert seen == [TRAINING_THREADS] * 3
    assert torch.get_num_threads() == caller_threads


def test_torch_threads_sets_the_count_for_its_block_only(caller_threads):
    with torch_threads(2):
        assert torch.get_num_threads() == 2
        with pytest.raises(KeyError), torch_threads(1):
            assert torch.get_num_threads() == 1
            raise KeyError("inside")
        assert torch.get_num_threads() == 2  # restored after an error in the block
    assert torch.get_num_threads() == caller_threads


@pytest.mark.parametrize(
    ("count", "error", "message"),
    [
        (0, ValueError, "count must be a positive int; got 0"),
        (-1, ValueError, "count must be a positive int; got -1"),
        (1.0, TypeError, r"count must be a positive int; got 1\.0 \(float\)"),
        (True, TypeError, r"count must be a positive int; got True \(bool\)"),
        ("2", TypeError, r"count must be a positive int; got '2' \(str\)"),
    ],
)
def test_torch_threads_refuses_a_bad_count(caller_threads, count, error, message):
    with pytest.raises(error, match=message), torch_threads(count):
        pytest.fail("the block ran with a bad count")
    assert torch.get_num_threads() == caller_threads  # nothing was changed


@pytest.mark.parametrize(
    ("lengths", "message"),
    [
        ((5,), r"lengths must be \(low, high\); got \(5,\)"),
        ((9, 8), "low <= high; got"),
        ((5, 8), r"lengths must be two ints of at least 6; got \(5, 8\)"),
    ],
)
def test_training_names_bad_lengths(lengths, message):
    with pytest.raises(ValueError, match=message):
        train_induction(lengths=lengths, steps=1)


HELD_OUT = {  # kinds the chapter does not draw; the first two, not the training either
    "five copies of 2 to 5": {"copies": (5, 5), "run_lengths": (2, 5), "gaps": (1, 3)},
    "three copies, gaps of 10 to 14": {"copies": (3, 3), "run_lengths": (2, 4), "gaps": (10, 14)},
    "a run of 3 after 30 or more": {"copies": (2, 2), "run_lengths": (3, 3), "prefix": (30, 38)},
    "long runs, no gap": {"copies": (2, 2), "run_lengths": (18, 24), "gaps": (0, 0)},
}


def test_the_chapters_model_continues_repeats_of_kinds_it_never_saw():
    """The measures of the chapter, on other kinds and data of another seed.

    The model is the chapter's, ``train_induction()`` at its defaults, exported with its
    losses when the chapter executed (`book.trained`): it is trained once, not again here.
    """
    book = Build(TOOLING)
    model, losses = trained.model(book), trained.exported(book)["losses"]
    assert sum(losses[-100:]) / 100 < sum(losses[:100]) / 100 - 0.5
    generator = torch.Generator().manual_seed(31337)
    for name, kind in HELD_OUT.items():
        others, marked = copy_accuracy(model, *repeated_tokens(500, generator=generator, **kind))
        assert marked >= 0.95 and others <= 2 / 64, name
    test = repeated_tokens(500, generator=generator)
    previous, prefix = head_scores(model, *test)
    assert previous[0].max() >= 0.8 and prefix[1:].max() >= 0.9
    induction = [(1, h) for h in range(2) if prefix[1, h] >= 0.5]
    previous_token = [(0, h) for h in range(2) if previous[0, h] >= 0.5]
    marked = copy_accuracy(model, *test)[1]

    def without(heads):
        with zero_heads(model, heads):
            return copy_accuracy(model, *test)[1]

    assert without(induction) < 0.5 and without(previous_token) < 0.5
    for head in {(0, 0), (0, 1), (1, 0), (1, 1)} - set(induction) - set(previous_token):
        assert without([head]) >= marked - 0.05
