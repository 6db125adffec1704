"""Grouped-query attention: PyTorch's enable_gqa, multi-head and multi-query as special cases."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F  # noqa: N812

from attention_mechanisms import GroupedQueryAttention, MultiHeadAttention


def projections(gqa: GroupedQueryAttention, x: torch.Tensor):
    """The module's queries, keys and values, split into heads, before any repeat."""
    b, t, _ = x.shape
    q = gqa.W_query(x).view(b, t, gqa.num_heads, gqa.head_dim).transpose(1, 2)
    k = gqa.W_key(x).view(b, t, gqa.num_kv_groups, gqa.head_dim).transpose(1, 2)
    v = gqa.W_value(x).view(b, t, gqa.num_kv_groups, gqa.head_dim).transpose(1, 2)
    return q, k, v


@pytest.mark.parametrize(("num_heads", "num_kv_groups"), [(8, 2), (6, 3), (4, 1), (4, 4)])
def test_equals_pytorchs_sdpa_with_enable_gqa(num_heads, num_kv_groups):
    torch.manual_seed(0)
    gqa = GroupedQueryAttention(10, 4 * num_heads, 0.0, num_heads, num_kv_groups, qkv_bias=True)
    gqa = gqa.double()
    x = torch.randn(3, 9, 10, dtype=torch.float64)
    q, k, v = projections(gqa, x)
    context = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    expected = gqa.out_proj(context.transpose(1, 2).reshape(3, 9, 4 * num_heads))
    torch.testing.assert_close(gqa(x), expected, rtol=0, atol=1e-12)


def test_as_many_groups_as_heads_is_multi_head_attention_bit_for_bit(batch):
    torch.manual_seed(3)
    gqa = GroupedQueryAttention(3, 4, 0.0, num_heads=2, num_kv_groups=2, qkv_bias=True)
    mha = MultiHeadAttention(3, 4, 6, 0.0, num_heads=2, qkv_bias=True)
    for name in ("W_query", "W_key", "W_value"):
        getattr(mha, name).load_state_dict(getattr(gqa, name).state_dict())
    mha.out_proj.weight.data.copy_(gqa.out_proj.weight)
    mha.out_proj.bias.data.zero_()  # the bonus class's out_proj has no bias
    assert torch.equal(gqa(batch), mha(batch))


def test_one_group_shares_one_key_and_value_head_across_all_heads():
    torch.manual_seed(4)
    mqa = GroupedQueryAttention(6, 12, 0.0, num_heads=4, num_kv_groups=1)
    assert mqa.W_key.weight.shape == mqa.W_value.weight.shape == (3, 6)
    x = torch.randn(2, 5, 6)
    q, k, v = projections(mqa, x)
    # Every head attends with the same keys and values: expand instead of repeat.
    context = F.scaled_dot_product_attention(q, k.expand_as(q), v.expand_as(q), is_causal=True)
    torch.testing.assert_close(mqa(x), mqa.out_proj(context.transpose(1, 2).reshape(2, 5, 12)))


def test_repeat_instead_of_repeat_interleave_pairs_the_wrong_heads():
    torch.manual_seed(5)
    gqa = GroupedQueryAttention(6, 16, 0.0, num_heads=4, num_kv_groups=2).double()
    x = torch.randn(1, 7, 6, dtype=torch.float64)
    q, k, v = projections(gqa, x)
    # Head order [K1, K1, K2, K2] is the module's; [K1, K2, K1, K2] is another function.
    right = F.scaled_dot_product_attention(
        q, k.repeat_interleave(2, dim=1), v.repeat_interleave(2, dim=1), is_causal=True
    )
    wrong = F.scaled_dot_product_attention(
        q, k.repeat(1, 2, 1, 1), v.repeat(1, 2, 1, 1), is_causal=True
    )
    assert not torch.allclose(right, wrong)
    torch.testing.assert_close(gqa(x), gqa.out_proj(right.transpose(1, 2).reshape(1, 7, 16)))


