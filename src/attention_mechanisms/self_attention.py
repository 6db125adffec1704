r"""Section 3.4: self-attention with trainable weights.

Three learned matrices project each input $x^{(i)}$ into a query, a key and a value:

$$
q^{(i)} = x^{(i)} W_q, \qquad k^{(i)} = x^{(i)} W_k, \qquad v^{(i)} = x^{(i)} W_v
$$

and attention compares queries with keys instead of inputs with inputs:

$$
Z = \operatorname{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V,
\qquad Q = X W_q,\; K = X W_k,\; V = X W_v
$$

Training can now shape *what* each token looks for (its query), *how* it is found (its key)
and *what* it passes on (its value). The two classes compute the same function;
[SelfAttention_v2][attention_mechanisms.self_attention.SelfAttention_v2] uses ``nn.Linear``, whose
initialisation trains better than ``torch.rand``.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .checks import check_like_parameters, check_size, check_tokens

__all__ = ["SelfAttention_v1", "SelfAttention_v2"]


class SelfAttention_v1(nn.Module):
    r"""Scaled dot-product self-attention with weight matrices held as ``nn.Parameter``.

    $$
    Z = \operatorname{softmax}\!\left(\frac{(X W_q)(X W_k)^\top}{\sqrt{d_\text{out}}}\right) X W_v
    $$

    The weights are drawn from ``torch.rand`` (uniform on $[0, 1)$) in the book's order,
    ``W_query``, ``W_key``, ``W_value``, so ``torch.manual_seed(123)`` reproduces its numbers.
    Each matrix has shape ``(d_in, d_out)`` and multiplies from the right: ``x @ W_query``.

    Args:
        d_in: Size of each input embedding.
        d_out: Size of each query, key, value and output vector.

    Example:
        >>> _ = torch.manual_seed(123)
        >>> sa_v1 = SelfAttention_v1(d_in=3, d_out=2)
        >>> sa_v1(torch.rand(6, 3)).shape
        torch.Size([6, 2])
    """

    def __init__(self, d_in: int, d_out: int) -> None:
        super().__init__()
        self.d_in = check_size("d_in", d_in)
        self.d_out = check_size("d_out", d_out)
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x: Tensor) -> Tensor:
        """Attend over the tokens of ``x``.

        Args:
            x: ``(T, d_in)`` or ``(b, T, d_in)``, floating point.

        Returns:
            Context vectors, ``(T, d_out)`` or ``(b, T, d_out)`` to match ``x``.
        """
        x = check_tokens(x, self.d_in)  # ([b,] T, d_in)
        x = check_like_parameters(x, self.W_query)
        keys = x @ self.W_key  # ([b,] T, d_out)
        queries = x @ self.W_query
        values = x @ self.W_value
        attn_scores = queries @ keys.mT  # omega, ([b,] T, T); .mT is .T for one sequence
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        context_vec: Tensor = attn_weights @ values  # ([b,] T, d_out)
        return context_vec


class SelfAttention_v2(nn.Module):
    r"""Scaled dot-product self-attention with ``nn.Linear`` projections.

    The same function as
    [SelfAttention_v1][attention_mechanisms.self_attention.SelfAttention_v1], but each
    projection is an ``nn.Linear(d_in, d_out)``. ``nn.Linear`` stores its weight transposed,
    as ``(d_out, d_in)``, and computes ``x @ weight.T + bias``; so copying
    ``v2.W_query.weight.T`` into ``v1.W_query`` (and likewise for keys and values) makes the
    two classes agree, to rounding (without ``qkv_bias``, which v1 does not have).

    Args:
        d_in: Size of each input embedding.
        d_out: Size of each query, key, value and output vector.
        qkv_bias: Give the three projections a bias term.
    """

    def __init__(self, d_in: int, d_out: int, qkv_bias: bool = False) -> None:
        super().__init__()
        self.d_in = check_size("d_in", d_in)
        self.d_out = check_size("d_out", d_out)
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x: Tensor) -> Tensor:
        """Attend over the tokens of ``x``.

        Args:
            x: ``(T, d_in)`` or ``(b, T, d_in)``, floating point.

        Returns:
            Context vectors, ``(T, d_out)`` or ``(b, T, d_out)`` to match ``x``.
        """
        x = check_tokens(x, self.d_in)  # ([b,] T, d_in)
        x = check_like_parameters(x, self.W_query.weight)
        keys = self.W_key(x)  # ([b,] T, d_out)
        queries = self.W_query(x)
        values = self.W_value(x)
        attn_scores = queries @ keys.mT  # omega, ([b,] T, T); .mT is .T for one sequence
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        context_vec: Tensor = attn_weights @ values  # ([b,] T, d_out)
        return context_vec
