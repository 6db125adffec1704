"""The induction model: its data, its forward pass, the tools that read its heads, training."""

from __future__ import annotations

import math

import pytest
import torch

from attention_mechanisms import MultiHeadAttention, induction
from attention_mechanisms.induction import (
    TRAINING_THREADS,
    AttentionOnlyTransformer,
    repeated_tokens,
    torch_threads,
    train_induction,
)
from attention_mechanisms.interpret import (
    attention_patterns,
    copy_accuracy,
    head_scores,
    zero_heads,
)
from book import trained
from book.build import TOOLING, Build


def small_model(seed: int = 0, num_heads: int = 2) -> AttentionOnlyTransformer:
    torch.manual_seed(seed)
    return AttentionOnlyTransformer(
        vocab_size=7, context_length=11, d_model=8, num_heads=num_heads, num_layers=2
    ).eval()


@pytest.mark.parametrize(("n", "half", "vocab"), [(1, 1, 1), (5, 4, 7), (3, 9, 300)])
def test_repeated_tokens_are_a_start_token_then_one_copy_twice(n, half, vocab):
    ids = repeated_tokens(n, half, vocab, generator=torch.Generator().manual_seed(n))
    assert ids.shape == (n, 1 + 2 * half) and ids.dtype == torch.int64
    assert (ids[:, 0] == vocab).all()
    assert torch.equal(ids[:, 1 : half + 1], ids[:, half + 1 :])
    assert int(ids[:, 1:].min()) >= 0 and int(ids[:, 1:].max()) < vocab


def test_repeated_tokens_follow_the_generator_and_draw_with_replacement():
    first = repeated_tokens(200, 12, 4, generator=torch.Generator().manual_seed(1))
    again = repeated_tokens(200, 12, 4, generator=torch.Generator().manual_seed(1))
    assert torch.equal(first, again)
    # 12 draws from 4 tokens: every row repeats a token inside its copy.
    assert all(len(set(row[1:13].tolist())) < 12 for row in first)
    torch.manual_seed(5)
    seeded = repeated_tokens(2, 3, 10)
    torch.manual_seed(5)
    assert torch.equal(seeded, repeated_tokens(2, 3, 10))


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        ((0, 3, 5), ValueError, "num_sequences must be a positive int; got 0"),
        ((2, 2.0, 5), TypeError, "half_length must be a positive int; got 2.0"),
        ((2, 3, -1), ValueError, "vocab_size must be a positive int; got -1"),
    ],
)
def test_repeated_tokens_name_the_bad_argument(args, error, message):
    with pytest.raises(error, match=message):
        repeated_tokens(*args)


def test_repeated_tokens_refuse_a_seed_for_a_generator():
    with pytest.raises(TypeError, match=r"generator must be a torch\.Generator or None; got"):
        repeated_tokens(2, 3, 5, generator=123)


def test_the_model_is_embeddings_residual_multihead_blocks_and_an_output_head():
    model = small_model()
    assert [type(block) for block in model.blocks] == [MultiHeadAttention] * 2
    assert all(block.dropout.p == 0.0 and block.num_heads == 2 for block in model.blocks)
    assert model.tok_emb.weight.shape == (8, 8)  # vocab_size + 1 rows: the start token
    assert model.pos_emb.weight.shape == (11, 8)
    assert model.out_head.weight.shape == (7, 8) and model.out_head.bias is None
    ids = repeated_tokens(3, 5, 7, generator=torch.Generator().manual_seed(0))
    x = model.tok_emb(ids) + model.pos_emb(torch.arange(11))
    for block in model.blocks:
        x = x + block(x)
    assert torch.equal(model(ids), model.out_head(x))
    assert model(ids).shape == (3, 11, 7)


def test_the_model_is_causal():
    model = small_model(1)
    ids = repeated_tokens(2, 5, 7, generator=torch.Generator().manual_seed(2))
    changed = ids.clone()
    changed[:, 6:] = (changed[:, 6:] + 1) % 7
    with torch.no_grad():
        assert torch.equal(model(ids)[:, :6], model(changed)[:, :6])
        assert not torch.equal(model(ids)[:, 6:], model(changed)[:, 6:])


