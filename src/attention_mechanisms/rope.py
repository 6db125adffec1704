r"""Rotary position embeddings (RoPE): position as a rotation of queries and keys.

GPT-2 adds a learned position vector to each token embedding before the first layer.
Llama, Qwen, Mistral, Gemma and DeepSeek instead *rotate* each query and key inside every
attention layer, by an angle proportional to its position (Su et al., 2021). A head's
``head_dim`` features are paired, and pair $k$ of the token at position $m$ is rotated by the
angle $m\,\theta_k$, with $\theta_k = \text{theta\_base}^{-2k/d}$, $k = 0, \dots, d/2 - 1$.

Which features form a pair is a convention of the checkpoint. The RoFormer paper and Meta's
reference Llama code pair neighbours, $(2k, 2k + 1)$: the *interleaved* layout. Hugging
Face's code, and the book's bonus code that loads its checkpoints, pair feature $k$ with
feature $k + d/2$: *split halves*, the layout of this module, where

$$
x' = x \cos(m\theta) + \operatorname{rotate\_half}(x) \sin(m\theta), \qquad
\operatorname{rotate\_half}(x) = (-x_{d/2:}, x_{:d/2})
$$

The two compute the same scores once the features of each head's queries and keys (the rows
of ``W_query`` and ``W_key``) are put in the order of :func:`interleaved_to_halves`.

Because a rotation by $m\theta$ followed by the inverse of one by $n\theta$ is a rotation by
$(m - n)\theta$, the score between a query at position $m$ and a key at position $n$
depends on the tokens and on $m - n$ only: attention sees relative positions. Values are
not rotated, and rotations keep each vector's length.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping

import torch
from torch import Tensor

from .checks import check_rope_inputs, check_size
from .rope_scaling import scale_frequencies

__all__ = ["apply_rope", "compute_rope_params", "interleaved_to_halves"]


def compute_rope_params(
    head_dim: int,
    theta_base: float = 10_000,
    context_length: int = 4096,
    freq_config: Mapping[str, float] | None = None,
    dtype: torch.dtype = torch.float32,
) -> tuple[Tensor, Tensor]:
    r"""Cosines and sines of the rotation angles for every position and feature.

    With ``freq_config``, the speeds are first rescaled to reach ``factor`` times the
    context the model was trained on (``original_context_length``), by the method its
    ``rope_type`` names (:mod:`~attention_mechanisms.rope_scaling`). Without a ``rope_type``
    it is Llama 3.1's, as in the book's bonus code: pairs that turn fewer than
    ``low_freq_factor`` times in that context are slowed down by ``factor``; pairs that turn
    more than ``high_freq_factor`` times keep their speed; and the pairs in between are
    blended, linearly in the number of turns.

    Args:
        head_dim: Features per head, $d$; must be even (features rotate in pairs).
        theta_base: Base of the angles; pair $k$ turns by ``theta_base ** (-2k / head_dim)``
            radians per position. Llama 2 uses 10,000; Llama 3 500,000.
        context_length: Number of positions to precompute.
        freq_config: ``None``, or a mapping with the keys ``factor``, ``low_freq_factor``,
            ``high_freq_factor`` and ``original_context_length``, as in the book's bonus
            code (Meta's ``rope_scaling`` for Llama 3.1 8B: 8, 1, 4 and 8192); or with a
            ``rope_type`` of ``"linear"``, ``"ntk"``, ``"yarn"`` or ``"llama3"``, and that
            type's keys.
        dtype: Type of the positions and exponents, as in the book's bonus code:
            ``torch.float32`` or ``torch.float64`` (the speeds $\theta_k$ themselves are
            float32 either way, as there).

    Returns:
        ``(cos, sin)``, each ``(context_length, head_dim)``, float32 (float64 if ``dtype``
        is). Row $m$ holds $\cos(m\theta)$ and $\sin(m\theta)$ with the $d/2$ angles written
        twice, once for each half of the features; for ``"yarn"``, both times its
        temperature.

    Raises:
        TypeError: If a size is not an int, ``theta_base`` or a ``freq_config`` value is not
            a number, ``freq_config`` is not a mapping, or ``dtype`` is not float32 or
            float64.
        ValueError: If a size is not positive, ``head_dim`` is odd, ``theta_base`` is not a
            finite number above 1, or ``freq_config`` lacks a key, has a value that is not
            positive, or a ``high_freq_factor`` not above its ``low_freq_factor``; or names
            an unknown ``rope_type``, or a key that its type does not take.

    Example:
        >>> cos, sin = compute_rope_params(head_dim=4, context_length=3)
        >>> cos
        tensor([[ 1.0000,  1.0000,  1.0000,  1.0000],
                [ 0.5403,  0.9999,  0.5403,  0.9999],
                [-0.4161,  0.9998, -0.4161,  0.9998]])
    """
    head_dim = check_size("head_dim", head_dim)
    context_length = check_size("context_length", context_length)
    if head_dim % 2 != 0:
        raise ValueError(
            f"head_dim must be even: RoPE rotates features in pairs; got head_dim={head_dim}"
        )
    if isinstance(theta_base, bool) or not isinstance(theta_base, numbers.Real):
        raise TypeError(f"theta_base must be a number above 1; got {theta_base!r}")
    if not 1 < theta_base < math.inf:
        raise ValueError(f"theta_base must be a finite number above 1; got {theta_base}")
    if dtype not in (torch.float32, torch.float64):
        raise TypeError(
            f"dtype must be torch.float32 or torch.float64; got {dtype!r}: in a lower precision "
            "the positions themselves are rounded (bfloat16 cannot tell 256 from 257)"
        )
    exponents = torch.arange(0, head_dim, 2, dtype=dtype)[: head_dim // 2].float() / head_dim
    inv_freq = 1.0 / (theta_base**exponents)  # (d/2,): theta_k, radians per position
    temperature = 1.0
    if freq_config is not None:  # slower speeds for a longer context (rope_scaling.py)
        inv_freq, temperature = scale_frequencies(inv_freq, exponents, theta_base, freq_config)
    positions = torch.arange(context_length, dtype=dtype)  # (context_length,)
    angles = positions.unsqueeze(1) * inv_freq.unsqueeze(0)  # (context_length, d/2): m theta_k
    angles = torch.cat([angles, angles], dim=1)  # (context_length, d): one per half
    if temperature != 1.0:  # YaRN: q.k scaled by t^2, as cos and sin both carry t
        return torch.cos(angles) * temperature, torch.sin(angles) * temperature
    return torch.cos(angles), torch.sin(angles)


def interleaved_to_halves(head_dim: int) -> Tensor:
    """The order of a head's features that turns the interleaved layout into split halves.

    A checkpoint written for the interleaved layout (pairs $(2k, 2k + 1)$, as in Meta's
    reference Llama code) gives the same scores with :func:`apply_rope` once each head's
    query and key features are taken in this order: the even features, then the odd ones.
    Index the rows of ``W_query`` and ``W_key`` head by head with it, as Hugging Face's
    conversion script for Llama does; values and ``out_proj`` are not rotated and stay.

    Args:
        head_dim: Features per head; must be even.

    Returns:
        A ``(head_dim,)`` int64 tensor: ``0, 2, ..., head_dim - 2, 1, 3, ..., head_dim - 1``.

    Raises:
        TypeError, ValueError: If ``head_dim`` is not a positive even int.

    Example:
        >>> interleaved_to_halves(6)
        tensor([0, 2, 4, 1, 3, 5])
    """
    head_dim = check_size("head_dim", head_dim)
    if head_dim % 2 != 0:
        raise ValueError(
            f"head_dim must be even: RoPE rotates features in pairs; got head_dim={head_dim}"
        )
    features = torch.arange(head_dim)  # (d,)
    return torch.cat([features[0::2], features[1::2]])  # first of each pair, then second


def apply_rope(x: Tensor, cos: Tensor, sin: Tensor, offset: int = 0) -> Tensor:
    r"""Rotate each pair of features of ``x`` by its position's angle.

    Apply it to queries and keys, after the split into heads **and** the transpose (a
    ``(b, T, h, d)`` tensor passes the shape check but is turned by head instead of by
    position) and before the scores; never to values. With a KV cache the new tokens do not
    start at position 0: pass the position of the first of them as ``offset`` (the classes'
    ``ptr_current_pos``; not the cache's length, which a sliding window keeps short).

    Shape notation:
        - ``b``: batch size; ``h``: heads; ``T``: tokens; ``d``: ``head_dim``
        - ``N``: positions precomputed by ``compute_rope_params``

    Args:
        x: ``(b, h, T, d)``, floating point; ``d`` even.
        cos: ``(N, d)`` from ``compute_rope_params``.
        sin: ``(N, d)`` from ``compute_rope_params``.
        offset: Position of the first token of ``x``; ``offset + T <= N``.

    Returns:
        ``(b, h, T, d)`` in the dtype of ``x``: token ``t`` rotated as position
        ``offset + t``.

    Raises:
        TypeError: If ``x``, ``cos`` or ``sin`` is not a floating-point tensor, or
            ``offset`` is not an int.
        ValueError: If the shapes or devices do not fit, ``offset`` is negative, or the
            positions run past ``N``.

    Example:
        >>> cos, sin = compute_rope_params(head_dim=2, context_length=4)
        >>> x = torch.tensor([1.0, 0.0]).expand(1, 1, 4, 2)  # one vector at positions 0-3
        >>> apply_rope(x, cos, sin)[0, 0]  # turned by 0, 1, 2, 3 radians
        tensor([[ 1.0000,  0.0000],
                [ 0.5403,  0.8415],
                [-0.4161,  0.9093],
                [-0.9900,  0.1411]])
    """
    num_tokens, head_dim = check_rope_inputs(x, cos, sin, offset)
    x1 = x[..., : head_dim // 2]  # (b, h, T, d/2): first feature of each pair
    x2 = x[..., head_dim // 2 :]  # (b, h, T, d/2): second feature of each pair
    cos = cos[offset : offset + num_tokens, :].unsqueeze(0).unsqueeze(0)  # (1, 1, T, d)
    sin = sin[offset : offset + num_tokens, :].unsqueeze(0).unsqueeze(0)  # (1, 1, T, d)
    rotated = torch.cat((-x2, x1), dim=-1)  # (b, h, T, d): rotate_half(x)
    x_rotated = (x * cos) + (rotated * sin)
    return x_rotated.to(dtype=x.dtype)
