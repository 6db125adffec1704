r"""Section 3.3: self-attention without trainable weights.

The simplest attention turns a sequence of token embeddings $x^{(1)}, \dots, x^{(T)}$ into
context vectors $z^{(1)}, \dots, z^{(T)}$, each a weighted average of *all* the inputs:

$$
\omega_{ij} = x^{(i)} \cdot x^{(j)}, \qquad
\alpha_{ij} = \frac{e^{\omega_{ij}}}{\sum_{k} e^{\omega_{ik}}}, \qquad
z^{(i)} = \sum_j \alpha_{ij}\, x^{(j)}
$$

The scores $\omega$ measure similarity, the weights $\alpha$ are the scores normalised to sum
to 1 along each row, and the context vector mixes the inputs by those weights. In matrix form,
for an input matrix $X$ of shape ``(T, d)``: $Z = \operatorname{softmax}(X X^\top) X$.

Each step comes in the two forms the chapter compares: a Python loop that mirrors the
formula, and the matrix expression that computes the same numbers (to rounding) in one call.
"""

from __future__ import annotations

import torch
from torch import Tensor

from .checks import check_floating

__all__ = [
    "attention_scores",
    "attention_scores_loop",
    "attention_weights",
    "context_vector",
    "context_vectors",
    "normalize_by_sum",
    "query_scores",
    "query_scores_loop",
    "simplified_self_attention",
    "softmax_naive",
    "softmax_stable",
]


def _check_inputs(inputs: object) -> Tensor:
    inputs = check_floating("inputs", inputs)
    if inputs.dim() != 2:
        raise ValueError(
            f"inputs must be 2-D (num_tokens, d); got {inputs.dim()}-D with shape "
            f"{tuple(inputs.shape)}"
        )
    return inputs


def _check_query(query: object, inputs: Tensor) -> Tensor:
    query = check_floating("query", query)
    if query.shape != inputs.shape[1:]:
        raise ValueError(
            f"query must be 1-D of size d={inputs.shape[1]} (one row of inputs); "
            f"got shape {tuple(query.shape)}"
        )
    return query


def _check_weights(weights: object, inputs: Tensor, dims: int) -> Tensor:
    weights = check_floating("weights", weights)
    num_tokens = inputs.shape[0]
    expected = (num_tokens,) * dims
    if weights.shape != expected:
        raise ValueError(
            f"weights must have shape {expected}, one weight per input token; "
            f"got shape {tuple(weights.shape)}"
        )
    return weights


def query_scores_loop(query: Tensor, inputs: Tensor) -> Tensor:
    r"""Attention scores of one query against every input, one dot product at a time.

    $\omega_j = q \cdot x^{(j)}$ (section 3.3.1).

    Args:
        query: ``(d,)``, usually one row of ``inputs``.
        inputs: ``(num_tokens, d)``.

    Returns:
        ``(num_tokens,)``: one score per input token.

    Example:
        >>> inputs = torch.tensor([[1.0, 0.0], [0.5, 0.5]])
        >>> query_scores_loop(inputs[1], inputs)
        tensor([0.5000, 0.5000])
    """
    inputs = _check_inputs(inputs)
    query = _check_query(query, inputs)
    scores = torch.empty(inputs.shape[0], dtype=inputs.dtype, device=inputs.device)
    for j, x_j in enumerate(inputs):
        scores[j] = torch.dot(query, x_j)
    return scores


def query_scores(query: Tensor, inputs: Tensor) -> Tensor:
    r"""Attention scores of one query against every input, as one matrix-vector product.

    $\omega = X q$, the same numbers, to rounding, as
    [query_scores_loop][attention_mechanisms.simple.query_scores_loop].

    Args:
        query: ``(d,)``.
        inputs: ``(num_tokens, d)``.

    Returns:
        ``(num_tokens,)``.
    """
    inputs = _check_inputs(inputs)
    query = _check_query(query, inputs)
    return inputs @ query


def attention_scores_loop(inputs: Tensor) -> Tensor:
    r"""All pairwise scores $\omega_{ij} = x^{(i)} \cdot x^{(j)}$ with two nested loops.

    Section 3.3.2 writes this first to show exactly what the matrix product computes.

    Args:
        inputs: ``(num_tokens, d)``.

    Returns:
        ``(num_tokens, num_tokens)``; row ``i`` holds the scores of query ``i``.
    """
    inputs = _check_inputs(inputs)
    num_tokens = inputs.shape[0]
    scores = torch.empty(num_tokens, num_tokens, dtype=inputs.dtype, device=inputs.device)
    for i, x_i in enumerate(inputs):
        for j, x_j in enumerate(inputs):
            scores[i, j] = torch.dot(x_i, x_j)
    return scores


def attention_scores(inputs: Tensor) -> Tensor:
    r"""All pairwise scores at once: $\Omega = X X^\top$.

    Args:
        inputs: ``(num_tokens, d)``.

    Returns:
        ``(num_tokens, num_tokens)``, equal to ``attention_scores_loop(inputs)`` to rounding.
    """
    inputs = _check_inputs(inputs)
    return inputs @ inputs.T


