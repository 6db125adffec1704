"""Section 3.4: SelfAttention_v1 and SelfAttention_v2, against the transcripts' numbers."""

from __future__ import annotations

import pytest
import torch
from helpers import assert_printed
from torch import nn

from attention_mechanisms import SelfAttention_v1, SelfAttention_v2

V1_SEED_123 = [
    [0.2996, 0.8053],
    [0.3061, 0.8210],
    [0.3058, 0.8203],
    [0.2948, 0.7939],
    [0.2927, 0.7891],
    [0.2990, 0.8040],
]
V2_SEED_789 = [
    [-0.0739, 0.0713],
    [-0.0748, 0.0703],
    [-0.0749, 0.0702],
    [-0.0760, 0.0685],
    [-0.0763, 0.0679],
    [-0.0754, 0.0693],
]
V2_SEED_123 = [
    [-0.5337, -0.1051],
    [-0.5323, -0.1080],
    [-0.5323, -0.1079],
    [-0.5297, -0.1076],
    [-0.5311, -0.1066],
    [-0.5299, -0.1081],
]
# vi transcript: seed 123, a v2 (In [6]), the `nn.Linear(3, 2)` cell run twice (the counter
# skips from 6 to 8), then a v1 and a v2 whose weights are copied into the v1 (In [9]).
COPIED = [
    [0.0309, -0.2902],
    [0.0308, -0.2899],
    [0.0308, -0.2898],
    [0.0300, -0.2897],
    [0.0292, -0.2891],
    [0.0306, -0.2900],
]


def test_step_by_step_values_with_seed_123(inputs):
    # Section 3.4.1 draws W_query, W_key, W_value with torch.rand in this order, as v1 does.
    torch.manual_seed(123)
    sa = SelfAttention_v1(3, 2)
    x_2 = inputs[1]
    query_2, key_2, value_2 = x_2 @ sa.W_query, x_2 @ sa.W_key, x_2 @ sa.W_value
    assert_printed(query_2, [0.4306, 1.4551])
    assert_printed(key_2, [0.4433, 1.1419])
    assert_printed(value_2, [0.3951, 1.0037])
    keys, values = inputs @ sa.W_key, inputs @ sa.W_value
    assert keys.shape == values.shape == (6, 2)
    assert_printed(query_2.dot(keys[1]), 1.8524)
    scores_2 = query_2 @ keys.T
    assert_printed(scores_2, [1.2705, 1.8524, 1.8111, 1.0795, 0.5577, 1.5440])
    weights_2 = torch.softmax(scores_2 / keys.shape[-1] ** 0.5, dim=-1)
    assert_printed(weights_2, [0.1500, 0.2264, 0.2199, 0.1311, 0.0906, 0.1820])
    assert_printed(weights_2 @ values, [0.3061, 0.8210])
    assert_printed(sa(inputs)[1], [0.3061, 0.8210])


def test_v1_seed_123(inputs):
    torch.manual_seed(123)
    assert_printed(SelfAttention_v1(3, 2)(inputs), V1_SEED_123)


@pytest.mark.parametrize(("seed", "expected"), [(789, V2_SEED_789), (123, V2_SEED_123)])
def test_v2_seeded(inputs, seed, expected):
    torch.manual_seed(seed)
    assert_printed(SelfAttention_v2(3, 2)(inputs), expected)


def copy_v2_into_v1(v1: SelfAttention_v1, v2: SelfAttention_v2) -> None:
    # nn.Linear stores (d_out, d_in) and computes x @ weight.T, so v1 gets the transpose.
    with torch.no_grad():
        v1.W_query.copy_(v2.W_query.weight.T)
        v1.W_key.copy_(v2.W_key.weight.T)
        v1.W_value.copy_(v2.W_value.weight.T)


def test_v1_equals_v2_after_copying_transposed_weights(inputs):
    torch.manual_seed(123)
    # These modules (five nn.Linear layers in all) only advance the random generator, so that
    # v2 below draws the weights that COPIED was printed with; nothing about them is checked.
    SelfAttention_v2(3, 2)
    nn.Linear(3, 2, bias=False)
    nn.Linear(3, 2, bias=False)
    v1, v2 = SelfAttention_v1(3, 2), SelfAttention_v2(3, 2)
    assert not torch.allclose(v1(inputs), v2(inputs))
    copy_v2_into_v1(v1, v2)
    assert_printed(v2(inputs), COPIED)
    torch.testing.assert_close(v1(inputs), v2(inputs), rtol=0, atol=1e-7)


@pytest.mark.parametrize("cls", [SelfAttention_v1, SelfAttention_v2])
def test_batched_equals_one_at_a_time(cls, batch):
    torch.manual_seed(0)
    sa = cls(3, 4)
    out = sa(batch)
    assert out.shape == (2, 6, 4)
    for i in range(batch.shape[0]):
        torch.testing.assert_close(out[i], sa(batch[i]))


def test_v2_bias_is_used(inputs):
    torch.manual_seed(0)
    sa = SelfAttention_v2(3, 2, qkv_bias=True)
    assert sa.W_value.bias is not None
    before = sa(inputs)
    with torch.no_grad():
        sa.W_value.bias.add_(1.0)
    # Every weight row sums to 1, so a bias on the values shifts every output by exactly it.
    torch.testing.assert_close(sa(inputs), before + 1.0)
