r"""RoPE beyond its training length: the speeds of the pairs, rescaled four ways.

A model trained on ``original_context_length`` positions has never seen the angles that
its slow pairs reach beyond them. Each method below changes the speeds $\theta_k$ so that
``factor`` times that context stays within what training covered, keyed by ``rope_type``
in ``freq_config`` (:func:`~attention_mechanisms.rope.compute_rope_params`):

- ``"linear"``, Position Interpolation (Chen et al., 2023): every pair slowed by ``factor``.
- ``"ntk"``, the NTK-aware base change (bloc97, 2023): ``theta_base`` times
  $\text{factor}^{d/(d-2)}$, so the fastest pair keeps its speed and the slowest is slowed
  by ``factor``.
- ``"yarn"``, YaRN (Peng et al., 2023), "NTK-by-parts": pairs that turn more than
  ``beta_fast`` times in the original context keep their speed, pairs that turn fewer than
  ``beta_slow`` times are slowed by ``factor``, a linear ramp over the pairs between (their
  indices rounded outwards, as Hugging Face's ``truncate``); and the attention logits are
  scaled by $t = 0.1 \ln(\text{factor}) + 1$, here by multiplying cos and sin by $t$.
- ``"llama3"`` (Llama 3 paper, section 3.4.2; Meta's code): by-parts too, with its bounds in
  turns as ``low_freq_factor`` and ``high_freq_factor``, blended linearly in the
  wavelength's inverse, without a temperature. A ``freq_config`` without ``rope_type`` is
  this one, as in the book's bonus code.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping

import torch
from torch import Tensor

from .checks import check_freq_config

__all__ = ["ROPE_TYPES", "scale_frequencies"]

Config = Mapping[str, float]
_Scaler = Callable[[Tensor, Tensor, float, Config], Tensor]


def _linear(inv_freq: Tensor, exponents: Tensor, theta_base: float, c: Config) -> Tensor:
    slowed: Tensor = inv_freq / c["factor"]  # every pair: positions squeezed into the old range
    return slowed


def _ntk(inv_freq: Tensor, exponents: Tensor, theta_base: float, c: Config) -> Tensor:
    head_dim = 2 * exponents.numel()
    if head_dim == 2:
        raise ValueError("rope_type 'ntk' needs a head_dim above 2 (one pair); got 2")
    base = theta_base * c["factor"] ** (head_dim / (head_dim - 2))  # the slowest pair / factor
    inv: Tensor = 1.0 / (base**exponents)
    return inv


def _yarn(inv_freq: Tensor, exponents: Tensor, theta_base: float, c: Config) -> Tensor:
    head_dim, original = 2 * exponents.numel(), c["original_context_length"]

    def pair_turning(turns: float) -> float:  # the pair k that turns `turns` times in context
        return head_dim * math.log(original / (turns * 2 * math.pi)) / (2 * math.log(theta_base))

    low = max(math.floor(pair_turning(c["beta_fast"])), 0)  # pairs up to here keep their speed
    high: float = min(math.ceil(pair_turning(c["beta_slow"])), head_dim - 1)  # from here: / factor
    high = high if high != low else high + 0.001  # as Hugging Face: no division by zero
    ramp = ((torch.arange(exponents.numel()) - low) / (high - low)).clamp(0, 1)  # (d/2,)
    blended: Tensor = inv_freq / c["factor"] * ramp + inv_freq * (1 - ramp)
    return blended


def _llama3(inv_freq: Tensor, exponents: Tensor, theta_base: float, c: Config) -> Tensor:
    factor, original = c["factor"], c["original_context_length"]
    low, high = c["low_freq_factor"], c["high_freq_factor"]
    low_freq_wavelen = original / low  # pairs slower than this are slowed by `factor`
    high_freq_wavelen = original / high  # pairs faster than this keep their speed
    wavelen = 2 * torch.pi / inv_freq  # (d/2,): positions per full turn
    inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth_factor = (original / wavelen - low) / (high - low)  # 0 at low turns, 1 at high
    smoothed_inv_freq = (1 - smooth_factor) * (inv_freq / factor) + smooth_factor * inv_freq
    is_medium_freq = (wavelen <= low_freq_wavelen) & (wavelen >= high_freq_wavelen)
    return torch.where(is_medium_freq, smoothed_inv_freq, inv_freq_llama)


_COMMON: dict[str, float | None] = {"factor": None, "original_context_length": None}
ROPE_TYPES: dict[str, tuple[_Scaler, dict[str, float | None]]] = {
    "linear": (_linear, _COMMON),
    "ntk": (_ntk, _COMMON),
    "yarn": (_yarn, {**_COMMON, "beta_fast": 32, "beta_slow": 1}),
    "llama3": (_llama3, {**_COMMON, "low_freq_factor": None, "high_freq_factor": None}),
}
"""Each ``rope_type``: the function of its speeds, and its keys (``None``: no default)."""


def _config(freq_config: object) -> tuple[str, Mapping[str, float]]:
    """``freq_config``'s type and its numbers, defaults filled in, or a clear error."""
    if not isinstance(freq_config, Mapping) or "rope_type" not in freq_config:
        return "llama3", check_freq_config(freq_config)  # as the book's bonus code
    rope_type = freq_config["rope_type"]
    if rope_type not in ROPE_TYPES:
        raise ValueError(
            f"freq_config['rope_type'] must be one of {', '.join(map(repr, ROPE_TYPES))}; "
            f"got {rope_type!r}"
        )
    keys = ROPE_TYPES[rope_type][1]
    if missing := [key for key, value in keys.items() if value is None and key not in freq_config]:
        raise ValueError(
            f"freq_config lacks {', '.join(missing)}; rope_type {rope_type!r} needs "
            f"{', '.join(keys)} (Hugging Face calls original_context_length "
            "original_max_position_embeddings)"
        )
    if unknown := sorted(set(freq_config) - set(keys) - {"rope_type"}):
        raise ValueError(
            f"freq_config for rope_type {rope_type!r} takes {', '.join(keys)}; "
            f"got also {', '.join(map(str, unknown))}"
        )
    numbers_ = {key: freq_config.get(key, default) for key, default in keys.items()}
    for key, value in numbers_.items():
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"freq_config[{key!r}] must be a number; got {value!r}")
        if not 0 < float(value) < math.inf:
            raise ValueError(f"freq_config[{key!r}] must be positive and finite; got {value}")
    if rope_type == "llama3":
        check_freq_config(numbers_)  # its two factors in order
    return rope_type, numbers_


def scale_frequencies(
    inv_freq: Tensor, exponents: Tensor, theta_base: float, freq_config: object
) -> tuple[Tensor, float]:
    """The speeds that ``freq_config`` asks for, and the factor for cos and sin (YaRN's $t$).

    Args:
        inv_freq: ``(d/2,)``, the speeds ``theta_base ** -exponents``.
        exponents: ``(d/2,)``, $2k / d$.
        theta_base: The base the speeds were computed with.
        freq_config: A mapping with a ``rope_type`` and its keys (`ROPE_TYPES`), or without
            ``rope_type`` the four keys of Llama 3.

    Returns:
        ``(inv_freq, temperature)``: the rescaled speeds and 1, or YaRN's $t$.
    """
    rope_type, config = _config(freq_config)
    temperature = 1.0
    if rope_type == "yarn" and config["factor"] > 1:
        temperature = 0.1 * math.log(config["factor"]) + 1.0
    return ROPE_TYPES[rope_type][0](inv_freq, exponents, theta_base, config), temperature
