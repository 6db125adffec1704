"""The book's computation for each role, from a learner's weights, and variants of it.

`book_forward` computes what the package's class for a role computes (a test holds the two
equal), from the learner's weights read as the book's roles (a `weights.Mapping`), with one
aspect changed on request (a `Variant`). A learner's output that equals one variant shows
which aspect of their code differs from the book, and so which check fails.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from .weights import Mapping


@dataclass(frozen=True)
class Variant:
    """One way of computing attention; the default is the book's."""

    # "none", "d_k", "sqrt_d_out" (all heads), "sqrt_d_in", "sqrt_tokens", "after_softmax"
    scale: str = "sqrt_d_k"
    softmax_dim: int = -1  # -2 normalises over the queries
    # "hide_future"; "none"; "hide_diagonal_too"; "future_only" (the hide mask read as a keep
    # mask); "added" (the 0/1 mask added to the scores); "multiplied" (the weights of a
    # softmax over every key, multiplied by a 0/1 keep mask: rows no longer sum to 1)
    mask: str = "hide_future"
    fill: float = float("-inf")  # what hidden scores become (-1e9 differs on an all-hidden row)
    out_proj: bool = True
    # "slices"; "interleaved" (head h takes every h-th column); "no_transpose" (view(b, h, t,
    # hd) on the way in and view(b, t, d) on the way out); "no_transpose_in" (then transposed
    # back); "no_transpose_out" (split right, joined with view(b, t, d) and no transpose)
    heads: str = "slices"
    divisor: float = 0.0  # with scale="measured": what the scores are divided by

    @property
    def rows_ignored(self) -> bool:
        """Whether the last token's row is left out of the comparison: with ``future_only``
        it sees no key at all, and what that gives (NaN, 0) depends on the code."""
        return self.mask == "future_only"


BOOK = Variant()
# Each differs from the book in one aspect, listed under the check it fails.
VARIANTS: dict[str, list[Variant]] = {
    "scale": [
        Variant(scale="none"),
        Variant(scale="d_k"),
        Variant(scale="sqrt_d_out"),
        Variant(scale="sqrt_d_in"),
        Variant(scale="sqrt_tokens"),
        Variant(scale="after_softmax"),
    ],
    "softmax_dim": [Variant(softmax_dim=-2)],
    "causal": [Variant(mask="none"), Variant(mask="future_only"), Variant(mask="added")],
    "diagonal": [Variant(mask="hide_diagonal_too"), Variant(mask="hide_diagonal_too", fill=-1e9)],
    "weights_sum": [Variant(mask="multiplied")],
    "heads": [
        Variant(heads="interleaved"),
        Variant(heads="no_transpose"),
        Variant(heads="no_transpose_in"),
        Variant(heads="no_transpose_out"),
    ],
    "out_proj": [Variant(out_proj=False)],
}
# What the scores are divided by, from the key size, all heads' size, the input's size and
# the number of tokens.
_DIVISORS: dict[str, Callable[[int, int, int, int], float]] = {
    "sqrt_d_k": lambda d_k, d_out, d_in, n: d_k**0.5,
    "d_k": lambda d_k, d_out, d_in, n: float(d_k),
    "sqrt_d_out": lambda d_k, d_out, d_in, n: d_out**0.5,
    "sqrt_d_in": lambda d_k, d_out, d_in, n: d_in**0.5,
    "sqrt_tokens": lambda d_k, d_out, d_in, n: n**0.5,
    "none": lambda d_k, d_out, d_in, n: 1.0,
    "after_softmax": lambda d_k, d_out, d_in, n: 1.0,
    "measured": lambda d_k, d_out, d_in, n: 1.0,  # the variant's own divisor instead
}


def _masked(scores: Tensor, variant: Variant) -> Tensor:
    """The scores with the variant's causal mask applied."""
    n = scores.shape[-1]
    ones = torch.ones(n, n, dtype=torch.bool)
    hide = {
        "hide_future": torch.triu(ones, diagonal=1),
        "hide_diagonal_too": torch.triu(ones),
        "future_only": torch.tril(ones),
    }.get(variant.mask)
    if hide is not None:
        return scores.masked_fill(hide, variant.fill)
    if variant.mask == "added":
        return scores + torch.triu(ones, diagonal=1).to(scores.dtype)
    return scores


