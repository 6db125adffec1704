"""Section 3.5: the causal mask, dropout, and CausalAttention."""

from __future__ import annotations

import math

import torch
from helpers import assert_printed

from attention_mechanisms import CausalAttention, SelfAttention_v2, scaled_dot_product_attention

UNMASKED = [
    [0.1921, 0.1646, 0.1652, 0.1550, 0.1721, 0.1510],
    [0.2041, 0.1659, 0.1662, 0.1496, 0.1665, 0.1477],
    [0.2036, 0.1659, 0.1662, 0.1498, 0.1664, 0.1480],
    [0.1869, 0.1667, 0.1668, 0.1571, 0.1661, 0.1564],
    [0.1830, 0.1669, 0.1670, 0.1588, 0.1658, 0.1585],
    [0.1935, 0.1663, 0.1666, 0.1542, 0.1666, 0.1529],
]
inf = math.inf
MASKED_SCORES = [
    [0.2899, -inf, -inf, -inf, -inf, -inf],
    [0.4656, 0.1723, -inf, -inf, -inf, -inf],
    [0.4594, 0.1703, 0.1731, -inf, -inf, -inf],
    [0.2642, 0.1024, 0.1036, 0.0186, -inf, -inf],
    [0.2183, 0.0874, 0.0882, 0.0177, 0.0786, -inf],
    [0.3408, 0.1270, 0.1290, 0.0198, 0.1290, 0.0078],
]
CAUSAL = [
    [1.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000],
    [0.5517, 0.4483, 0.0000, 0.0000, 0.0000, 0.0000],
    [0.3800, 0.3097, 0.3103, 0.0000, 0.0000, 0.0000],
    [0.2758, 0.2460, 0.2462, 0.2319, 0.0000, 0.0000],
    [0.2175, 0.1983, 0.1984, 0.1888, 0.1971, 0.0000],
    [0.1935, 0.1663, 0.1666, 0.1542, 0.1666, 0.1529],
]


def test_causal_weights_from_the_v2_seed_789_projections(inputs):
    torch.manual_seed(789)
    sa = SelfAttention_v2(3, 2)
    queries, keys, values = sa.W_query(inputs), sa.W_key(inputs), sa.W_value(inputs)
    scores = queries @ keys.T
    weights = torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1)
    assert_printed(weights, UNMASKED)

    # Route 1: zero the future after the softmax, then renormalise each row.
    keep = torch.tril(torch.ones(6, 6))
    masked = weights * keep
    renormalised = masked / masked.sum(dim=-1, keepdim=True)
    assert_printed(renormalised, CAUSAL)

    # Route 2: -inf before the softmax. Same weights, one pass.
    hide = torch.triu(torch.ones(6, 6), diagonal=1)
    masked_scores = scores.masked_fill(hide.bool(), -torch.inf)
    assert_printed(masked_scores, MASKED_SCORES)
    direct = torch.softmax(masked_scores / keys.shape[-1] ** 0.5, dim=1)
    assert_printed(direct, CAUSAL)
    torch.testing.assert_close(direct, renormalised)

    _, package_weights = scaled_dot_product_attention(queries, keys, values, causal=True)
    torch.testing.assert_close(package_weights, direct)


def test_compact_class_on_a_batch(batch):
    torch.manual_seed(123)
    ca = CausalAttention(3, 2, batch.shape[1], 0.0)
    out = ca(batch)
    assert out.shape == (2, 6, 2)
    torch.testing.assert_close(out[0], out[1])
    torch.testing.assert_close(out[0], ca(batch[0]))


def test_shorter_input_uses_the_top_left_of_the_mask(batch):
    torch.manual_seed(0)
    ca = CausalAttention(3, 2, context_length=10, dropout=0.0)
    # Causality: the first four outputs do not depend on tokens 5 and 6.
    torch.testing.assert_close(ca(batch)[:, :4], ca(batch[:, :4]))


def test_first_token_attends_only_to_itself(batch):
    torch.manual_seed(0)
    ca = CausalAttention(3, 2, 6, 0.0)
    torch.testing.assert_close(ca(batch)[:, 0], ca.W_value(batch[:, 0]))


def test_mask_is_a_buffer_in_state_dict():
    ca = CausalAttention(3, 2, 4, 0.0)
    assert "mask" in dict(ca.named_buffers())
    assert "mask" not in dict(ca.named_parameters())
    state = ca.state_dict()
    assert torch.equal(state["mask"], torch.triu(torch.ones(4, 4), diagonal=1))
    assert state["mask"].dtype == torch.float32


def test_still_causal_after_a_dtype_move(batch):
    torch.manual_seed(2)
    ca = CausalAttention(3, 2, 6, 0.0)
    ca64 = ca.to(torch.float64)
    assert ca64.mask.dtype == torch.float64
    out = ca64(batch.double())
    assert out.dtype == torch.float64
    # Still causal after the move: token 1's output ignores tokens 2 to 6.
    torch.testing.assert_close(out[:, :1], ca64(batch.double()[:, :1]))


def test_eval_equals_dropout_zero(batch):
    torch.manual_seed(3)
    with_dropout = CausalAttention(3, 2, 6, dropout=0.5)
    without = CausalAttention(3, 2, 6, dropout=0.0)
    without.load_state_dict(with_dropout.state_dict())
    with_dropout.eval()
    torch.testing.assert_close(with_dropout(batch), without(batch), rtol=0, atol=0)
    with_dropout.train()
    assert not torch.allclose(with_dropout(batch), without(batch))


def test_dropout_zeroes_about_p_and_scales_the_rest():
    # Queries equal to zero give uniform weights 1/T; dropout acts on those weights, so the
    # context of an all-ones value matrix is (number kept) / T / (1 - p) per row.
    p, num_tokens = 0.3, 512
    torch.manual_seed(4)
    q = torch.zeros(1, num_tokens, 8)
    k = torch.randn(1, num_tokens, 8)
    v = torch.ones(1, num_tokens, 1)
    _, weights = scaled_dot_product_attention(q, k, v, dropout_p=p)
    kept = weights != 0
    fraction_zeroed = 1 - kept.double().mean().item()
    # 262,144 independent draws: the standard error of the fraction is below 0.001.
    assert abs(fraction_zeroed - p) < 0.005
    torch.testing.assert_close(
        weights[kept], torch.full_like(weights[kept], 1 / num_tokens / (1 - p))
    )