@torch.no_grad()
@pytest.mark.parametrize("chunks", [[1] * 12, [5, 1, 6], [12], [3, 9]])
def test_cached_generation_equals_the_full_forward(chunks):
    torch.manual_seed(6)
    gqa = GroupedQueryAttention(8, 16, 0.0, num_heads=4, num_kv_groups=2).double()
    x = torch.randn(2, 12, 8, dtype=torch.float64)
    full = gqa(x)
    gqa.reset_cache()
    parts, start = [], 0
    for size in chunks:
        parts.append(gqa(x[:, start : start + size], use_cache=True))
        start += size
    torch.testing.assert_close(torch.cat(parts, dim=1), full, rtol=0, atol=1e-12)
    # The cache holds the grouped keys and values: 2 heads, not 4.
    assert gqa.cache_k.shape == gqa.cache_v.shape == (2, 2, 12, 4)
    assert gqa.ptr_current_pos == 12


def test_a_forward_without_cache_empties_it():
    gqa = GroupedQueryAttention(4, 4, 0.0, num_heads=2, num_kv_groups=1)
    with torch.no_grad():
        gqa(torch.randn(1, 3, 4), use_cache=True)
        assert gqa.cache_k is not None
        gqa(torch.randn(1, 3, 4))
    assert gqa.cache_k is None and gqa.cache_v is None and gqa.ptr_current_pos == 0


def test_parameters_take_the_dtype_asked_for():
    gqa = GroupedQueryAttention(4, 8, 0.0, num_heads=4, num_kv_groups=2, dtype=torch.bfloat16)
    assert {p.dtype for p in gqa.parameters()} == {torch.bfloat16}
    assert gqa(torch.randn(2, 3, 4, dtype=torch.bfloat16)).dtype == torch.bfloat16


def test_errors_name_the_argument():
    with pytest.raises(
        ValueError,
        match=r"^num_heads must be divisible by num_kv_groups; got "
        r"num_heads=8, num_kv_groups=3 \(remainder 2\)$",
    ):
        GroupedQueryAttention(8, 16, 0.0, num_heads=8, num_kv_groups=3)
    with pytest.raises(ValueError, match=r"^num_kv_groups must be a positive int; got 0$"):
        GroupedQueryAttention(8, 16, 0.0, num_heads=8, num_kv_groups=0)
    with pytest.raises(ValueError, match=r"^d_out must be divisible by num_heads"):
        GroupedQueryAttention(8, 10, 0.0, num_heads=4, num_kv_groups=2)
    # The bonus code's positional dtype slot is qkv_bias here: a dtype there is named.
    with pytest.raises(TypeError, match=r"^qkv_bias must be a bool; got torch.bfloat16"):
        GroupedQueryAttention(8, 16, 0.0, 4, 2, torch.bfloat16)  # type: ignore[arg-type]
    gqa = GroupedQueryAttention(8, 16, 0.0, num_heads=4, num_kv_groups=2)
    with pytest.raises(TypeError, match=r"^use_cache must be a bool; got 1 \(int\)$"):
        gqa(torch.randn(1, 2, 8), use_cache=1)  # type: ignore[arg-type]
    with torch.no_grad():
        gqa(torch.randn(2, 3, 8), use_cache=True)
        with pytest.raises(
            ValueError,
            match=r"^x has a batch of 3 sequence\(s\), but the cache holds 2; call "
            r"reset_cache\(\) before a new batch",
        ):
            gqa(torch.randn(3, 1, 8), use_cache=True)
    with pytest.raises(
        TypeError,
        match=r"^x must be torch.float32 like the module's parameters; got torch.float64: "
        r"convert x with x.to\(torch.float32\)",
    ):
        gqa(torch.randn(1, 2, 8, dtype=torch.float64))
    with pytest.raises(
        ValueError, match=r"^x must be on cpu like the module's parameters; got meta"
    ):
        gqa(torch.empty(1, 2, 8, device="meta"))
