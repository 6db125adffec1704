"""Each chapter-3 class, written out as the book writes it, equals the general functional form.

The classes spell out the book's lines (scores, masked_fill_, softmax of the scaled scores,
dropout, weights @ values); ``scaled_dot_product_attention`` is the general form with
arbitrary masks. They differ only in rounding: the functional form multiplies by
``1 / sqrt(d_k)`` where the book divides by ``sqrt(d_k)``. With dropout in training mode
both draw the same mask from the same seed.
"""

from __future__ import annotations

import pytest
import torch

from attention_mechanisms import (
    CausalAttention,
    MultiHeadAttention,
    MultiHeadAttentionWrapper,
    SelfAttention_v1,
    SelfAttention_v2,
    scaled_dot_product_attention,
)


def functional_self_attention(sa, x):
    if isinstance(sa, SelfAttention_v1):
        q, k, v = x @ sa.W_query, x @ sa.W_key, x @ sa.W_value
    else:
        q, k, v = sa.W_query(x), sa.W_key(x), sa.W_value(x)
    return scaled_dot_product_attention(q, k, v)[0]


def functional_causal(ca, x, dropout_p):
    q, k, v = ca.W_query(x), ca.W_key(x), ca.W_value(x)
    return scaled_dot_product_attention(q, k, v, causal=True, dropout_p=dropout_p)[0]


def functional_multihead(mha, x, dropout_p):
    b, t, _ = x.shape
    split = (b, t, mha.num_heads, mha.head_dim)
    projections = (mha.W_query, mha.W_key, mha.W_value)
    q, k, v = (proj(x).view(split).transpose(1, 2) for proj in projections)  # (b, h, T, d_head)
    context, _ = scaled_dot_product_attention(q, k, v, causal=True, dropout_p=dropout_p)
    return mha.out_proj(context.transpose(1, 2).reshape(b, t, mha.d_out))


@pytest.mark.parametrize("cls", [SelfAttention_v1, SelfAttention_v2])
def test_self_attention_equals_the_functional_form(cls):
    torch.manual_seed(0)
    sa = cls(5, 4).double()
    x = torch.randn(2, 7, 5, dtype=torch.float64)
    torch.testing.assert_close(sa(x), functional_self_attention(sa, x), rtol=0, atol=1e-12)


def assert_same_after_the_same_seed(module, functional, x):
    """``module(x)`` equals ``functional(x)`` when both start from seed 1 (same dropout draws)."""
    torch.manual_seed(1)
    out = module(x)
    torch.manual_seed(1)
    torch.testing.assert_close(out, functional(x), rtol=0, atol=1e-12)


@pytest.mark.parametrize("training", [False, True])
def test_causal_attention_equals_the_functional_form(training):
    torch.manual_seed(0)
    ca = CausalAttention(5, 4, context_length=8, dropout=0.3).double().train(training)
    x = torch.randn(2, 7, 5, dtype=torch.float64)
    p = 0.3 if training else 0.0
    assert_same_after_the_same_seed(ca, lambda x: functional_causal(ca, x, p), x)


@pytest.mark.parametrize("training", [False, True])
def test_multihead_attention_equals_the_functional_form(training):
    torch.manual_seed(0)
    mha = MultiHeadAttention(5, 6, context_length=8, dropout=0.3, num_heads=3).double()
    mha.train(training)
    x = torch.randn(2, 7, 5, dtype=torch.float64)
    p = 0.3 if training else 0.0
    assert_same_after_the_same_seed(mha, lambda x: functional_multihead(mha, x, p), x)


def test_the_wrapper_is_its_causal_heads_side_by_side():
    torch.manual_seed(0)
    wrapper = MultiHeadAttentionWrapper(5, 2, context_length=8, dropout=0.0, num_heads=3).double()
    x = torch.randn(2, 7, 5, dtype=torch.float64)
    heads = [functional_causal(head, x, 0.0) for head in wrapper.heads]
    torch.testing.assert_close(wrapper(x), torch.cat(heads, dim=-1), rtol=0, atol=1e-12)


def test_dropout_is_the_module_the_class_creates():
    # The classes call their nn.Dropout: an Identity in its place (which has no .p to read)
    # works, and a stronger dropout changes what they compute.
    torch.manual_seed(0)
    ca = CausalAttention(5, 4, context_length=8, dropout=0.0)
    x = torch.randn(2, 7, 5)
    before = ca(x)
    ca.dropout = torch.nn.Identity()
    torch.testing.assert_close(ca(x), before)
    ca.dropout = torch.nn.Dropout(0.999).train()
    assert not torch.allclose(ca(x), before)
