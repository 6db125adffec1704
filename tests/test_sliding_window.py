"""Sliding-window attention: SDPA with a banded mask, the window's edges, the trimmed cache."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F  # noqa: N812

from attention_mechanisms import MultiHeadAttention, MultiHeadAttentionWithSWA, position_hide_mask


def banded_keep_mask(num_tokens: int, window: int) -> torch.Tensor:
    """True where query i may see key j: j <= i and i - j < window, written with tril/triu."""
    ones = torch.ones(num_tokens, num_tokens, dtype=torch.bool)
    return ones.tril() & ones.triu(diagonal=-(window - 1))


def heads(swa: MultiHeadAttentionWithSWA, x: torch.Tensor):
    b, t, _ = x.shape
    split = lambda y: y.view(b, t, swa.num_heads, swa.head_dim).transpose(1, 2)  # noqa: E731
    return split(swa.W_query(x)), split(swa.W_key(x)), split(swa.W_value(x))


@pytest.mark.parametrize("window", [1, 2, 3, 5, 9])
def test_equals_sdpa_with_the_banded_causal_mask(window):
    torch.manual_seed(window)
    swa = MultiHeadAttentionWithSWA(6, 8, 0.0, num_heads=2, sliding_window_size=window).double()
    x = torch.randn(2, 9, 6, dtype=torch.float64)
    q, k, v = heads(swa, x)
    context = F.scaled_dot_product_attention(q, k, v, attn_mask=banded_keep_mask(9, window))
    expected = swa.out_proj(context.transpose(1, 2).reshape(2, 9, 8))
    torch.testing.assert_close(swa(x), expected, rtol=0, atol=1e-12)


def test_a_window_of_w_lets_each_token_see_itself_and_w_minus_1_before_it():
    hide = position_hide_mask(0, 6, 0, 6, window=3)
    assert (~hide).sum(dim=1).tolist() == [1, 2, 3, 3, 3, 3]
    assert torch.equal(~hide, banded_keep_mask(6, 3))


def test_a_window_of_one_attends_to_the_token_itself():
    torch.manual_seed(1)
    swa = MultiHeadAttentionWithSWA(3, 4, 0.0, num_heads=2, sliding_window_size=1)
    x = torch.randn(2, 5, 3)
    torch.testing.assert_close(swa(x), swa.out_proj(swa.W_value(x)))


@pytest.mark.parametrize("window", [None, 6, 7, 100])
def test_no_window_or_one_as_long_as_the_input_is_multi_head_attention(batch, window):
    torch.manual_seed(2)
    swa = MultiHeadAttentionWithSWA(3, 4, 0.0, num_heads=2, sliding_window_size=window)
    torch.manual_seed(2)
    mha = MultiHeadAttention(3, 4, 6, 0.0, num_heads=2)  # same seed, same parameters
    assert all(torch.equal(a, b) for a, b in zip(swa.parameters(), mha.parameters(), strict=True))
    assert torch.equal(swa(batch), mha(batch))


@torch.no_grad()
@pytest.mark.parametrize("window", [1, 2, 4, 15, None])
@pytest.mark.parametrize("chunks", [[1] * 15, [6, 1, 1, 7], [15], [2, 13]])
def test_cached_generation_equals_the_full_forward(window, chunks):
    torch.manual_seed(3)
    swa = MultiHeadAttentionWithSWA(6, 8, 0.0, num_heads=2, sliding_window_size=window).double()
    x = torch.randn(2, 15, 6, dtype=torch.float64)
    full = swa(x)
    parts, start = [], 0
    for size in chunks:
        parts.append(swa(x[:, start : start + size], use_cache=True))
        start += size
        # The cache never holds more than the window.
        assert swa.cache_k.shape[1] == min(start, window or start)
    torch.testing.assert_close(torch.cat(parts, dim=1), full, rtol=0, atol=1e-12)


def test_the_window_can_be_changed_after_construction(batch):
    torch.manual_seed(4)
    swa = MultiHeadAttentionWithSWA(3, 4, 0.0, num_heads=2, sliding_window_size=2)
    narrow = swa(batch)
    swa.sliding_window_size = None  # how the bonus model makes a layer global
    assert not torch.allclose(narrow, swa(batch))


@pytest.mark.parametrize(
    ("window", "error", "message"),
    [
        (0, ValueError, r"^sliding_window_size must be a positive int; got 0$"),
        (-2, ValueError, r"^sliding_window_size must be a positive int; got -2$"),
        (2.5, TypeError, r"^sliding_window_size must be a positive int; got 2.5 \(float\)$"),
        (True, TypeError, r"^sliding_window_size must be a positive int; got True \(bool\)$"),
    ],
)
def test_a_window_below_one_or_not_an_int_is_refused(window, error, message):
    with pytest.raises(error, match=message):
        MultiHeadAttentionWithSWA(4, 4, 0.0, num_heads=2, sliding_window_size=window)


def test_a_window_set_later_is_checked_and_cannot_change_under_a_cache():
    swa = MultiHeadAttentionWithSWA(4, 4, 0.0, num_heads=2)
    with pytest.raises(ValueError, match=r"^sliding_window_size must be a positive int; got 0$"):
        swa.sliding_window_size = 0
    with pytest.raises(TypeError, match=r"^sliding_window_size must be a positive int; got '3'"):
        swa.sliding_window_size = "3"
    swa.sliding_window_size = 2
    with torch.no_grad():
        swa(torch.randn(1, 5, 4), use_cache=True)
        with pytest.raises(
            ValueError,
            match=r"^sliding_window_size cannot change while the cache holds 2 tokens; "
            r"call reset_cache\(\) first$",
        ):
            swa.sliding_window_size = 4
        swa.reset_cache()
        swa.sliding_window_size = 4
    assert swa.sliding_window_size == 4


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        ((0, 3, 0, 3, 0), ValueError, r"^window must be a positive int; got 0$"),
        ((-1, 3, 0, 3), ValueError, r"^query_start must be an int >= 0; got -1$"),
        ((0, 0, 0, 3), ValueError, r"^num_queries must be a positive int; got 0$"),
        ((0, 3, 1.5, 3), TypeError, r"^key_start must be an int >= 0; got 1.5 \(float\)$"),
    ],
)
def test_position_hide_mask_names_a_bad_argument(args, error, message):
    with pytest.raises(error, match=message):
        position_hide_mask(*args)
