r"""Sliding-window attention: each token attends only to the last few tokens.

Causal attention lets token $i$ attend to all $i$ tokens before it, so its cost and its KV
cache grow with the context. Sliding-window attention (in every layer of the first Mistral
7B, every other layer of Gemma 2, five layers of six in Gemma 3) also hides every key $w$ or
more positions back: each query sees itself and the $w - 1$ tokens before it, a band of the
causal triangle.

$$
M_{ij} = \begin{cases} 0 & 0 \le i - j < w \\ -\infty & \text{otherwise} \end{cases}
$$

Information still travels further than $w$ tokens, one window per layer, and models mix in
ordinary (global) layers: Gemma 3 has five sliding-window layers for each global one. In
generation a layer only ever needs the last $w$ keys and values, so its cache stops growing
at $w$ tokens, and each new token scores at most $w$ keys. On a whole sequence this class
computes all the scores and hides those outside the band; kernels that skip the blocks
outside it (FlashAttention-2's ``window_size``, FlexAttention's ``BlockMask``) save that
work too.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .checks import (
    check_dropout,
    check_flag,
    check_heads,
    check_like_parameters,
    check_size,
    check_tokens,
)
from .positions import append_to_cache, position_hide_mask

__all__ = ["MultiHeadAttentionWithSWA"]


class MultiHeadAttentionWithSWA(nn.Module):
    r"""Causal multi-head attention in which each query sees at most ``sliding_window_size`` keys.

    The class is [MultiHeadAttention][attention_mechanisms.multihead.MultiHeadAttention] with
    a banded mask: a key is hidden if it comes after the query **or** lies
    ``sliding_window_size`` or more positions before it. ``sliding_window_size=None`` gives
    plain causal attention, as does a window at least as long as the input. With
    ``use_cache=True`` the cache keeps only the last ``sliding_window_size`` tokens' keys and
    values; a call with several new tokens attends to the cached ones plus its own.

    Parameters are created in the book's order (``W_query``, ``W_key``, ``W_value``,
    ``out_proj``) and there is no ``context_length`` and no mask buffer: the mask is built
    from positions in every call. ``sliding_window_size`` may be changed after construction,
    as the bonus material's model does to make some of its layers global, but not while the
    cache holds tokens.

    Args:
        d_in: Size of each input embedding.
        d_out: Size of the output, split evenly across the heads.
        dropout: Probability in ``[0, 1)`` of zeroing each attention weight in training.
        num_heads: Number of heads; must divide ``d_out``.
        qkv_bias: Give the query, key and value projections a bias term (``out_proj``
            always has one).
        sliding_window_size: Number of keys each query sees, itself included; ``None`` for
            no window.

    Raises:
        ValueError: If ``d_out`` is not divisible by ``num_heads``, or the window is changed
            while the cache holds tokens.

    Example:
        >>> swa = MultiHeadAttentionWithSWA(8, 8, 0.0, num_heads=2, sliding_window_size=3)
        >>> swa(torch.rand(2, 10, 8)).shape
        torch.Size([2, 10, 8])
    """

    cache_k: Tensor | None
    cache_v: Tensor | None
    _window: int | None

    def __init__(
        self,
        d_in: int,
        d_out: int,
        dropout: float,
        num_heads: int,
        qkv_bias: bool = False,
        sliding_window_size: int | None = None,
    ) -> None:
        super().__init__()
        self.d_in = check_size("d_in", d_in)
        self.d_out = check_size("d_out", d_out)
        self.num_heads = check_size("num_heads", num_heads)
        self.head_dim = check_heads(d_out, num_heads)
        bias = check_flag("qkv_bias", qkv_bias)
        self.W_query = nn.Linear(d_in, d_out, bias=bias)
        self.W_key = nn.Linear(d_in, d_out, bias=bias)
        self.W_value = nn.Linear(d_in, d_out, bias=bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(check_dropout("dropout", dropout))
        self.register_buffer("cache_k", None, persistent=False)
        self.register_buffer("cache_v", None, persistent=False)
        self.ptr_current_pos = 0
        self.sliding_window_size = sliding_window_size

    @property
    def sliding_window_size(self) -> int | None:
        """Number of keys each query sees, itself included; ``None`` for no window."""
        return self._window

    @sliding_window_size.setter
    def sliding_window_size(self, window: int | None) -> None:
        if self.cache_k is not None:
            raise ValueError(
                "sliding_window_size cannot change while the cache holds "
                f"{self.cache_k.shape[1]} tokens; call reset_cache() first"
            )
        self._window = None if window is None else check_size("sliding_window_size", window)

    def forward(self, x: Tensor, use_cache: bool = False) -> Tensor:
        """Attend causally within the window, then mix the heads with ``out_proj``.

        Args:
            x: ``(T, d_in)`` or ``(b, T, d_in)``, floating point: the whole sequence, or with
                ``use_cache=True`` the tokens that follow the cached ones.
            use_cache: Attend to the cached keys and values too, then keep the last
                ``sliding_window_size`` of them; ``False`` empties the cache.

        Returns:
            ``(T, d_out)`` or ``(b, T, d_out)`` to match ``x``.

        Raises:
            ValueError: If, with ``use_cache``, ``x`` does not continue the cached batch.
        """
        x = check_tokens(x, self.d_in)
        x = check_like_parameters(x, self.W_query.weight)
        xb = x if x.dim() == 3 else x.unsqueeze(0)  # (b, T, d_in): one sequence is a batch of 1
        b, num_tokens, _ = xb.shape
        keys = self.W_key(xb)  # (b, T, d_out)
        values = self.W_value(xb)
        queries = self.W_query(xb)
        # Split d_out into heads, then bring the heads forward so each attends on its own.
        keys = keys.view(b, num_tokens, self.num_heads, self.head_dim)  # (b, T, h, d_head)
        values = values.view(b, num_tokens, self.num_heads, self.head_dim)
        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)
        q_start = k_start = 0
        if check_flag("use_cache", use_cache):
            keys, values, q_start, k_start = self._attend_to_cache(keys, values)
        else:
            self.reset_cache()
        keys = keys.transpose(1, 2)  # (b, h, S, d_head)
        queries = queries.transpose(1, 2)  # (b, h, T, d_head)
        values = values.transpose(1, 2)  # (b, h, S, d_head)
        attn_scores = queries @ keys.transpose(2, 3)  # (b, h, T, S)
        mask_bool = position_hide_mask(
            q_start, num_tokens, k_start, keys.shape[2], self.sliding_window_size, x.device
        )
        # No row is hidden whole: the diagonal is always kept, so no row's softmax is NaN.
        attn_scores.masked_fill_(mask_bool, -torch.inf)  # the future, and keys out of the window
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)  # only in training mode
        context_vec: Tensor = (attn_weights @ values).transpose(1, 2)  # (b, T, h, d_head)
        # transpose() only changes strides; view() needs the memory in row order again.
        context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)  # (b, T, d_out)
        context_vec = self.out_proj(context_vec)
        return context_vec if x.dim() == 3 else context_vec.squeeze(0)

    def _attend_to_cache(self, keys: Tensor, values: Tensor) -> tuple[Tensor, Tensor, int, int]:
        """Join the new keys and values to the cache and trim it to the window.

        Returns the keys and values to attend to, ``(b, S, h, d_head)``: the last
        ``sliding_window_size - 1`` cached tokens (all the earliest new query can see) and
        the new ones; and the positions of the first query and the first key.
        """
        num_new, query_start = keys.shape[1], self.ptr_current_pos
        cached = 0 if self.cache_k is None else self.cache_k.shape[1]
        all_keys = append_to_cache(self.cache_k, keys, 1, "keys")  # (b, cached + T, h, d_head)
        all_values = append_to_cache(self.cache_v, values, 1, "values")
        window = self.sliding_window_size
        total = all_keys.shape[1]
        attend = total if window is None else min(total, window + num_new - 1)
        keep = total if window is None else min(total, window)
        self.cache_k, self.cache_v = all_keys[:, -keep:], all_values[:, -keep:]
        self.ptr_current_pos += num_new
        key_start = query_start - cached + (total - attend)
        return all_keys[:, -attend:], all_values[:, -attend:], query_start, key_start

    def reset_cache(self) -> None:
        """Forget the cached keys and values: the next cached call starts at position 0."""
        self.cache_k, self.cache_v = None, None
        self.ptr_current_pos = 0
