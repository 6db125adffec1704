"""Section 3.6: MultiHeadAttentionWrapper and MultiHeadAttention."""

from __future__ import annotations

import pytest
import torch
from helpers import assert_printed
from torch import nn

from attention_mechanisms import MultiHeadAttention, MultiHeadAttentionWrapper

WRAPPER_SEED_123 = [
    [-0.4519, 0.2216, 0.4772, 0.1063],
    [-0.5874, 0.0058, 0.5891, 0.3257],
    [-0.6300, -0.0632, 0.6202, 0.3860],
    [-0.5675, -0.0843, 0.5478, 0.3589],
    [-0.5526, -0.0981, 0.5321, 0.3428],
    [-0.5299, -0.1081, 0.5077, 0.3493],
]
# vi transcript: the next wrapper after the one above, with d_out=1 per head.
WRAPPER_D_OUT_1 = [
    [0.0189, 0.2729],
    [0.2181, 0.3037],
    [0.2804, 0.3125],
    [0.2830, 0.2793],
    [0.2476, 0.2541],
    [0.2748, 0.2513],
]
MHA_SEED_123 = [
    [0.3190, 0.4858],
    [0.2943, 0.3897],
    [0.2856, 0.3593],
    [0.2693, 0.3873],
    [0.2639, 0.3928],
    [0.2575, 0.4028],
]


def test_wrapper_seed_123(batch):
    torch.manual_seed(123)
    wrapper = MultiHeadAttentionWrapper(3, 2, batch.shape[1], 0.0, num_heads=2)
    out = wrapper(batch)
    assert out.shape == (2, 6, 4)
    assert_printed(out, [WRAPPER_SEED_123] * 2)
    # Each head's own output is the matching slice.
    assert_printed(wrapper.heads[0](batch)[0], [row[:2] for row in WRAPPER_SEED_123])
    assert_printed(wrapper.heads[1](batch)[0], [row[2:] for row in WRAPPER_SEED_123])

    smaller = MultiHeadAttentionWrapper(3, 1, batch.shape[1], 0.0, num_heads=2)
    out = smaller(batch)
    assert out.shape == (2, 6, 2)
    assert_printed(out, [WRAPPER_D_OUT_1] * 2)


def test_wrapper_equals_its_heads_concatenated(batch):
    torch.manual_seed(5)
    wrapper = MultiHeadAttentionWrapper(3, 4, 6, 0.0, num_heads=3, qkv_bias=True)
    expected = torch.cat([head(batch) for head in wrapper.heads], dim=-1)
    torch.testing.assert_close(wrapper(batch), expected, rtol=0, atol=0)
    torch.testing.assert_close(wrapper(batch[1]), expected[1])


def test_multihead_seed_123(batch):
    torch.manual_seed(123)
    mha = MultiHeadAttention(3, 2, batch.shape[1], 0.0, num_heads=2)
    out = mha(batch)
    assert out.shape == (2, 6, 2)
    assert_printed(out, [MHA_SEED_123] * 2)
    assert_printed(mha(batch[0]), MHA_SEED_123)


def test_gpt2_small_parameter_count():
    mha = MultiHeadAttention(768, 768, context_length=1024, dropout=0.0, num_heads=12)
    assert sum(p.numel() for p in mha.parameters()) == 2_360_064
    assert mha.head_dim == 64
    assert mha.mask.shape == (1024, 1024)


def test_parameter_names_match_the_book():
    mha = MultiHeadAttention(4, 6, 5, 0.0, num_heads=3)
    assert list(mha.state_dict()) == [
        "mask",
        "W_query.weight",
        "W_key.weight",
        "W_value.weight",
        "out_proj.weight",
        "out_proj.bias",
    ]


def torch_reference(mha: MultiHeadAttention) -> nn.MultiheadAttention:
    """An nn.MultiheadAttention holding the same weights as ``mha``."""
    ref = nn.MultiheadAttention(
        mha.d_out, mha.num_heads, bias=True, batch_first=True, dtype=mha.out_proj.weight.dtype
    )
    with torch.no_grad():
        ref.in_proj_weight.copy_(
            torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight])
        )
        ref.in_proj_bias.copy_(torch.cat([mha.W_query.bias, mha.W_key.bias, mha.W_value.bias]))
        ref.out_proj.weight.copy_(mha.out_proj.weight)
        ref.out_proj.bias.copy_(mha.out_proj.bias)
    return ref


@pytest.mark.parametrize(
    ("d_model", "num_heads", "num_tokens"), [(8, 2, 5), (12, 3, 7), (16, 4, 1)]
)
def test_equals_torch_multihead_attention(d_model, num_heads, num_tokens):
    torch.manual_seed(6)
    mha = MultiHeadAttention(d_model, d_model, 8, 0.0, num_heads, qkv_bias=True).double()
    ref = torch_reference(mha).eval()
    x = torch.randn(3, num_tokens, d_model, dtype=torch.float64)
    # nn.MultiheadAttention's boolean attn_mask marks positions to hide, like the book's buffer.
    hide = mha.mask.bool()[:num_tokens, :num_tokens]
    expected, _ = ref(x, x, x, attn_mask=hide, need_weights=False)
    assert (mha(x) - expected).abs().max() <= 1e-10


def test_heads_are_independent(batch):
    # Changing the query weights of head 0 must leave the columns of head 1 untouched
    # before out_proj; with out_proj set to the identity we can see them directly.
    torch.manual_seed(7)
    mha = MultiHeadAttention(3, 4, 6, 0.0, num_heads=2)
    with torch.no_grad():
        mha.out_proj.weight.copy_(torch.eye(4))
        mha.out_proj.bias.zero_()
    before = mha(batch)
    with torch.no_grad():
        mha.W_query.weight[:2].mul_(3.0)  # rows 0 and 1 produce head 0's queries
    after = mha(batch)
    torch.testing.assert_close(after[..., 2:], before[..., 2:])
    assert not torch.allclose(after[..., :2], before[..., :2])
