r"""Section 3.6: multi-head attention, first as a stack of heads, then with weight splits.

Several attention heads, numbered $1$ to $h$, run in parallel, each with its own
projections, so each can learn to attend to a different kind of relation. Their outputs are
concatenated, and an output projection $W_o$ (with bias $b_o$) mixes them:

$$
\operatorname{MultiHead}(X) = \left[\operatorname{head}_1(X) \,\|\, \cdots \,\|\,
    \operatorname{head}_h(X)\right] W_o + b_o,
\qquad \operatorname{head}_i(X) = \operatorname{CausalAttention}_i(X)
$$

[MultiHeadAttentionWrapper][attention_mechanisms.multihead.MultiHeadAttentionWrapper] is
the concatenation alone, read literally: a list of
[CausalAttention][attention_mechanisms.causal.CausalAttention] modules run one after the
other, and no $W_o$.
[MultiHeadAttention][attention_mechanisms.multihead.MultiHeadAttention] is the whole
formula: it computes all heads with one projection per role and one batched matrix
multiplication, then mixes them with ``out_proj``, which holds $W_o$ and $b_o$.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .causal import CausalAttention
from .checks import (
    check_dropout,
    check_heads,
    check_like_parameters,
    check_size,
    check_tokens,
)

__all__ = ["MultiHeadAttention", "MultiHeadAttentionWrapper"]


class MultiHeadAttentionWrapper(nn.Module):
    r"""``num_heads`` independent causal heads whose outputs are concatenated.

    Each head is a full [CausalAttention][attention_mechanisms.causal.CausalAttention] with
    its own ``W_query``, ``W_key`` and ``W_value``, created in order (head 1 first), so the output
    has ``d_out * num_heads`` features: to get ``k`` output features from ``h`` heads, pass
    ``d_out = k / h``.

    Args:
        d_in: Size of each input embedding.
        d_out: Output size of **each** head.
        context_length: Longest sequence the module accepts.
        dropout: Probability in ``[0, 1)`` of zeroing each attention weight in training.
        num_heads: Number of heads, ``h``.
        qkv_bias: Give the projections a bias term.

    Example:
        >>> mha = MultiHeadAttentionWrapper(3, 2, context_length=6, dropout=0.0, num_heads=2)
        >>> mha(torch.rand(2, 6, 3)).shape
        torch.Size([2, 6, 4])
    """

    def __init__(
        self,
        d_in: int,
        d_out: int,
        context_length: int,
        dropout: float,
        num_heads: int,
        qkv_bias: bool = False,
    ) -> None:
        super().__init__()
        num_heads = check_size("num_heads", num_heads)
        self.heads = nn.ModuleList(
            CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
            for _ in range(num_heads)
        )

    def forward(self, x: Tensor) -> Tensor:
        """Run every head on ``x`` and concatenate their context vectors.

        Args:
            x: ``(T, d_in)`` or ``(b, T, d_in)``, floating point, ``T <= context_length``.

        Returns:
            ``(T, h * d_out)`` or ``(b, T, h * d_out)`` to match ``x``.
        """
        return torch.cat([head(x) for head in self.heads], dim=-1)


class MultiHeadAttention(nn.Module):
    r"""Causal multi-head attention with weight splits and an output projection.

    One ``nn.Linear(d_in, d_out)`` per role computes the queries, keys and values of all
    heads at once. Each result is then *split*: its last dimension ``d_out`` is viewed as
    ``num_heads`` chunks of ``head_dim = d_out // num_heads``, and the head dimension is moved
    in front of the tokens so that one batched matrix multiplication attends within every
    head separately. Afterwards the heads are put back side by side and ``out_proj`` mixes
    them:

    $$
    \operatorname{head}_i = \operatorname{softmax}\!\left(
        \frac{Q_i K_i^\top}{\sqrt{d_\text{head}}} + M\right) V_i,
    \qquad \operatorname{out} = [\operatorname{head}_1 \| \cdots \| \operatorname{head}_h]
        W_o + b_o
    $$

    where $Q_i$, $K_i$ and $V_i$ are head $i$'s columns of $X W_q$, $X W_k$ and $X W_v$:
    counting heads from 1 and columns from 0, columns $(i - 1) \cdot d_\text{head}$ to
    $i \cdot d_\text{head} - 1$, the slice ``[..., (i - 1) * head_dim : i * head_dim]``.
    Parameters are created in the book's order (``W_query``, ``W_key``, ``W_value``,
    ``out_proj``) and the causal ``mask`` buffer is the book's, so seeded results and
    ``state_dict``s carry over. At GPT-2 small's size (``d_in = d_out = 768``,
    12 heads, no QKV bias) it has 2,360,064 parameters.

    Args:
        d_in: Size of each input embedding.
        d_out: Size of the output, split evenly across the heads.
        context_length: Longest sequence the module accepts; sizes the mask.
        dropout: Probability in ``[0, 1)`` of zeroing each attention weight in training.
        num_heads: Number of heads; must divide ``d_out``.
        qkv_bias: Give the query, key and value projections a bias term (``out_proj``
            always has one).

    Raises:
        ValueError: If ``d_out`` is not divisible by ``num_heads``.

    Example:
        >>> mha = MultiHeadAttention(768, 768, context_length=1024, dropout=0.0, num_heads=12)
        >>> sum(p.numel() for p in mha.parameters())
        2360064
        >>> mha.head_dim
        64
    """

    mask: Tensor

    def __init__(
        self,
        d_in: int,
        d_out: int,
        context_length: int,
        dropout: float,
        num_heads: int,
        qkv_bias: bool = False,
    ) -> None:
        super().__init__()
        self.d_in = check_size("d_in", d_in)
        self.d_out = check_size("d_out", d_out)
        self.context_length = check_size("context_length", context_length)
        self.num_heads = check_size("num_heads", num_heads)
        self.head_dim = check_heads(d_out, num_heads)
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(check_dropout("dropout", dropout))
        self.register_buffer(
            "mask", torch.triu(torch.ones(context_length, context_length), diagonal=1)
        )

    def forward(self, x: Tensor) -> Tensor:
        """Attend causally within each head, then mix the heads with ``out_proj``.

        Args:
            x: ``(T, d_in)`` or ``(b, T, d_in)``, floating point, ``T <= context_length``.

        Returns:
            ``(T, d_out)`` or ``(b, T, d_out)`` to match ``x``.
        """
        x = check_tokens(x, self.d_in, self.context_length)
        x = check_like_parameters(x, self.W_query.weight)
        xb = x if x.dim() == 3 else x.unsqueeze(0)  # (b, T, d_in): one sequence is a batch of 1
        b, num_tokens, _ = xb.shape
        keys = self.W_key(xb)  # (b, num_tokens, d_out)
        queries = self.W_query(xb)
        values = self.W_value(xb)
        # Split d_out into heads, then bring the heads forward so each attends on its own.
        keys = keys.view(b, num_tokens, self.num_heads, self.head_dim)  # (b, T, h, d_head)
        values = values.view(b, num_tokens, self.num_heads, self.head_dim)
        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)
        keys = keys.transpose(1, 2)  # (b, h, T, d_head)
        queries = queries.transpose(1, 2)
        values = values.transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)  # (b, h, T, T): every head at once
        mask_bool = self.mask.bool()[:num_tokens, :num_tokens]
        # No row is hidden whole: the diagonal is always kept, so no row's softmax is NaN.
        attn_scores.masked_fill_(mask_bool, -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)  # only in training mode
        context_vec: Tensor = (attn_weights @ values).transpose(1, 2)  # (b, T, h, d_head)
        # transpose() only changes strides; view() needs the memory in row order again.
        context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)  # (b, T, d_out)
        context_vec = self.out_proj(context_vec)
        return context_vec if x.dim() == 3 else context_vec.squeeze(0)