def scores_of(
    q: Tensor, k: Tensor, variant: Variant, causal: bool, sizes: tuple[int, int] = (0, 0)
) -> Tensor:
    """The scores that the softmax takes: masked (when ``causal``) and divided.
    ``sizes`` is ``(d_out, d_in)``: all heads' size and the input's (0: one head's)."""
    scores = q @ k.mT
    d_k = k.shape[-1]
    d_out, d_in = sizes[0] or d_k, sizes[1] or d_k
    if causal:
        scores = _masked(scores, variant)
    if variant.divisor:
        return scores / variant.divisor
    return scores / _DIVISORS[variant.scale](d_k, d_out, d_in, scores.shape[-1])


def weights_of(
    q: Tensor, k: Tensor, variant: Variant, causal: bool, sizes: tuple[int, int] = (0, 0)
) -> Tensor:
    """The attention weights, before any dropout."""
    weights = torch.softmax(scores_of(q, k, variant, causal, sizes), dim=variant.softmax_dim)
    if causal and variant.mask == "multiplied":
        n = weights.shape[-1]
        weights = weights * torch.tril(torch.ones(n, n, dtype=weights.dtype))
    if variant.scale == "after_softmax":
        weights = weights / k.shape[-1] ** 0.5
    return weights


def attend(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    variant: Variant,
    causal: bool,
    dropout: nn.Module | None,
    sizes: tuple[int, int] = (0, 0),
) -> Tensor:
    """Scaled dot-product attention over the last two dimensions, as the book writes it."""
    weights = weights_of(q, k, variant, causal, sizes)
    if dropout is not None:
        weights = dropout(weights)
    return weights @ v


def _split_heads(t: Tensor, heads: int, how: str) -> Tensor:
    """(b, T, d) -> (b, heads, T, d / heads), the book's way or a learner's."""
    b, n, _ = t.shape
    if how == "interleaved":
        return t.view(b, n, -1, heads).permute(0, 3, 1, 2)
    if how in ("no_transpose", "no_transpose_in"):
        return t.view(b, heads, n, -1)
    return t.view(b, n, heads, -1).transpose(1, 2)


def _join_heads(t: Tensor, how: str) -> Tensor:
    """(b, heads, T, head_dim) -> (b, T, d), the inverse of `_split_heads` for ``how``."""
    b, _, n, _ = t.shape  # (b, heads, T, head_dim)
    if how == "interleaved":
        return t.permute(0, 2, 3, 1).reshape(b, n, -1)
    if how in ("no_transpose", "no_transpose_out"):
        return t.reshape(b, n, -1)
    return t.transpose(1, 2).reshape(b, n, -1)


def head_inputs(role: str, mapping: Mapping, x: Tensor, variant: Variant) -> list[tuple]:
    """Each head's queries, keys and values, ``(…, T, head_dim)``, as the role splits them."""
    if role != "MultiHeadAttention":
        return [(query(x), key(x), value(x)) for query, key, value in mapping.heads]
    split = [_split_heads(f(x), mapping.num_heads, variant.heads) for f in mapping.heads[0]]
    return [tuple(t[:, h] for t in split) for h in range(mapping.num_heads)]


@torch.no_grad()
def book_forward(
    role: str,
    mapping: Mapping,
    x: Tensor,
    variant: Variant = BOOK,
    dropout: nn.Module | None = None,
) -> Tensor:
    """What the book's class for ``role`` computes for ``x`` with the learner's weights
    (``mapping``) and ``variant``'s one change; ``dropout`` on the attention weights if
    given (one call per head of the wrapper, one in all otherwise, as the book draws).

    Raises:
        LookupError: If the book's `MultiHeadAttention` is asked for without an output
            projection in ``mapping``.
    """
    causal = role not in ("SelfAttention_v1", "SelfAttention_v2")
    if role != "MultiHeadAttention":
        heads = [
            attend(query(x), key(x), value(x), variant, causal, dropout, (0, x.shape[-1]))
            for query, key, value in mapping.heads
        ]
        return torch.cat(heads, dim=-1)
    # MultiHeadAttention: split the projections into heads, attend, join, project.
    q, k, v = (_split_heads(f(x), mapping.num_heads, variant.heads) for f in mapping.heads[0])
    sizes = (q.shape[-1] * mapping.num_heads, x.shape[-1])  # (d_out, d_in)
    context = _join_heads(attend(q, k, v, variant, True, dropout, sizes), variant.heads)
    if not variant.out_proj:
        return context
    if mapping.out is None:
        raise LookupError("no output projection to apply")
    return mapping.out(context)
