r"""Scaled dot-product attention as a function, and the causal mask.

This is the general form behind every class in the package: queries and keys may have
different lengths (cross-attention), any leading batch or head dimensions broadcast, and
positions can be hidden with a boolean mask.

Two mask conventions meet in attention code, and mixing them up silently breaks a model:

- **hide mask**: ``True`` means this key is *hidden* from this query. Used by the book's
  ``mask`` buffer (``triu(..., diagonal=1)``), by ``hide_mask`` here, and by the boolean
  ``attn_mask`` of ``torch.nn.MultiheadAttention``.
- **keep mask**: ``True`` means this query *may attend* to this key. Used by ``tril(...)``
  masks and by the boolean ``attn_mask`` of
  ``torch.nn.functional.scaled_dot_product_attention``.

The parameter here is called ``hide_mask`` so its meaning is in its name. Convert a keep mask
with ``hide_mask=~keep_mask``.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .checks import check_dropout, check_hide_mask, check_qkv, check_size

__all__ = ["causal_mask", "scaled_dot_product_attention"]


def causal_mask(
    num_queries: int, num_keys: int | None = None, *, device: torch.device | str | None = None
) -> Tensor:
    r"""Boolean hide mask that stops each query from seeing keys after its own position.

    The queries are taken to be the **last** ``num_queries`` of the ``num_keys`` positions
    (bottom-right alignment), which is what incremental decoding needs: a single new query
    sees every cached key. With ``num_queries == num_keys`` this is the book's
    ``torch.triu(torch.ones(n, n), diagonal=1).bool()``.

    $$
    \text{hide}_{ij} = j > i + (\text{num\_keys} - \text{num\_queries})
    $$

    Note that ``torch.nn.functional.scaled_dot_product_attention(..., is_causal=True)``
    aligns the other way (top-left) when the lengths differ.

    Args:
        num_queries: Number of query positions, ``L``.
        num_keys: Number of key positions, ``S``; defaults to ``num_queries``.
        device: Where to create the mask.

    Returns:
        A ``torch.bool`` tensor of shape ``(L, S)``; ``True`` marks a hidden position.

    Raises:
        TypeError, ValueError: If a size is not a positive int.

    Example:
        >>> causal_mask(3)
        tensor([[False,  True,  True],
                [False, False,  True],
                [False, False, False]])
        >>> causal_mask(1, 4)  # one new query after three cached tokens sees all four
        tensor([[False, False, False, False]])
    """
    num_queries = check_size("num_queries", num_queries)
    num_keys = num_queries if num_keys is None else check_size("num_keys", num_keys)
    ones = torch.ones(num_queries, num_keys, dtype=torch.bool, device=device)
    return ones.triu(diagonal=num_keys - num_queries + 1)


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    *,
    hide_mask: Tensor | None = None,
    causal: bool = False,
    dropout_p: float = 0.0,
    scale: float | None = None,
) -> tuple[Tensor, Tensor]:
    r"""Attend from each query to the keys and mix the values; return context and weights.

    $$
    \operatorname{Attention}(Q, K, V) = \operatorname{softmax}\!\left(
        \frac{Q K^\top}{\sqrt{d_k}} + M\right) V,
    \qquad M_{ij} = \begin{cases} -\infty & \text{position } (i, j) \text{ hidden} \\
    0 & \text{otherwise} \end{cases}
    $$

    Dividing by $\sqrt{d_k}$ keeps the scores' spread from growing with the head size (for
    independent unit-variance entries, $q \cdot k$ has variance $d_k$), so the softmax does
    not saturate and its gradients do not vanish (section 3.4.1).

    A query whose keys are **all** hidden has nothing to attend to. Instead of the NaN that
    ``softmax`` of a row of ``-inf`` gives, its weights are all zero and its context vector is
    zero. Gradients stay finite too.

    Shape notation:
        - ``...``: any leading dimensions (batch, heads), broadcast between the inputs
        - ``L``: number of queries; ``S``: number of keys and values
        - ``d_k``: query and key size; ``d_v``: value size

    Args:
        query: ``(..., L, d_k)``.
        key: ``(..., S, d_k)``.
        value: ``(..., S, d_v)``.
        hide_mask: Boolean, broadcastable to ``(..., L, S)``; ``True`` hides that key from
            that query. For a keep mask (PyTorch's ``attn_mask``) pass ``~attn_mask``.
        causal: Also hide every key after the query's position (see ``causal_mask``).
        dropout_p: Probability of zeroing an attention weight; survivors are scaled by
            ``1 / (1 - dropout_p)``. Pass ``0.0`` at evaluation time.
        scale: Factor applied to the scores; defaults to ``1 / sqrt(d_k)``.

    Returns:
        ``(context, weights)``: the context vectors ``(..., L, d_v)`` and the attention
        weights ``(..., L, S)`` (after dropout, exactly as they multiplied ``value``).

    Raises:
        TypeError: If an input is not a floating-point tensor, the dtypes differ, or
            ``hide_mask`` is not boolean.
        ValueError: If the shapes do not fit together or ``dropout_p`` is not in ``[0, 1)``.

    Example:
        >>> q = k = v = torch.eye(2)
        >>> context, weights = scaled_dot_product_attention(q, k, v, causal=True)
        >>> weights
        tensor([[1.0000, 0.0000],
                [0.3302, 0.6698]])
    """
    check_qkv(query, key, value)
    dropout_p = check_dropout("dropout_p", dropout_p)
    num_queries, num_keys = query.shape[-2], key.shape[-2]

    if hide_mask is not None:
        check_hide_mask(hide_mask, num_queries, num_keys)
    if causal:
        causal_hide = causal_mask(num_queries, num_keys, device=query.device)
        hide_mask = causal_hide if hide_mask is None else causal_hide | hide_mask

    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1])
    scores = (query @ key.transpose(-2, -1)) * scale  # (..., L, S)

    if hide_mask is None:
        weights = torch.softmax(scores, dim=-1)
    else:
        # Rows with every key hidden would be softmax(-inf, ..., -inf) = NaN. Leave them
        # unmasked for the softmax and zero them afterwards, so no NaN appears, even in grads.
        hides_all = hide_mask.all(dim=-1, keepdim=True)  # (..., L, 1)
        scores = scores.masked_fill(hide_mask & ~hides_all, -math.inf)
        weights = torch.softmax(scores, dim=-1).masked_fill(hides_all, 0.0)

    if dropout_p > 0.0:
        weights = torch.nn.functional.dropout(weights, p=dropout_p)
    return weights @ value, weights
