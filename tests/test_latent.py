"""Multi-head latent attention: a compressed cache, and multi-head attention in disguise."""

from __future__ import annotations

import pytest
import torch

from attention_mechanisms import GroupedQueryAttention, MultiHeadAttention, MultiHeadLatentAttention


def test_without_biases_it_is_multi_head_attention_with_low_rank_keys_and_values():
    torch.manual_seed(0)
    mla = MultiHeadLatentAttention(6, 8, 0.0, num_heads=2, latent_dim=3).double()
    mha = MultiHeadAttention(6, 8, 10, 0.0, num_heads=2).double()
    with torch.no_grad():
        mha.W_query.weight.copy_(mla.W_query.weight)
        mha.W_key.weight.copy_(mla.W_UK.weight @ mla.W_DKV.weight)  # K = (x W_DKV) W_UK
        mha.W_value.weight.copy_(mla.W_UV.weight @ mla.W_DKV.weight)
        mha.out_proj.load_state_dict(mla.out_proj.state_dict())
    x = torch.randn(2, 10, 6, dtype=torch.float64)
    torch.testing.assert_close(mla(x), mha(x))
    assert torch.linalg.matrix_rank(mha.W_key.weight) == 3  # keys live in a 3-D subspace


@torch.no_grad()
@pytest.mark.parametrize("chunks", [[1] * 11, [4, 1, 6], [11]])
def test_cached_generation_equals_the_full_forward(chunks):
    torch.manual_seed(1)
    mla = MultiHeadLatentAttention(8, 16, 0.0, num_heads=4, latent_dim=5).double()
    x = torch.randn(3, 11, 8, dtype=torch.float64)
    full = mla(x)
    parts, start = [], 0
    for size in chunks:
        parts.append(mla(x[:, start : start + size], use_cache=True))
        start += size
    torch.testing.assert_close(torch.cat(parts, dim=1), full, rtol=0, atol=1e-12)
    assert mla.cache_c_kv.shape == (3, 11, 5)


@torch.no_grad()
@pytest.mark.parametrize(("d_out", "num_heads", "latent_dim"), [(16, 4, 5), (768, 12, None)])
def test_the_cache_is_latent_dim_over_two_d_out_of_a_multi_head_cache(d_out, num_heads, latent_dim):
    mla = MultiHeadLatentAttention(d_out, d_out, 0.0, num_heads, latent_dim=latent_dim)
    mha = GroupedQueryAttention(d_out, d_out, 0.0, num_heads, num_kv_groups=num_heads)
    x = torch.randn(2, 7, d_out)
    mla(x, use_cache=True)
    mha(x, use_cache=True)
    latent_numbers = mla.cache_c_kv.numel()
    kv_numbers = mha.cache_k.numel() + mha.cache_v.numel()
    assert latent_numbers / kv_numbers == mla.latent_dim / (2 * d_out)


def test_the_default_latent_is_an_eighth_of_d_out_and_at_least_16():
    assert MultiHeadLatentAttention(768, 768, 0.0, 12).latent_dim == 96
    assert MultiHeadLatentAttention(64, 64, 0.0, 4).latent_dim == 16


def test_errors_name_the_argument():
    with pytest.raises(ValueError, match=r"^latent_dim must be a positive int; got 0$"):
        MultiHeadLatentAttention(8, 8, 0.0, 2, latent_dim=0)
    with pytest.raises(ValueError, match=r"^d_out must be divisible by num_heads"):
        MultiHeadLatentAttention(8, 9, 0.0, 2)
    mla = MultiHeadLatentAttention(8, 8, 0.0, 2, latent_dim=4)
    with torch.no_grad():
        mla(torch.randn(2, 3, 8), use_cache=True)
        with pytest.raises(
            ValueError,
            match=r"^x has a batch of 1 sequence\(s\), but the cache holds 2",
        ):
            mla(torch.randn(1, 1, 8), use_cache=True)
