"""Properties every module must have, checked on many random shapes with hypothesis."""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_mechanisms import (
    CausalAttention,
    FusedMultiHeadAttention,
    GroupedQueryAttention,
    MultiHeadAttention,
    MultiHeadAttentionWithSWA,
    MultiHeadAttentionWrapper,
    MultiHeadLatentAttention,
    SelfAttention_v1,
    SelfAttention_v2,
    causal_mask,
    scaled_dot_product_attention,
)

settings.register_profile("attention", deadline=None, max_examples=40)
settings.load_profile("attention")

CONTEXT_LENGTH = 8


@st.composite
def causal_setups(draw):
    """A float64 causal module with random sizes and a random batch that fits it."""
    kinds = ["causal", "wrapper", "multihead", "fused", "grouped", "window", "latent"]
    kind = draw(st.sampled_from(kinds))
    d_in = draw(st.integers(1, 6))
    num_heads = draw(st.integers(1, 3))
    head_dim = draw(st.integers(1, 3))
    torch.manual_seed(draw(st.integers(0, 2**16)))
    if kind == "causal":
        module = CausalAttention(d_in, head_dim, CONTEXT_LENGTH, 0.0, qkv_bias=True)
    elif kind == "wrapper":
        module = MultiHeadAttentionWrapper(d_in, head_dim, CONTEXT_LENGTH, 0.0, num_heads)
    elif kind == "multihead":
        module = MultiHeadAttention(d_in, num_heads * head_dim, CONTEXT_LENGTH, 0.0, num_heads)
    elif kind == "fused":
        module = FusedMultiHeadAttention(d_in, num_heads * head_dim, CONTEXT_LENGTH, 0.0, num_heads)
    else:
        module = _todays_llm_attention(draw, kind, d_in, num_heads, head_dim)
    b, t = draw(st.integers(1, 3)), draw(st.integers(1, CONTEXT_LENGTH))
    x = torch.randn(b, t, d_in, dtype=torch.float64)
    return module.double(), x


def _todays_llm_attention(draw, kind: str, d_in: int, num_heads: int, head_dim: int):
    """One of the bonus material's classes, with a random group count, window or latent."""
    d_out = num_heads * head_dim
    if kind == "grouped":
        groups = draw(st.sampled_from([g for g in range(1, num_heads + 1) if num_heads % g == 0]))
        return GroupedQueryAttention(d_in, d_out, 0.0, num_heads, groups, qkv_bias=True)
    if kind == "window":
        window = draw(st.one_of(st.none(), st.integers(1, CONTEXT_LENGTH + 1)))
        return MultiHeadAttentionWithSWA(d_in, d_out, 0.0, num_heads, sliding_window_size=window)
    latent = draw(st.integers(1, 4))
    return MultiHeadLatentAttention(d_in, d_out, 0.0, num_heads, qkv_bias=True, latent_dim=latent)


@st.composite
def self_attention_setups(draw):
    """A float64 non-causal self-attention module and a random (T, d_in) input."""
    cls = draw(st.sampled_from([SelfAttention_v1, SelfAttention_v2]))
    d_in, d_out, t = draw(st.integers(1, 6)), draw(st.integers(1, 4)), draw(st.integers(1, 8))
    torch.manual_seed(draw(st.integers(0, 2**16)))
    return cls(d_in, d_out).double(), torch.randn(t, d_in, dtype=torch.float64)


@given(causal_setups(), st.data())
def test_causality(setup, data):
    module, x = setup
    t = data.draw(st.integers(0, x.shape[1] - 1), label="t")
    changed = x.clone()
    changed[:, t + 1 :] = torch.randn_like(changed[:, t + 1 :]) * 10
    # Outputs at positions <= t never depend on tokens after t.
    torch.testing.assert_close(module(changed)[:, : t + 1], module(x)[:, : t + 1])


@given(causal_setups())
def test_batch_independence(setup):
    module, x = setup
    out = module(x)
    for i in range(x.shape[0]):
        torch.testing.assert_close(out[i], module(x[i]))
        torch.testing.assert_close(out[i : i + 1], module(x[i : i + 1]))


@given(self_attention_setups(), st.randoms(use_true_random=False))
def test_permutation_equivariance_without_mask(setup, rng):
    module, x = setup
    perm = list(range(x.shape[0]))
    rng.shuffle(perm)
    # Reordering the tokens reorders the outputs and changes nothing else.
    torch.testing.assert_close(module(x[perm]), module(x)[perm])


@given(
    st.integers(1, 7),
    st.integers(1, 7),
    st.integers(1, 4),
    st.booleans(),
    st.integers(0, 2**16),
)
def test_weight_rows_sum_to_one(num_queries, num_keys, d_k, causal, seed):
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(2, num_queries, d_k, generator=gen, dtype=torch.float64) * 5
    k = torch.randn(2, num_keys, d_k, generator=gen, dtype=torch.float64) * 5
    v = torch.randn(2, num_keys, 3, generator=gen, dtype=torch.float64)
    hide = torch.rand(num_queries, num_keys, generator=gen) < 0.3
    _, weights = scaled_dot_product_attention(q, k, v, hide_mask=hide, causal=causal)
    assert (weights >= 0).all()
    rows = weights.sum(-1)
    # A row sums to 1 unless every key is hidden from it; then it is all zeros.
    effective = hide | causal_mask(num_queries, num_keys) if causal else hide
    empty = effective.all(-1).expand_as(rows)
    torch.testing.assert_close(rows[~empty], torch.ones_like(rows[~empty]))
    assert torch.equal(rows[empty], torch.zeros_like(rows[empty]))