@pytest.mark.parametrize(
    ("ids", "error", "message"),
    [
        (torch.zeros(2, 3), TypeError, "ids must have an integer dtype.*got torch.float32"),
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


def test_the_constructor_names_a_bad_size():
    with pytest.raises(ValueError, match="d_out must be divisible by num_heads; got d_out=8"):
        AttentionOnlyTransformer(7, 11, 8, 3, 2)
    with pytest.raises(ValueError, match="num_layers must be a positive int; got 0"):
        AttentionOnlyTransformer(7, 11, 8, 2, 0)


def test_attention_patterns_are_the_blocks_own_weights():
    model = small_model(2)
    ids = repeated_tokens(2, 5, 7, generator=torch.Generator().manual_seed(3))
    patterns = attention_patterns(model, ids)
    x = model.tok_emb(ids) + model.pos_emb(torch.arange(11))
    for block, weights in zip(model.blocks, patterns, strict=True):
        q = block.W_query(x).view(2, 11, 2, 4).transpose(1, 2)  # (b, h, T, d_head)
        k = block.W_key(x).view(2, 11, 2, 4).transpose(1, 2)
        scores = (q @ k.transpose(2, 3)).masked_fill(torch.ones(11, 11).triu(1).bool(), -math.inf)
        torch.testing.assert_close(weights, torch.softmax(scores / 2.0, dim=-1))
        x = x + block(x)
    assert not any(block.dropout._forward_hooks for block in model.blocks)  # hooks removed


def test_zeroing_a_head_is_zeroing_its_columns_of_out_proj():
    model = small_model(3)
    ids = repeated_tokens(4, 5, 7, generator=torch.Generator().manual_seed(4))
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
    ids = repeated_tokens(6, 5, 7, generator=torch.Generator().manual_seed(5))
    previous, prefix = head_scores(model, ids)
    assert previous.shape == prefix.shape == (2, 4)
    for layer, weights in enumerate(attention_patterns(model, ids)):
        for head in range(4):
            w = weights[:, head]
            prev = sum(w[:, p, p - 1] for p in range(1, 6)) / 5  # first copy: positions 1-5
            torch.testing.assert_close(previous[layer, head], prev.mean())
            match = torch.zeros(6)
            for b in range(6):
                for p in range(6, 10):  # the second copy but its last: keys after a copy of it
                    keys = [j for j in range(1, p + 1) if ids[b, j - 1] == ids[b, p]]
                    match[b] += sum(w[b, p, j] for j in keys) / 4
            torch.testing.assert_close(prefix[layer, head], match.mean())
    first, repeated = copy_accuracy(model, ids)
    right = model(ids[:, :-1]).argmax(-1) == ids[:, 1:]
    assert first == right[:, :5].float().mean().item()
    assert repeated == right[:, 6:].float().mean().item()


def test_copy_accuracy_wants_sequences_from_repeated_tokens():
    with pytest.raises(ValueError, match=r"\(batch, 1 \+ 2 \* half_length\).*got shape \(2, 6\)"):
        copy_accuracy(small_model(), torch.zeros(2, 6, dtype=torch.long))


def test_training_is_reproducible_from_its_seed():
    model, losses = train_induction(steps=15, seed=7, d_model=16)
    again, losses_again = train_induction(steps=15, seed=7, d_model=16)
    _, losses_other = train_induction(steps=15, seed=8, d_model=16)
    assert losses == losses_again and len(losses) == 15
    assert all(
        torch.equal(a, b) for a, b in zip(model.parameters(), again.parameters(), strict=True)
    )
    assert losses != losses_other
    assert not model.training and model.context_length == 25


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
    model, losses = train_induction(steps=4, seed=7, d_model=16)
    assert seen == [TRAINING_THREADS] * 4 and len(losses) == 4
    assert torch.get_num_threads() == caller_threads
    # The caller's threads serve the caller again: the model runs on them.
    with torch.no_grad():
        model(repeated_tokens(2, 4, 64, generator=torch.Generator().manual_seed(0)))
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
    [((5,), r"half_lengths must be \(low, high\); got \(5,\)"), ((6, 4), "low <= high; got")],
)
def test_training_names_bad_lengths(lengths, message):
    with pytest.raises(ValueError, match=message):
        train_induction(half_lengths=lengths, steps=1)


def test_the_chapters_model_learns_induction_on_sequences_it_never_saw():
    """The measures of the chapter, on data of another seed: the same properties hold.

    The model is the chapter's, ``train_induction()`` at its defaults, exported with its
    losses when the chapter executed (`book.trained`): it is trained once, not again here.
    """
    book = Build(TOOLING)
    model, losses = trained.model(book), trained.exported(book)["losses"]
    assert sum(losses[-200:]) / 200 < sum(losses[:200]) / 200 - 1.0
    generator = torch.Generator().manual_seed(31337)
    data = [repeated_tokens(200, half, 64, generator=generator) for half in range(4, 13)]
    accuracy = [copy_accuracy(model, ids) for ids in data]
    first = sum(a for a, _ in accuracy) / len(data)
    repeated = sum(r for _, r in accuracy) / len(data)
    assert repeated >= 0.97 and first <= 2 / 64
    scores = [head_scores(model, ids) for ids in data]
    previous = sum(p for p, _ in scores) / len(data)
    prefix = sum(m for _, m in scores) / len(data)
    assert previous[0].max() >= 0.9 and prefix[1:].max() >= 0.9
    induction = [(1, h) for h in range(2) if prefix[1, h] >= 0.5]
    previous_token = [(0, h) for h in range(2) if previous[0, h] >= 0.5]

    def repeated_accuracy(heads):
        with zero_heads(model, heads):
            return sum(copy_accuracy(model, ids)[1] for ids in data) / len(data)

    assert repeated_accuracy(induction) < 0.5
    assert repeated_accuracy(previous_token) < 0.5
    for head in {(0, 0), (0, 1), (1, 0), (1, 1)} - set(induction) - set(previous_token):
        assert repeated_accuracy([head]) >= repeated - 0.05
