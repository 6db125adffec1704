"""RoPE beyond its training length: each rope_type against its formula and Hugging Face's code."""

from __future__ import annotations

import math

import pytest
import torch
from transformers import LlamaConfig
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

from attention_mechanisms import compute_rope_params

SIZES = [(64, 10_000.0), (128, 500_000.0), (32, 1_000_000.0)]


def speeds(head_dim: int, theta_base: float, freq_config: dict | None = None) -> torch.Tensor:
    """The speeds theta_k behind compute_rope_params, read from its cos at position 1."""
    cos, sin = compute_rope_params(
        head_dim, theta_base, 2, freq_config=freq_config, dtype=torch.float64
    )
    return torch.atan2(sin[1], cos[1])[: head_dim // 2]  # the angle at position 1 is theta_k


def plain(head_dim: int, theta_base: float) -> torch.Tensor:
    return theta_base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)


def hugging_face(rope_type: str, head_dim: int, theta_base: float, config: dict):
    """Hugging Face transformers' speeds and attention factor for the same configuration."""
    parameters = {"rope_type": rope_type, "rope_theta": theta_base, "factor": config["factor"]}
    parameters["original_max_position_embeddings"] = config["original_context_length"]
    parameters |= {
        k: v for k, v in config.items() if k not in ("factor", "original_context_length")
    }
    hf_config = LlamaConfig(
        hidden_size=head_dim * 2,
        num_attention_heads=2,
        head_dim=head_dim,
        max_position_embeddings=int(config["factor"] * config["original_context_length"]),
        rope_parameters=parameters,
    )
    inv_freq, attention_factor = ROPE_INIT_FUNCTIONS[rope_type](hf_config, "cpu")
    return inv_freq.double(), attention_factor


@pytest.mark.parametrize(("head_dim", "theta_base"), SIZES)
@pytest.mark.parametrize("factor", [2.0, 8.0, 32.0])
def test_linear_slows_every_pair_by_the_factor(head_dim, theta_base, factor):
    config = {"rope_type": "linear", "factor": factor, "original_context_length": 4096}
    got = speeds(head_dim, theta_base, config)
    torch.testing.assert_close(got, plain(head_dim, theta_base) / factor, rtol=1e-6, atol=0)
    hf, attention_factor = hugging_face("linear", head_dim, theta_base, config)
    torch.testing.assert_close(got, hf, rtol=1e-6, atol=0)
    assert attention_factor == 1.0


@pytest.mark.parametrize(("head_dim", "theta_base"), SIZES)
@pytest.mark.parametrize("factor", [2.0, 8.0, 32.0])
def test_ntk_changes_the_base_so_the_slowest_pair_is_slowed_by_the_factor(
    head_dim, theta_base, factor
):
    config = {"rope_type": "ntk", "factor": factor, "original_context_length": 4096}
    got = speeds(head_dim, theta_base, config)
    new_base = theta_base * factor ** (head_dim / (head_dim - 2))
    torch.testing.assert_close(got, plain(head_dim, new_base), rtol=1e-6, atol=0)
    assert got[0] == 1.0  # the fastest pair keeps its speed
    slowest = plain(head_dim, theta_base)[-1] / factor
    assert math.isclose(got[-1], slowest, rel_tol=1e-6)