def normalize_by_sum(scores: Tensor, dim: int = -1) -> Tensor:
    r"""Divide scores by their sum: $\alpha_j = \omega_j / \sum_k \omega_k$.

    The first, crude normalisation in section 3.3.1. It makes the weights sum to 1, but a
    negative score would give a negative "weight", which is why softmax replaces it.

    Args:
        scores: Any floating-point tensor.
        dim: The dimension that should sum to 1.

    Returns:
        A tensor of the same shape.
    """
    scores = check_floating("scores", scores)
    return scores / scores.sum(dim=dim, keepdim=True)


def softmax_naive(x: Tensor, dim: int = -1) -> Tensor:
    r"""Softmax straight from its definition: $e^{x_j} / \sum_k e^{x_k}$.

    Correct for small inputs, but $e^{x}$ leaves the float32 range once $x > 88.7$: the
    numerator and denominator both become ``inf`` and ``inf / inf`` is NaN. Use
    [softmax_stable][attention_mechanisms.simple.softmax_stable] (or ``torch.softmax``).

    Args:
        x: Any floating-point tensor.
        dim: The dimension to normalise.

    Returns:
        A tensor of the same shape.

    Example:
        >>> softmax_naive(torch.tensor([1.0, 2.0, 3.0]))
        tensor([0.0900, 0.2447, 0.6652])
        >>> softmax_naive(torch.tensor([100.0, 0.0]))  # e**100 overflows float32
        tensor([nan, 0.])
    """
    x = check_floating("x", x)
    exp = torch.exp(x)
    return exp / exp.sum(dim=dim, keepdim=True)


def softmax_stable(x: Tensor, dim: int = -1) -> Tensor:
    r"""Softmax that never overflows: subtract the maximum first.

    $$
    \operatorname{softmax}(x)_j = \frac{e^{x_j - m}}{\sum_k e^{x_k - m}}, \qquad m = \max_k x_k
    $$

    The factor $e^{-m}$ cancels between numerator and denominator, so the result is
    unchanged, while every exponent is now at most 0 and the largest term is exactly 1.
    ``torch.softmax`` does the same internally.

    Args:
        x: Any floating-point tensor.
        dim: The dimension to normalise.

    Returns:
        A tensor of the same shape.

    Example:
        >>> softmax_stable(torch.tensor([100.0, 0.0]))  # the true answer, e**-100 included
        tensor([1.0000e+00, 3.7835e-44])
    """
    x = check_floating("x", x)
    exp = torch.exp(x - x.amax(dim=dim, keepdim=True))
    return exp / exp.sum(dim=dim, keepdim=True)


def attention_weights(scores: Tensor) -> Tensor:
    r"""Attention weights from scores: a softmax along the last dimension.

    $\alpha = \operatorname{softmax}(\omega)$, computed with
    [softmax_stable][attention_mechanisms.simple.softmax_stable].

    Args:
        scores: ``(..., num_tokens)``.

    Returns:
        Same shape; every row is non-negative and sums to 1 (to rounding).
    """
    return softmax_stable(scores, dim=-1)


def context_vector(weights: Tensor, inputs: Tensor) -> Tensor:
    r"""One context vector as a loop over the inputs: $z = \sum_j \alpha_j x^{(j)}$.

    Args:
        weights: ``(num_tokens,)``, the attention weights of one query.
        inputs: ``(num_tokens, d)``.

    Returns:
        ``(d,)``.
    """
    inputs = _check_inputs(inputs)
    weights = _check_weights(weights, inputs, dims=1)
    z = torch.zeros(inputs.shape[1], dtype=inputs.dtype, device=inputs.device)
    for alpha_j, x_j in zip(weights, inputs, strict=True):
        z += alpha_j * x_j
    return z


def context_vectors(weights: Tensor, inputs: Tensor) -> Tensor:
    r"""All context vectors at once: $Z = A X$.

    Row ``i`` of the product is $\sum_j \alpha_{ij} x^{(j)}$: the loop of
    [context_vector][attention_mechanisms.simple.context_vector] for query ``i``, to rounding.

    Args:
        weights: ``(num_tokens, num_tokens)``.
        inputs: ``(num_tokens, d)``.

    Returns:
        ``(num_tokens, d)``.
    """
    inputs = _check_inputs(inputs)
    weights = _check_weights(weights, inputs, dims=2)
    return weights @ inputs


def simplified_self_attention(inputs: Tensor) -> Tensor:
    r"""The whole of section 3.3 in one call: $Z = \operatorname{softmax}(X X^\top) X$.

    Args:
        inputs: ``(num_tokens, d)``.

    Returns:
        ``(num_tokens, d)``: one context vector per token.
    """
    return context_vectors(attention_weights(attention_scores(inputs)), inputs)
