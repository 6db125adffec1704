r"""Section 3.5: causal attention, which hides the future, with dropout on the weights.

A language model predicts token $t + 1$ from tokens $1, \dots, t$, so while training on a
whole sequence at once each position must not see the positions after it. Setting those
scores to $-\infty$ before the softmax gives them weight exactly 0, and the remaining weights
of each row still sum to 1:

$$
Z = \operatorname{Dropout}\!\left(\operatorname{softmax}\!\left(
    \frac{Q K^\top}{\sqrt{d_k}} + M\right)\right) V,
\qquad M_{ij} = \begin{cases} -\infty & j > i \\ 0 & j \le i \end{cases}
$$

Dropout then zeroes each weight with probability $p$ during training and scales the rest
by $1 / (1 - p)$, so the expected weight is unchanged; ``model.eval()`` turns it off.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .checks import check_dropout, check_like_parameters, check_size, check_tokens

__all__ = ["CausalAttention"]


class CausalAttention(nn.Module):
    r"""Single-head causal self-attention with dropout on the attention weights.

    The mask is the book's: a float buffer ``mask`` of shape
    ``(context_length, context_length)`` holding ``triu(ones, diagonal=1)``, where 1 marks
    a position to **hide**. It is a registered buffer rather than a plain attribute so that
    ``.to(device)`` and ``.to(dtype)`` move it with the weights and ``state_dict()`` saves
    it; the book's checkpoints therefore load unchanged.

    Args:
        d_in: Size of each input embedding.
        d_out: Size of each query, key, value and output vector.
        context_length: Longest sequence the module accepts; sizes the mask.
        dropout: Probability in ``[0, 1)`` of zeroing each attention weight in training.
        qkv_bias: Give the three projections a bias term.

    Example:
        >>> _ = torch.manual_seed(123)
        >>> ca = CausalAttention(d_in=3, d_out=2, context_length=6, dropout=0.0)
        >>> ca(torch.rand(2, 6, 3)).shape
        torch.Size([2, 6, 2])
        >>> ca.mask[:3, :3]
        tensor([[0., 1., 1.],
                [0., 0., 1.],
                [0., 0., 0.]])
    """

    mask: Tensor

    def __init__(
        self, d_in: int, d_out: int, context_length: int, dropout: float, qkv_bias: bool = False
    ) -> None:
        super().__init__()
        self.d_in = check_size("d_in", d_in)
        self.d_out = check_size("d_out", d_out)
        self.context_length = check_size("context_length", context_length)
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(check_dropout("dropout", dropout))
        self.register_buffer(
            "mask", torch.triu(torch.ones(context_length, context_length), diagonal=1)
        )

    def forward(self, x: Tensor) -> Tensor:
        """Attend from each token to itself and the tokens before it.

        Args:
            x: ``(T, d_in)`` or ``(b, T, d_in)``, floating point, ``T <= context_length``.

        Returns:
            Context vectors, ``(T, d_out)`` or ``(b, T, d_out)`` to match ``x``.
        """
        x = check_tokens(x, self.d_in, self.context_length)  # ([b,] T, d_in)
        x = check_like_parameters(x, self.W_query.weight)
        num_tokens = x.shape[-2]
        keys = self.W_key(x)  # ([b,] T, d_out)
        queries = self.W_query(x)
        values = self.W_value(x)
        attn_scores = queries @ keys.transpose(-2, -1)  # ([b,] T, T)
        # No row is hidden whole: the diagonal is always kept, so no row's softmax is NaN.
        attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)  # only in training mode
        context_vec: Tensor = attn_weights @ values  # ([b,] T, d_out)
        return context_vec
