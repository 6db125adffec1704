"""Rotary position embeddings: relative positions, lengths kept, offsets with a cache."""

from __future__ import annotations

import math

import pytest
import torch

from attention_mechanisms import apply_rope, compute_rope_params


def rotate_as_complex(x: torch.Tensor, positions: torch.Tensor, theta_base: float = 10_000):
    """RoPE from its definition: pair (k, k + d/2) is a complex number turned by m * theta_k."""
    d = x.shape[-1]
    theta = theta_base ** (-torch.arange(d // 2, dtype=torch.float64) * 2 / d)
    z = torch.complex(x[..., : d // 2], x[..., d // 2 :])
    turned = z * torch.polar(torch.ones_like(theta), positions[:, None] * theta)
    return torch.cat([turned.real, turned.imag], dim=-1)


def test_matches_the_definition_as_a_complex_rotation():
    cos, sin = compute_rope_params(8, context_length=20, dtype=torch.float64)
    x = torch.randn(2, 3, 20, 8, dtype=torch.float64)
    expected = rotate_as_complex(x, torch.arange(20, dtype=torch.float64))
    torch.testing.assert_close(apply_rope(x, cos.double(), sin.double()), expected)


@pytest.mark.parametrize(("m", "n", "shift"), [(5, 2, 10), (0, 0, 37), (3, 9, 100), (7, 7, 1)])
def test_the_score_depends_only_on_the_distance(m, n, shift):
    # Angles in float64: in float32, m * theta is rounded to about m * 6e-8 radians.
    cos, sin = compute_rope_params(16, context_length=200, dtype=torch.float64)
    q = torch.randn(1, 1, 1, 16, dtype=torch.float64)
    k = torch.randn(1, 1, 1, 16, dtype=torch.float64)

    def score(query_pos: int, key_pos: int) -> torch.Tensor:
        rotated_q = apply_rope(q, cos, sin, offset=query_pos)
        rotated_k = apply_rope(k, cos, sin, offset=key_pos)
        return (rotated_q * rotated_k).sum()

    torch.testing.assert_close(score(m, n), score(m + shift, n + shift))
    if m != n:
        assert not torch.allclose(score(m, n), (q * k).sum())  # the distance does matter


def test_rotation_keeps_every_vectors_length():
    cos, sin = compute_rope_params(64, context_length=512)
    x = torch.randn(2, 4, 512, 64, dtype=torch.float64)
    rotated = apply_rope(x, cos.double(), sin.double())
    torch.testing.assert_close(rotated.norm(dim=-1), x.norm(dim=-1))
    torch.testing.assert_close(rotated[:, :, 0], x[:, :, 0])  # position 0 is not turned


def test_an_offset_continues_the_positions_of_a_cache():
    cos, sin = compute_rope_params(8, context_length=32)
    x = torch.randn(1, 2, 12, 8)
    whole = apply_rope(x, cos, sin)
    torch.testing.assert_close(apply_rope(x[:, :, 9:], cos, sin, offset=9), whole[:, :, 9:])
    # Forgetting the offset rotates the new tokens as if they were the first ones.
    assert not torch.allclose(apply_rope(x[:, :, 9:], cos, sin), whole[:, :, 9:])


def test_angles_follow_theta_base():
    cos, sin = compute_rope_params(4, theta_base=500_000, context_length=3)
    angles = torch.atan2(sin, cos)
    assert cos.shape == sin.shape == (3, 4) and cos.dtype == torch.float32
    torch.testing.assert_close(angles[1], torch.tensor([1.0, 500_000**-0.5, 1.0, 500_000**-0.5]))
    torch.testing.assert_close(angles[:, :2], angles[:, 2:])  # one angle per pair, written twice
    assert math.isclose(angles[2, 0].item(), 2.0, rel_tol=1e-6)


def test_lower_precision_in_gives_lower_precision_out():
    cos, sin = compute_rope_params(8, context_length=4)
    assert apply_rope(torch.randn(1, 1, 4, 8, dtype=torch.bfloat16), cos, sin).dtype == (
        torch.bfloat16
    )


def test_errors_name_the_argument():
    with pytest.raises(
        ValueError,
        match=r"^head_dim must be even: RoPE rotates features in "
        r"pairs; got head_dim=7$",
    ):
        compute_rope_params(7)
    with pytest.raises(ValueError, match=r"^context_length must be a positive int; got 0$"):
        compute_rope_params(8, context_length=0)
    with pytest.raises(ValueError, match=r"^theta_base must be a finite number above 1; got 1$"):
        compute_rope_params(8, theta_base=1)
    cos, sin = compute_rope_params(8, context_length=10)
    with pytest.raises(
        ValueError,
        match=r"^x covers positions 8 to 11, but cos and sin hold "
        r"only 10; call compute_rope_params with a larger context_length$",
    ):
        apply_rope(torch.randn(1, 1, 4, 8), cos, sin, offset=8)
    with pytest.raises(
        ValueError,
        match=r"^x must be 4-D \(batch, num_heads, num_tokens, "
        r"head_dim\) with an even head_dim; got shape \(4, 8\)$",
    ):
        apply_rope(torch.randn(4, 8), cos, sin)
    with pytest.raises(
        ValueError,
        match=r"^cos and sin must both be \(num_positions, "
        r"head_dim=6\)",
    ):
        apply_rope(torch.randn(1, 1, 4, 6), cos, sin)
    with pytest.raises(ValueError, match=r"^offset must be an int >= 0; got -1$"):
        apply_rope(torch.randn(1, 1, 4, 8), cos, sin, offset=-1)
    with pytest.raises(TypeError, match=r"^offset must be an int >= 0; got 1.0 \(float\)$"):
        apply_rope(torch.randn(1, 1, 4, 8), cos, sin, offset=1.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^x must have a floating-point dtype"):
        apply_rope(torch.ones(1, 1, 4, 8, dtype=torch.long), cos, sin)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.int64, "float32"])
def test_only_float32_or_float64_positions_are_accepted(dtype):
    # In bfloat16 the positions themselves round: 256 and 257 would get one angle.
    with pytest.raises(TypeError, match=r"^dtype must be torch.float32 or torch.float64; got "):
        compute_rope_params(8, dtype=dtype)


def test_tables_in_float64_when_asked_and_an_infinite_base_is_refused():
    cos, sin = compute_rope_params(8, context_length=4, dtype=torch.float64)
    assert cos.dtype == sin.dtype == torch.float64
    with pytest.raises(ValueError, match=r"^theta_base must be a finite number above 1; got inf$"):
        compute_rope_params(8, theta_base=float("inf"))


def test_cos_and_sin_on_another_device_are_named():
    cos, sin = compute_rope_params(8, context_length=4)
    with pytest.raises(
        ValueError, match=r"^x, cos and sin must be on one device; got x on meta, cos on cpu"
    ):
        apply_rope(torch.empty(1, 1, 4, 8, device="meta"), cos, sin)
