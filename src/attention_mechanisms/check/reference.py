"""The book's computation for each role, with a learner's weights, and variants of it.

`book_forward` computes what the package's class for a role computes, from that class's
weights (copied from the learner's module), with one aspect changed on request: how the
scores are scaled, which dimension the softmax normalises, whether the mask hides the
future, whether it also hides the diagonal, and whether the output projection is applied.
A learner's output that equals one variant shows which aspect of their code differs.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from .. import (
    CausalAttention,
    MultiHeadAttention,
    MultiHeadAttentionWrapper,
    SelfAttention_v1,
    SelfAttention_v2,
)

REFERENCE = {
    "SelfAttention_v1": SelfAttention_v1,
    "SelfAttention_v2": SelfAttention_v2,
    "CausalAttention": CausalAttention,
    "MultiHeadAttentionWrapper": MultiHeadAttentionWrapper,
    "MultiHeadAttention": MultiHeadAttention,
}


@dataclass(frozen=True)
class Variant:
    """One way of computing attention; the default is the book's."""

    scale: str = "sqrt_d_k"  # or "d_k" (no square root), "sqrt_d_out" (all heads), "none"
    softmax_dim: int = -1  # -2 normalises over the queries
    mask: str = "hide_future"  # or "none", "hide_diagonal_too"
    out_proj: bool = True
    heads: str = "slices"  # or "interleaved": head h takes every h-th column, not a slice
    fill: float = float("-inf")  # what hidden scores become (-1e9 differs when a row is all hidden)


BOOK = Variant()
# Each differs from the book in one aspect, named by the check it fails.
VARIANTS = {
    "scale": [Variant(scale="none"), Variant(scale="d_k"), Variant(scale="sqrt_d_out")],
    "softmax_dim": [Variant(softmax_dim=-2)],
    "causal": [Variant(mask="none")],
    "diagonal": [Variant(mask="hide_diagonal_too"), Variant(mask="hide_diagonal_too", fill=-1e9)],
    "out_proj": [Variant(out_proj=False)],
    "heads": [Variant(heads="interleaved")],
}


def projections(module: nn.Module) -> list[Tensor]:
    """The module's projection weights in creation order, as ``(d_in, d_out)`` matrices.

    ``nn.Linear`` layers anywhere in the module (their weight transposed), or, if it has
    none, the 2-D parameters it holds itself (as ``SelfAttention_v1``'s ``W_query``).
    """
    linears = [m for m in module.modules() if isinstance(m, nn.Linear)]
    if linears:
        return [linear.weight.T for linear in linears]
    return [p for p in module.parameters(recurse=False) if p.dim() == 2]


def biases(module: nn.Module) -> list[Tensor | None]:
    return [m.bias for m in module.modules() if isinstance(m, nn.Linear)]


def _attend(
    q: Tensor, k: Tensor, v: Tensor, variant: Variant, causal: bool, dropout: nn.Module | None
) -> Tensor:
    scores = q @ k.mT
    d_k = k.shape[-1]
    d_out = d_k * q.shape[-3] if q.dim() == 4 else d_k  # (b, heads, t, head_dim): all heads
    divisor = {"sqrt_d_k": d_k**0.5, "d_k": d_k, "sqrt_d_out": d_out**0.5, "none": 1.0}[
        variant.scale
    ]
    if causal and variant.mask != "none":
        n = scores.shape[-1]
        offset = 0 if variant.mask == "hide_diagonal_too" else 1
        hide = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=offset)
        scores = scores.masked_fill(hide, variant.fill)
    weights = torch.softmax(scores / divisor, dim=variant.softmax_dim)
    if dropout is not None:
        weights = dropout(weights)
    return weights @ v


@torch.no_grad()
def book_forward(
    reference: nn.Module,
    role: str,
    x: Tensor,
    variant: Variant = BOOK,
    dropout: nn.Module | None = None,
) -> Tensor:
    """What the package's ``reference`` (holding the learner's weights) computes for ``x``
    with ``variant``'s one change, and ``dropout`` on the attention weights if given (one
    call per head of the wrapper, one in all otherwise, as the book's classes draw)."""
    weights = projections(reference)
    bias = biases(reference) or [None] * len(weights)

    def project(index: int) -> Tensor:
        out = x @ weights[index]
        return out if bias[index] is None else out + bias[index]

    if role in ("SelfAttention_v1", "SelfAttention_v2", "CausalAttention"):
        causal = role == "CausalAttention"
        return _attend(project(0), project(1), project(2), variant, causal, dropout)
    if role == "MultiHeadAttentionWrapper":
        heads = [
            _attend(project(3 * h), project(3 * h + 1), project(3 * h + 2), variant, True, dropout)
            for h in range(len(weights) // 3)
        ]
        return torch.cat(heads, dim=-1)
    # MultiHeadAttention: split the projections into heads, attend, join, project.
    b, t, _ = x.shape
    h = reference.num_heads
    if variant.heads == "interleaved":
        split = [project(i).view(b, t, -1, h).permute(0, 3, 1, 2) for i in range(3)]
        context = _attend(*split, variant, True, dropout).permute(0, 2, 3, 1).reshape(b, t, -1)
    else:
        split = [project(i).view(b, t, h, -1).transpose(1, 2) for i in range(3)]  # (b, h, t, hd)
        context = _attend(*split, variant, True, dropout).transpose(1, 2).reshape(b, t, -1)
    if not variant.out_proj:
        return context
    return context @ weights[3] + (bias[3] if bias[3] is not None else 0)
