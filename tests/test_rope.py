"""Rotary position embeddings: relative positions, lengths kept, offsets with a cache."""

from __future__ import annotations

import math

import pytest
import torch

from attention_mechanisms import apply_rope, compute_rope_params, interleaved_to_halves


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


FREQ_KEYS = ("factor", "low_freq_factor", "high_freq_factor", "original_context_length")
LLAMA31 = dict(zip(FREQ_KEYS, (8.0, 1.0, 4.0, 8192), strict=True))  # Meta's rope_scaling


def llama3_scaled_speeds(head_dim: int, theta_base: float, config: dict) -> list[float]:
    """Meta's rule for Llama 3.1, one speed at a time, in Python floats."""
    original = config["original_context_length"]
    low, high, factor = config["low_freq_factor"], config["high_freq_factor"], config["factor"]
    speeds = []
    for k in range(head_dim // 2):
        speed = theta_base ** (-2 * k / head_dim)
        turn = 2 * math.pi / speed  # positions per full turn
        if turn < original / high:
            speeds.append(speed)
        elif turn > original / low:
            speeds.append(speed / factor)
        else:
            blend = (original / turn - low) / (high - low)
            speeds.append((1 - blend) * speed / factor + blend * speed)
    return speeds


@pytest.mark.parametrize(
    ("head_dim", "theta_base", "config"),
    [
        (128, 500_000, LLAMA31),
        (64, 500_000, {**LLAMA31, "factor": 32.0}),  # Llama 3.2 1B and 3B
        (16, 10_000, dict(zip(FREQ_KEYS, (4, 2, 8, 512), strict=True))),
    ],
)
def test_freq_config_rescales_the_speeds_as_llama_3_1_does(head_dim, theta_base, config):
    cos, sin = compute_rope_params(head_dim, theta_base, 3, config, torch.float64)
    speeds = torch.atan2(sin[1, : head_dim // 2], cos[1, : head_dim // 2])
    expected = torch.tensor(llama3_scaled_speeds(head_dim, theta_base, config), dtype=torch.float64)
    torch.testing.assert_close(speeds, expected, rtol=1e-6, atol=0)  # the speeds are float32
    plain_cos, plain_sin = compute_rope_params(head_dim, theta_base, 3, None, torch.float64)
    plain = torch.atan2(plain_sin[1, : head_dim // 2], plain_cos[1, : head_dim // 2])
    assert torch.equal(speeds[0], plain[0])  # the fastest pair keeps its speed
    assert speeds[-1] < plain[-1]  # the slowest is slowed down


def test_freq_config_comes_before_dtype_as_in_the_bonus_code():
    cos, _ = compute_rope_params(8, 10_000, 5, None, torch.float64)
    assert cos.shape == (5, 8) and cos.dtype == torch.float64
    cos, _ = compute_rope_params(8, 10_000, 5, LLAMA31, torch.float64)
    assert cos.dtype == torch.float64


@pytest.mark.parametrize(
    ("config", "error", "message"),
    [
        ([8.0, 1.0, 4.0, 8192], TypeError, r"^freq_config must be None or a dict with the keys "),
        ({**LLAMA31, "original_context_length": None}, TypeError,
         r"^freq_config\['original_context_length'\] must be a number; got None$"),
        ({k: v for k, v in LLAMA31.items() if k != "factor"}, ValueError,
         r"^freq_config lacks factor; it needs factor, low_freq_factor"),
        ({"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
          "original_max_position_embeddings": 8192}, ValueError,
         r"^freq_config lacks original_context_length; .*original_max_position_embeddings\)$"),
        ({**LLAMA31, "factor": 0}, ValueError,
         r"^freq_config\['factor'\] must be positive and finite; got 0$"),
        ({**LLAMA31, "high_freq_factor": 1.0}, ValueError,
         r"^freq_config\['high_freq_factor'\] must be above freq_config\['low_freq_factor'\]"),
    ],
)  # fmt: skip
def test_a_bad_freq_config_is_named(config, error, message):
    with pytest.raises(error, match=message):
        compute_rope_params(128, 500_000, 16, config)


def rotate_adjacent_pairs(x: torch.Tensor, theta_base: float = 10_000) -> torch.Tensor:
    """The RoFormer paper's layout: pair k is features (2k, 2k + 1), a complex number."""
    num_tokens, d = x.shape[-2], x.shape[-1]
    theta = theta_base ** (-torch.arange(d // 2, dtype=torch.float64) * 2 / d)
    angles = torch.arange(num_tokens, dtype=torch.float64)[:, None] * theta  # (T, d/2)
    z = torch.view_as_complex(x.reshape(*x.shape[:-1], d // 2, 2).contiguous())
    return torch.view_as_real(z * torch.polar(torch.ones_like(angles), angles)).flatten(-2)


def test_interleaved_to_halves_lists_even_features_then_odd_ones():
    assert interleaved_to_halves(8).tolist() == [0, 2, 4, 6, 1, 3, 5, 7]
    assert interleaved_to_halves(2).tolist() == [0, 1]
    with pytest.raises(ValueError, match=r"^head_dim must be even: RoPE rotates features in "):
        interleaved_to_halves(5)


def test_interleaved_weights_give_the_same_scores_after_the_permutation():
    torch.manual_seed(6)
    num_heads, head_dim, num_tokens = 3, 8, 12
    w_query = torch.randn(num_heads * head_dim, 16, dtype=torch.float64)  # interleaved rows
    w_key = torch.randn(num_heads * head_dim, 16, dtype=torch.float64)
    x = torch.randn(num_tokens, 16, dtype=torch.float64)

    def heads(w: torch.Tensor) -> torch.Tensor:
        return (x @ w.T).view(num_tokens, num_heads, head_dim).transpose(0, 1).unsqueeze(0)

    q, k = rotate_adjacent_pairs(heads(w_query)), rotate_adjacent_pairs(heads(w_key))
    expected = q @ k.transpose(-2, -1)  # (1, h, T, T): the checkpoint's own scores

    order = interleaved_to_halves(head_dim)

    def permuted(w: torch.Tensor) -> torch.Tensor:  # head by head, as Hugging Face converts
        return w.view(num_heads, head_dim, -1)[:, order].reshape_as(w)

    cos, sin = compute_rope_params(head_dim, context_length=num_tokens, dtype=torch.float64)
    q2 = apply_rope(heads(permuted(w_query)), cos, sin)
    k2 = apply_rope(heads(permuted(w_key)), cos, sin)
    torch.testing.assert_close(q2 @ k2.transpose(-2, -1), expected)
    # Loaded without the permutation, the same weights give other scores.
    q3, k3 = apply_rope(heads(w_query), cos, sin), apply_rope(heads(w_key), cos, sin)
    assert not torch.allclose(q3 @ k3.transpose(-2, -1), expected, atol=1e-3)
