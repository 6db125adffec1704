r"""Grouped-query attention: fewer key and value heads than query heads.

In [MultiHeadAttention][attention_mechanisms.multihead.MultiHeadAttention] every one of the
$h$ heads has its own queries, keys and values. In generation the keys and values of every
earlier token are kept in a cache of $2 \cdot h \cdot d_\text{head}$ numbers per token and
layer, which on long contexts or large batches outgrows the weights. Grouped-query attention
(Ainslie et al., 2023, used by Llama 2 70B, Llama 3, Mistral and Qwen) keeps the $h$ query
heads but computes only $g$ key heads and $g$ value heads. Query heads are split into $g$
groups of $h / g$ consecutive heads, and every head in group $j$ attends with key and value
head $j$:

$$
\operatorname{head}_i = \operatorname{softmax}\!\left(
    \frac{Q_i K_{\lceil i g / h \rceil}^\top}{\sqrt{d_\text{head}}} + M\right)
    V_{\lceil i g / h \rceil}, \qquad i = 1, \dots, h
$$

The cache shrinks by the factor $g / h$. Two special cases have their own names:
$g = h$ is multi-head attention, and $g = 1$ is multi-query attention (Shazeer, 2019), where
all heads share one key and one value head.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .checks import (
    check_dropout,
    check_flag,
    check_groups,
    check_heads,
    check_like_parameters,
    check_size,
    check_tokens,
)
from .positions import append_to_cache, position_hide_mask

__all__ = ["GroupedQueryAttention"]


class GroupedQueryAttention(nn.Module):
    r"""Causal attention with ``num_heads`` query heads sharing ``num_kv_groups`` key-value heads.

    ``W_key`` and ``W_value`` project to ``num_kv_groups * head_dim`` features instead of
    ``d_out``. Before the scores, each key and value head is repeated for the
    ``group_size = num_heads // num_kv_groups`` query heads of its group with
    ``repeat_interleave`` (``[K1, K2]`` becomes ``[K1, K1, K2, K2]``), and from there on the
    computation is [MultiHeadAttention][attention_mechanisms.multihead.MultiHeadAttention]'s.
    With ``use_cache=True`` the module keeps the **grouped** keys and values (before the
    repeat), ``num_kv_groups`` heads, so the cache is ``num_kv_groups / num_heads`` of a
    multi-head one.

    Parameters are created in the order of the book's bonus class (``W_key``, ``W_value``,
    ``W_query``, ``out_proj``), and ``out_proj`` has no bias there, nor here, so seeded
    results carry over bit for bit.

    Shape notation:
        - ``g``: ``num_kv_groups``, the key-value heads

    Args:
        d_in: Size of each input embedding.
        d_out: Size of the output, split evenly across the query heads.
        dropout: Probability in ``[0, 1)`` of zeroing each attention weight in training.
        num_heads: Number of query heads, ``h``; must divide ``d_out``.
        num_kv_groups: Number of key-value heads, ``g``; must divide ``num_heads``.
        qkv_bias: Give the query, key and value projections a bias term.
        dtype: Floating-point type of the parameters (``None``: PyTorch's default). The
            bonus code lists ``dtype`` before ``qkv_bias``; here ``qkv_bias`` comes first, as
            in every class of the package, so pass ``dtype`` by name.

    Raises:
        ValueError: If ``d_out`` is not divisible by ``num_heads``, or ``num_heads`` by
            ``num_kv_groups``.

    Example:
        >>> gqa = GroupedQueryAttention(4096, 4096, 0.0, num_heads=32, num_kv_groups=8)
        >>> gqa.W_key.weight.shape, gqa.group_size  # 8 key heads of 128 features
        (torch.Size([1024, 4096]), 4)
    """

    cache_k: Tensor | None
    cache_v: Tensor | None

    def __init__(
        self,
        d_in: int,
        d_out: int,
        dropout: float,
        num_heads: int,
        num_kv_groups: int,
        qkv_bias: bool = False,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__()
        self.d_in = check_size("d_in", d_in)
        self.d_out = check_size("d_out", d_out)
        self.num_heads = check_size("num_heads", num_heads)
        self.num_kv_groups = check_size("num_kv_groups", num_kv_groups)
        self.head_dim = check_heads(d_out, num_heads)
        self.group_size = check_groups(num_heads, num_kv_groups)
        bias = check_flag("qkv_bias", qkv_bias)
        self.W_key = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=bias, dtype=dtype)
        self.W_value = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=bias, dtype=dtype)
        self.W_query = nn.Linear(d_in, d_out, bias=bias, dtype=dtype)
        self.out_proj = nn.Linear(d_out, d_out, bias=False, dtype=dtype)
        self.dropout = nn.Dropout(check_dropout("dropout", dropout))
        self.register_buffer("cache_k", None, persistent=False)
        self.register_buffer("cache_v", None, persistent=False)
        self.ptr_current_pos = 0

    def forward(self, x: Tensor, use_cache: bool = False) -> Tensor:
        """Attend causally, each query head with its group's key and value head.

        Args:
            x: ``(T, d_in)`` or ``(b, T, d_in)``, floating point: the whole sequence, or with
                ``use_cache=True`` the tokens that follow the cached ones.
            use_cache: Append this call's keys and values to the cache and attend to all of
                them; ``False`` empties the cache and attends within ``x`` alone.

        Returns:
            ``(T, d_out)`` or ``(b, T, d_out)`` to match ``x``.

        Raises:
            ValueError: If, with ``use_cache``, ``x`` does not continue the cached batch.
        """
        x = check_tokens(x, self.d_in)
        x = check_like_parameters(x, self.W_query.weight)
        xb = x if x.dim() == 3 else x.unsqueeze(0)  # (b, T, d_in): one sequence is a batch of 1
        b, num_tokens, _ = xb.shape
        queries = self.W_query(xb)  # (b, T, h * d_head)
        keys = self.W_key(xb)  # (b, T, g * d_head): only g key heads
        values = self.W_value(xb)  # (b, T, g * d_head)
        # Split into heads, then bring the heads forward: g heads for the keys and values.
        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        keys = keys.view(b, num_tokens, self.num_kv_groups, self.head_dim).transpose(1, 2)
        values = values.view(b, num_tokens, self.num_kv_groups, self.head_dim).transpose(1, 2)
        # queries: (b, h, T, d_head); keys, values: (b, g, T, d_head)
        start = self.ptr_current_pos if check_flag("use_cache", use_cache) else 0
        if use_cache:
            keys, values = self._append(keys, values)  # (b, g, S, d_head)
        else:
            self.reset_cache()
        # Each key and value head serves the group_size query heads of its group, in order.
        keys = keys.repeat_interleave(self.group_size, dim=1)  # (b, h, S, d_head)
        values = values.repeat_interleave(self.group_size, dim=1)  # (b, h, S, d_head)
        attn_scores = queries @ keys.transpose(2, 3)  # (b, h, T, S)
        mask_bool = position_hide_mask(start, num_tokens, 0, keys.shape[2], device=x.device)
        # No row is hidden whole: the diagonal is always kept, so no row's softmax is NaN.
        attn_scores.masked_fill_(mask_bool, -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)  # only in training mode
        context_vec: Tensor = (attn_weights @ values).transpose(1, 2)  # (b, T, h, d_head)
        # transpose() only changes strides; view() needs the memory in row order again.
        context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)  # (b, T, d_out)
        context_vec = self.out_proj(context_vec)
        return context_vec if x.dim() == 3 else context_vec.squeeze(0)

    def _append(self, keys: Tensor, values: Tensor) -> tuple[Tensor, Tensor]:
        """Add the new tokens' grouped keys and values to the cache; return the whole cache."""
        self.cache_k = append_to_cache(self.cache_k, keys, 2, "keys")
        self.cache_v = append_to_cache(self.cache_v, values, 2, "values")
        self.ptr_current_pos += keys.shape[2]
        return self.cache_k, self.cache_v

    def reset_cache(self) -> None:
        """Forget the cached keys and values: the next cached call starts at position 0."""
        self.cache_k, self.cache_v = None, None
        self.ptr_current_pos = 0