def yarn_formula(head_dim, theta_base, factor, original, beta_fast, beta_slow):
    """YaRN's "NTK-by-parts" (Peng et al., 2023, section 3.2), written from the paper."""
    k = torch.arange(head_dim // 2, dtype=torch.float64)
    theta = plain(head_dim, theta_base)
    turns = original * theta / (2 * math.pi)  # r(d): how often pair k turns in the context

    def pair(r):  # the pair that turns r times, rounded outwards as Hugging Face's truncate
        return head_dim * math.log(original / (2 * math.pi * r)) / (2 * math.log(theta_base))

    low, high = max(math.floor(pair(beta_fast)), 0), min(math.ceil(pair(beta_slow)), head_dim - 1)
    ramp = ((k - low) / (high - low)).clamp(0, 1)  # 0: keep its speed, 1: slowed by factor
    assert torch.all(ramp[turns > beta_fast] == 0) and torch.all(ramp[turns < beta_slow] == 1)
    return (1 - ramp) * theta + ramp * theta / factor


@pytest.mark.parametrize(("head_dim", "theta_base"), SIZES)
@pytest.mark.parametrize(
    ("factor", "original", "fast", "slow"),
    [(4.0, 4096, 32, 1), (8.0, 2048, 32, 1), (40.0, 4096, 32, 1), (16.0, 8192, 64, 2)],
)
def test_yarn_blends_by_parts_and_scales_cos_and_sin_by_its_temperature(
    head_dim, theta_base, factor, original, fast, slow
):
    config = {"rope_type": "yarn", "factor": factor, "original_context_length": original}
    if (fast, slow) != (32, 1):
        config |= {"beta_fast": fast, "beta_slow": slow}
    got = speeds(head_dim, theta_base, config)
    expected = yarn_formula(head_dim, theta_base, factor, original, fast, slow)
    torch.testing.assert_close(got, expected, rtol=1e-6, atol=0)
    hf, attention_factor = hugging_face("yarn", head_dim, theta_base, config)
    torch.testing.assert_close(got, hf, rtol=1e-6, atol=0)
    cos, sin = compute_rope_params(head_dim, theta_base, 9, freq_config=config)
    temperature = 0.1 * math.log(factor) + 1
    assert math.isclose(attention_factor, temperature)
    assert torch.allclose(cos.square() + sin.square(), torch.tensor(temperature**2), rtol=1e-6)


LLAMA3 = {
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_context_length": 8192,
}


@pytest.mark.parametrize(("head_dim", "theta_base"), SIZES)
def test_llama3_by_name_is_the_bonus_codes_and_hugging_faces(head_dim, theta_base):
    without_type = compute_rope_params(head_dim, theta_base, 64, LLAMA3)
    with_type = compute_rope_params(head_dim, theta_base, 64, {"rope_type": "llama3", **LLAMA3})
    for a, b in zip(without_type, with_type, strict=True):
        assert torch.equal(a, b)  # the same bits
    hf, attention_factor = hugging_face("llama3", head_dim, theta_base, LLAMA3)
    torch.testing.assert_close(speeds(head_dim, theta_base, LLAMA3), hf, rtol=1e-6, atol=0)
    assert attention_factor == 1.0


def test_without_freq_config_nothing_changes():
    torch.testing.assert_close(speeds(64, 10_000.0), plain(64, 10_000.0), rtol=1e-7, atol=0)


@pytest.mark.parametrize(
    ("config", "error", "message"),
    [
        ({"rope_type": "dynamic", "factor": 2.0}, ValueError,
         r"^freq_config\['rope_type'\] must be one of 'linear', 'ntk', 'yarn', 'llama3'; "
         r"got 'dynamic'$"),
        ({"rope_type": "yarn", "factor": 2.0}, ValueError,
         r"^freq_config lacks original_context_length; rope_type 'yarn' needs factor, "),
        ({"rope_type": "ntk", "factor": 2.0, "original_context_length": 4096, "beta_fast": 32},
         ValueError, r"^freq_config for rope_type 'ntk' takes factor, original_context_length; "
         r"got also beta_fast$"),
        ({"rope_type": "yarn", "factor": 2.0, "original_context_length": 4096, "beta_slow": "1"},
         TypeError, r"^freq_config\['beta_slow'\] must be a number; got '1'$"),
        ({"rope_type": "linear", "factor": -2.0, "original_context_length": 4096}, ValueError,
         r"^freq_config\['factor'\] must be positive and finite; got -2.0$"),
        ({"rope_type": "llama3", **LLAMA3, "high_freq_factor": 0.5}, ValueError,
         r"^freq_config\['high_freq_factor'\] must be above"),
    ],
)  # fmt: skip
def test_a_bad_rope_type_or_key_is_named(config, error, message):
    with pytest.raises(error, match=message):
        compute_rope_params(64, 10_000, 8, config)


def test_ntk_with_a_single_pair_is_refused_by_name():
    config = {"rope_type": "ntk", "factor": 2.0, "original_context_length": 4096}
    with pytest.raises(ValueError, match=r"^rope_type 'ntk' needs a head_dim above 2"):
        compute_rope_params(2, 10_000, 8, config)
