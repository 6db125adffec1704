"""tiled_attention: the online softmax gives exactly the naive result."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_mechanisms import scaled_dot_product_attention, tiled_attention


@settings(deadline=None, max_examples=40)
@given(
    num_queries=st.integers(1, 40),
    extra_keys=st.integers(0, 20),
    block_size=st.integers(1, 17),
    causal=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_equals_naive_attention(num_queries, extra_keys, block_size, causal, seed):
    gen = torch.Generator().manual_seed(seed)
    num_keys = num_queries + extra_keys
    q = torch.randn(2, 3, num_queries, 8, generator=gen, dtype=torch.float64) * 3
    k = torch.randn(2, 3, num_keys, 8, generator=gen, dtype=torch.float64) * 3
    v = torch.randn(2, 3, num_keys, 5, generator=gen, dtype=torch.float64)
    expected, _ = scaled_dot_product_attention(q, k, v, causal=causal)
    actual = tiled_attention(q, k, v, causal=causal, block_size=block_size)
    torch.testing.assert_close(actual, expected, rtol=0, atol=1e-12)


def test_never_holds_more_than_one_block_of_scores(monkeypatch):
    # Every matrix product inside must be at most block_size x block_size per head.
    sizes = []
    original = torch.Tensor.__matmul__

    def spy(a, b):
        result = original(a, b)
        sizes.append(tuple(result.shape[-2:]))
        return result

    monkeypatch.setattr(torch.Tensor, "__matmul__", spy)
    q = k = v = torch.randn(1, 2, 100, 4)
    tiled_attention(q, k, v, causal=True, block_size=16)
    assert sizes and max(max(size) for size in sizes) <= 16


def test_causal_skips_future_blocks(monkeypatch):
    calls = []
    original = torch.Tensor.__matmul__
    monkeypatch.setattr(torch.Tensor, "__matmul__", lambda a, b: calls.append(1) or original(a, b))
    q = k = v = torch.randn(1, 1, 64, 4)
    tiled_attention(q, k, v, causal=False, block_size=16)
    full = len(calls)
    calls.clear()
    tiled_attention(q, k, v, causal=True, block_size=16)
    # 4 x 4 blocks without the mask; 1 + 2 + 3 + 4 of them with it (two products each).
    assert (full, len(calls)) == (2 * 16, 2 * 10)


def test_bad_arguments_are_named():
    q = torch.randn(4, 3)
    with pytest.raises(ValueError, match=r"query and key must have the same last dimension d_k"):
        tiled_attention(q, torch.randn(5, 2), torch.randn(5, 2))
    with pytest.raises(ValueError, match=r"^block_size must be a positive int; got 0$"):
        tiled_attention(q, q, q, block_size=0)
    with pytest.raises(ValueError, match=r"same leading dimensions"):
        tiled_attention(torch.randn(2, 4, 3), torch.randn(3, 4, 3), torch.randn(3, 4, 3))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_rows_that_see_no_key_are_zero_in_half_precision(dtype):
    # Causal with more queries than keys: the first queries come before every key.
    gen = torch.Generator().manual_seed(0)
    q = torch.randn(1, 2, 7, 4, generator=gen).to(dtype)
    k, v = torch.randn(2, 1, 2, 4, 4, generator=gen).to(dtype).unbind(0)
    functional, _ = scaled_dot_product_attention(q, k, v, causal=True)
    tiled = tiled_attention(q, k, v, causal=True, block_size=2)
    assert torch.equal(tiled[..., :3, :], torch.zeros_like(tiled[..., :3, :]))
    # Both forms round differently in half precision; each is within a few units of the
    # dtype's resolution of the same attention computed in float32.
    exact, _ = scaled_dot_product_attention(q.float(), k.float(), v.float(), causal=True)
    eps = torch.finfo(dtype).eps
    for result in (tiled, functional):
        torch.testing.assert_close(result.float(), exact, rtol=4 * eps, atol=4 * eps)
