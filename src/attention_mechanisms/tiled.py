r"""Attention block by block with an online softmax: FlashAttention's algorithm, in PyTorch.

Plain attention computes the whole score matrix $S = Q K^\top$ ($T \times T$), then the
softmax, then $P V$. Its memory grows with $T^2$. FlashAttention (Dao et al., 2022) gets
the same result, to rounding, while holding only one small block of scores at a time. The
trick is an **online softmax**: for each query row keep three running quantities over the
key blocks seen so far,

- $m$, the largest score so far,
- $\ell = \sum_j e^{s_j - m}$, the softmax denominator relative to $m$,
- $o = \sum_j e^{s_j - m} v_j$, the unnormalised output,

and when a new block of scores $s^{(b)}$ arrives,

$$
m' = \max\big(m, \max_j s^{(b)}_j\big), \qquad
\ell' = e^{m - m'} \ell + \sum_j e^{s^{(b)}_j - m'}, \qquad
o' = e^{m - m'} o + \sum_j e^{s^{(b)}_j - m'} v^{(b)}_j .
$$

The factor $e^{m - m'}$ rescales what was accumulated under the old maximum. After the last
block, $o / \ell$ is $\operatorname{softmax}(s) V$: exactly in exact arithmetic, to rounding
in floating point. This module is for reading, not speed: Python loops over blocks are slow,
and the real kernels fuse all of it on the chip.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .checks import check_qkv, check_size

__all__ = ["tiled_attention"]


def tiled_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    *,
    causal: bool = False,
    block_size: int = 64,
    scale: float | None = None,
) -> Tensor:
    r"""Scaled dot-product attention computed one block of keys at a time.

    Equal to ``scaled_dot_product_attention(query, key, value, causal=causal)[0]`` up to
    rounding, but no tensor larger than ``block_size x block_size`` scores per head is ever
    created. With ``causal=True`` the queries are the last ``L`` of the ``S`` positions
    (as in [causal_mask][attention_mechanisms.functional.causal_mask]), and key blocks that
    lie entirely in a query block's future are skipped, which, with as many queries as keys,
    about halves the work.

    Shape notation:
        - ``...``: leading dimensions (batch, heads), the same for all three inputs
        - ``L``: number of queries; ``S``: number of keys and values

    Args:
        query: ``(..., L, d_k)``.
        key: ``(..., S, d_k)``.
        value: ``(..., S, d_v)``.
        causal: Hide from each query the keys after its position.
        block_size: Number of queries and of keys per block.
        scale: Factor applied to the scores; defaults to ``1 / sqrt(d_k)``.

    Returns:
        ``(..., L, d_v)``.

    Raises:
        TypeError: If an input is not a floating-point tensor or the dtypes differ.
        ValueError: If the shapes do not fit together, or ``block_size`` is not positive.

    Example:
        >>> q, k, v = torch.randn(3, 1, 10, 4).unbind(0)
        >>> reference = torch.softmax(q @ k.mT / 2, dim=-1) @ v
        >>> torch.allclose(tiled_attention(q, k, v, block_size=3), reference, atol=1e-6)
        True
    """
    check_qkv(query, key, value)
    if not query.shape[:-2] == key.shape[:-2] == value.shape[:-2]:
        raise ValueError(
            "query, key and value must have the same leading dimensions; got "
            f"{tuple(query.shape)}, {tuple(key.shape)}, {tuple(value.shape)}"
        )
    block_size = check_size("block_size", block_size)
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1])

    num_queries, num_keys = query.shape[-2], key.shape[-2]
    offset = num_keys - num_queries  # query i sits at absolute position offset + i
    out = torch.empty(*query.shape[:-1], value.shape[-1], dtype=query.dtype, device=query.device)

    for q_start in range(0, num_queries, block_size):
        q = query[..., q_start : q_start + block_size, :] * scale  # (..., Bq, d_k)
        q_pos = offset + torch.arange(q_start, q_start + q.shape[-2], device=query.device)
        m = torch.full(q.shape[:-1], -math.inf, dtype=query.dtype, device=query.device)
        ell = torch.zeros_like(m)  # (..., Bq)
        o = torch.zeros(*q.shape[:-1], value.shape[-1], dtype=query.dtype, device=query.device)

        last_key = num_keys if not causal else min(num_keys, int(q_pos[-1]) + 1)
        for k_start in range(0, last_key, block_size):
            k = key[..., k_start : k_start + block_size, :]  # (..., Bk, d_k)
            v = value[..., k_start : k_start + block_size, :]  # (..., Bk, d_v)
            s = q @ k.transpose(-2, -1)  # (..., Bq, Bk): the only scores ever held
            if causal:
                k_pos = torch.arange(k_start, k_start + k.shape[-2], device=query.device)
                s = s.masked_fill(k_pos > q_pos[:, None], -math.inf)

            m_new = torch.maximum(m, s.amax(dim=-1))  # running maximum
            # A row that has seen only hidden keys has m_new = -inf; keep its sums at 0.
            m_safe = torch.where(torch.isinf(m_new), torch.zeros_like(m_new), m_new)
            p = torch.exp(s - m_safe[..., None])  # (..., Bq, Bk)
            rescale = torch.exp(m - m_safe)  # e^(m - m'): shrink what came before
            ell = rescale * ell + p.sum(dim=-1)
            o = rescale[..., None] * o + p @ v
            m = m_new

        # A row that saw a key has ell >= 1 (its largest score adds e^0). A row that saw none
        # (only possible with causal and L > S) has o = 0 and ell = 0: dividing by 1 keeps it
        # 0 in every dtype, where a tiny clamp like 1e-30 rounds to 0 in float16 and gives NaN.
        out[..., q_start : q_start + q.shape[-2], :] = o / ell.clamp_min(1.0)[..., None]
    return out
