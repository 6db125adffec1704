"""scaled_dot_product_attention and causal_mask: the general form and its conventions."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F  # noqa: N812 (PyTorch's own convention)

from attention_mechanisms import causal_mask, scaled_dot_product_attention


def rand(*shape: int, seed: int = 0, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


@pytest.mark.parametrize(
    ("q_shape", "kv_len"),
    [((5, 4), 5), ((2, 3, 4), 7), ((2, 3, 6, 4), 6), ((1, 2, 1, 4), 9)],
)
def test_equals_torch_without_mask(q_shape, kv_len):
    q = rand(*q_shape, seed=1)
    k = rand(*q_shape[:-2], kv_len, q_shape[-1], seed=2)
    v = rand(*q_shape[:-2], kv_len, 3, seed=3)
    context, weights = scaled_dot_product_attention(q, k, v)
    torch.testing.assert_close(context, F.scaled_dot_product_attention(q, k, v))
    assert weights.shape == (*q_shape[:-1], kv_len)


def test_equals_torch_with_a_keep_mask_converted():
    q, k, v = rand(2, 3, 5, 4, seed=1), rand(2, 3, 8, 4, seed=2), rand(2, 3, 8, 6, seed=3)
    keep = rand(5, 8, seed=4) > -0.5  # PyTorch's convention: True = may attend
    keep[:, 0] = True  # keep every row non-empty; empty rows are tested below
    context, _ = scaled_dot_product_attention(q, k, v, hide_mask=~keep)
    torch.testing.assert_close(context, F.scaled_dot_product_attention(q, k, v, attn_mask=keep))


def test_equals_torch_causal_and_custom_scale():
    q, k, v = rand(2, 6, 4, seed=1), rand(2, 6, 4, seed=2), rand(2, 6, 4, seed=3)
    context, _ = scaled_dot_product_attention(q, k, v, causal=True, scale=0.3)
    expected = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.3)
    torch.testing.assert_close(context, expected)


def test_causal_mask_is_the_books_buffer_when_square():
    book = torch.triu(torch.ones(6, 6), diagonal=1).bool()
    assert torch.equal(causal_mask(6), book)
    assert torch.equal(~causal_mask(6), torch.tril(torch.ones(6, 6)).bool())


def test_causal_mask_aligns_queries_with_the_last_keys():
    # Three new queries after four cached keys: query i sits at absolute position 4 + i.
    expected = torch.tensor(
        [
            [0, 0, 0, 0, 0, 1, 1],
            [0, 0, 0, 0, 0, 0, 1],
            [0, 0, 0, 0, 0, 0, 0],
        ],
        dtype=torch.bool,
    )
    assert torch.equal(causal_mask(3, 7), expected)
    # Same answer as running all seven positions and keeping the last three rows.
    q, k, v = rand(7, 4, seed=1), rand(7, 4, seed=2), rand(7, 4, seed=3)
    full, _ = scaled_dot_product_attention(q, k, v, causal=True)
    last, _ = scaled_dot_product_attention(q[-3:], k, v, causal=True)
    torch.testing.assert_close(last, full[-3:])


def test_cross_attention_with_different_lengths():
    # The zh transcript's general (query, key, value) function, with shape[-1] fixed.
    q, k, v = rand(2, 3, 8, seed=1), rand(2, 10, 8, seed=2), rand(2, 10, 5, seed=3)
    context, weights = scaled_dot_product_attention(q, k, v)
    assert context.shape == (2, 3, 5)
    assert weights.shape == (2, 3, 10)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 3, dtype=torch.float64))


def test_a_row_with_every_key_hidden_gives_zeros_not_nan():
    q, k, v = rand(4, 3, seed=1), rand(5, 3, seed=2), rand(5, 2, seed=3)
    q.requires_grad_(True)
    hide = torch.zeros(4, 5, dtype=torch.bool)
    hide[2] = True  # query 2 may see nothing
    context, weights = scaled_dot_product_attention(q, k, v, hide_mask=hide)
    assert torch.equal(weights[2], torch.zeros(5, dtype=torch.float64))
    assert torch.equal(context[2], torch.zeros(2, dtype=torch.float64))
    torch.testing.assert_close(weights[[0, 1, 3]].sum(-1), torch.ones(3, dtype=torch.float64))
    context.sum().backward()
    assert torch.isfinite(q.grad).all()
    assert torch.equal(q.grad[2], torch.zeros(3, dtype=torch.float64))


def test_hidden_keys_get_zero_weight():
    q, k, v = rand(4, 3, seed=1), rand(6, 3, seed=2), rand(6, 2, seed=3)
    hide = torch.zeros(1, 6, dtype=torch.bool)
    hide[0, [1, 4]] = True  # broadcast over every query
    _, weights = scaled_dot_product_attention(q, k, v, hide_mask=hide)
    assert torch.equal(weights[:, [1, 4]], torch.zeros(4, 2, dtype=torch.float64))


def test_gradcheck_float64():
    q = rand(2, 4, 3, seed=1).requires_grad_(True)
    k = rand(2, 5, 3, seed=2).requires_grad_(True)
    v = rand(2, 5, 2, seed=3).requires_grad_(True)
    hide = causal_mask(4, 5)

    def attend(q, k, v):
        return scaled_dot_product_attention(q, k, v, hide_mask=hide)[0]

    assert torch.autograd.gradcheck(attend, (q, k, v))


def test_bad_arguments_are_named():
    q, k, v = rand(4, 3), rand(5, 3), rand(5, 2)
    with pytest.raises(ValueError, match=r"query and key must have the same last dimension"):
        scaled_dot_product_attention(q, rand(5, 4), v)
    with pytest.raises(ValueError, match=r"key and value must have the same number of positions"):
        scaled_dot_product_attention(q, k, rand(6, 2))
    with pytest.raises(ValueError, match=r"key must have at least 2 dimensions.*got shape \(3,\)"):
        scaled_dot_product_attention(q, rand(3), v)
    with pytest.raises(TypeError, match=r"value must have a floating-point dtype"):
        scaled_dot_product_attention(q, k, torch.ones(5, 2, dtype=torch.long))
    with pytest.raises(
        TypeError, match=r"query, key, value must share one dtype.*key=torch.float32"
    ):
        scaled_dot_product_attention(q, k.float(), v)
    with pytest.raises(ValueError, match=r"dropout_p must be a float in \[0, 1\); got 1.0"):
        scaled_dot_product_attention(q, k, v, dropout_p=1.0)
    with pytest.raises(TypeError, match=r"hide_mask must have dtype torch.bool.*got torch.float32"):
        scaled_dot_product_attention(q, k, v, hide_mask=torch.ones(4, 5))
    with pytest.raises(
        ValueError, match=r"hide_mask must have shape \(\.\.\., 4, 5\).*got shape \(5, 4\)"
    ):
        scaled_dot_product_attention(q, k, v, hide_mask=torch.ones(5, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"hide_mask must have shape.*got shape \(5,\)"):
        scaled_dot_product_attention(
            q, k, v, hide_mask=torch.ones(5, dtype=torch.bool), causal=True
        )
    with pytest.raises(ValueError, match=r"num_queries must be a positive int; got 0"):
        causal_mask(0)
