r"""Multi-head latent attention: cache one small latent vector per token, not keys and values.

Grouped-query attention shrinks the KV cache by sharing key and value heads. Multi-head
latent attention (DeepSeek-V2, 2024; DeepSeek-V3) keeps every head distinct and compresses
instead: each token is projected *down* to a latent vector $c$ of ``latent_dim`` numbers,
and the keys and values of all heads are projected back *up* from it:

$$
c = X W_\text{DKV}, \qquad K = c\, W_\text{UK}, \qquad V = c\, W_\text{UV}
$$

Only $c$ is cached: ``latent_dim`` numbers per token and layer instead of the
$2 \cdot d_\text{out}$ of a multi-head cache, a ratio of
$\text{latent\_dim} / (2\, d_\text{out})$. Recomputing $K$ and $V$ from every cached
latent at every step would cost more than the cache saves, so DeepSeek-V2 (appendix C)
*absorbs* the up-projections: $W_\text{UK}$ into the queries and $W_\text{UV}$ into the
output projection, and attends in the latent space (``absorb=True`` here). Because rotary
position embeddings would stand between $W_\text{UK}$ and the queries, DeepSeek's models
carry the position on a few extra query features per head and one rotated key per token,
shared by all heads and cached beside $c$; this class, like the book's bonus material,
has no position embedding.
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

__all__ = ["MultiHeadLatentAttention"]


class MultiHeadLatentAttention(nn.Module):
    r"""Causal multi-head attention whose keys and values come from a cached latent vector.

    ``W_DKV`` projects each token down to ``latent_dim`` numbers; ``W_UK`` and ``W_UV``
    project the latents of all tokens attended to up to the keys and values of every head;
    from there on the computation is
    [MultiHeadAttention][attention_mechanisms.multihead.MultiHeadAttention]'s. With
    ``use_cache=True`` the module caches the latents, ``(b, S, latent_dim)``, and nothing else.

    With ``absorb=True`` the keys and values are never built: each head's query is mapped
    into the latent space by its slice of ``W_UK``, scored against the cached latents, and
    the weighted sum of latents is mapped up by ``W_UV`` just before ``out_proj``. The
    outputs are those of the plain path (``absorb=False``, the bonus class's computation),
    to rounding, and so are the parameters and the cache.

    Parameters are created in the order of the book's bonus class (``W_query``, ``W_DKV``,
    ``W_UK``, ``W_UV``, ``out_proj``), so seeded results carry over bit for bit.

    Shape notation:
        - ``r``: ``latent_dim``

    Args:
        d_in: Size of each input embedding.
        d_out: Size of the output, split evenly across the heads.
        dropout: Probability in ``[0, 1)`` of zeroing each attention weight in training.
        num_heads: Number of heads; must divide ``d_out``.
        qkv_bias: Give ``W_query``, ``W_DKV``, ``W_UK`` and ``W_UV`` a bias term
            (``out_proj`` always has one).
        latent_dim: Size of the cached latent vector; ``None`` picks
            ``max(16, d_out // 8)``, as the bonus material does.
        absorb: Attend in the latent space, with ``W_UK`` and ``W_UV`` absorbed.

    Raises:
        ValueError: If ``d_out`` is not divisible by ``num_heads``.

    Example:
        >>> mla = MultiHeadLatentAttention(768, 768, 0.0, num_heads=12)
        >>> mla.latent_dim, mla.latent_dim / (2 * 768)  # of a multi-head cache
        (96, 0.0625)
    """

    cache_c_kv: Tensor | None

    def __init__(
        self,
        d_in: int,
        d_out: int,
        dropout: float,
        num_heads: int,
        qkv_bias: bool = False,
        latent_dim: int | None = None,
        absorb: bool = False,
    ) -> None:
        super().__init__()
        self.d_in = check_size("d_in", d_in)
        self.d_out = check_size("d_out", d_out)
        self.num_heads = check_size("num_heads", num_heads)
        self.head_dim = check_heads(d_out, num_heads)
        self.latent_dim = (
            max(16, d_out // 8) if latent_dim is None else check_size("latent_dim", latent_dim)
        )
        self.absorb = check_flag("absorb", absorb)
        bias = check_flag("qkv_bias", qkv_bias)
        self.W_query = nn.Linear(d_in, d_out, bias=bias)  # per-head queries, as before
        self.W_DKV = nn.Linear(d_in, self.latent_dim, bias=bias)  # down: token to latent
        self.W_UK = nn.Linear(self.latent_dim, d_out, bias=bias)  # up: latent to keys
        self.W_UV = nn.Linear(self.latent_dim, d_out, bias=bias)  # up: latent to values
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(check_dropout("dropout", dropout))
        self.register_buffer("cache_c_kv", None, persistent=False)
        self.ptr_current_pos = 0

    def forward(self, x: Tensor, use_cache: bool = False) -> Tensor:
        """Attend causally with keys and values rebuilt from the latents of all tokens.

        Args:
            x: ``(T, d_in)`` or ``(b, T, d_in)``, floating point: the whole sequence, or with
                ``use_cache=True`` the tokens that follow the cached ones.
            use_cache: Append this call's latents to the cache and attend to all cached
                tokens; ``False`` empties the cache and attends within ``x`` alone.

        Returns:
            ``(T, d_out)`` or ``(b, T, d_out)`` to match ``x``.

        Raises:
            ValueError: If, with ``use_cache``, ``x`` does not continue the cached batch.
        """
        x = check_tokens(x, self.d_in)
        x = check_like_parameters(x, self.W_query.weight)
        xb = x if x.dim() == 3 else x.unsqueeze(0)  # (b, T, d_in): one sequence is a batch of 1
        b, num_tokens, _ = xb.shape
        queries = self.W_query(xb)  # (b, T, d_out)
        latent = self.W_DKV(xb)  # (b, T, r): all that the cache keeps
        start = self.ptr_current_pos if check_flag("use_cache", use_cache) else 0
        if use_cache:
            latent = self._append(latent)  # (b, S, r)
        else:
            self.reset_cache()
        if self.absorb:
            return self._absorbed(x, queries, latent, start)
        keys = self.W_UK(latent)  # (b, S, d_out)
        values = self.W_UV(latent)  # (b, S, d_out)
        queries = self._split_heads(queries)  # (b, h, T, d_head)
        keys = self._split_heads(keys)  # (b, h, S, d_head)
        values = self._split_heads(values)  # (b, h, S, d_head)
        attn_scores = torch.matmul(queries, keys.transpose(-2, -1))  # (b, h, T, S)
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

    def _absorbed(self, x: Tensor, queries: Tensor, latent: Tensor, start: int) -> Tensor:
        """The same attention, computed against the latents: no key or value is built."""
        b, num_tokens, _ = queries.shape
        w_uk = self.W_UK.weight.view(self.num_heads, self.head_dim, self.latent_dim)
        w_uv = self.W_UV.weight.view(self.num_heads, self.head_dim, self.latent_dim)
        queries = self._split_heads(queries)  # (b, h, T, d_head)
        # q . (W_UK c + b_UK) = (W_UK^T q) . c + q . b_UK; the last term is the same for every
        # key of a query, and softmax does not change when a row's scores shift together.
        queries_latent = torch.einsum("bhtd,hdr->bhtr", queries, w_uk)  # (b, h, T, r)
        attn_scores = queries_latent @ latent.unsqueeze(1).transpose(2, 3)  # (b, h, T, S)
        mask_bool = position_hide_mask(start, num_tokens, 0, latent.shape[1], device=x.device)
        attn_scores.masked_fill_(mask_bool, -torch.inf)
        attn_weights = torch.softmax(attn_scores / self.head_dim**0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)  # only in training mode
        latent_read = attn_weights @ latent.unsqueeze(1)  # (b, h, T, r): sum of w_s c_s
        context_vec = torch.einsum("bhtr,hdr->bhtd", latent_read, w_uv)  # (b, h, T, d_head)
        if self.W_UV.bias is not None:  # sum of w_s (W_UV c_s + b) = W_UV (sum of w_s c_s) + ...
            bias = self.W_UV.bias.view(self.num_heads, 1, self.head_dim)
            context_vec = context_vec + attn_weights.sum(dim=-1, keepdim=True) * bias
        context_vec = context_vec.transpose(1, 2).reshape(b, num_tokens, self.d_out)
        out: Tensor = self.out_proj(context_vec)  # (b, T, d_out): W_UV, then out_proj
        return out if x.dim() == 3 else out.squeeze(0)

    def _split_heads(self, x: Tensor) -> Tensor:
        """``(b, T, d_out)`` to ``(b, h, T, d_head)``, contiguous, as the bonus code keeps it."""
        b, num_tokens, _ = x.shape
        return x.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2).contiguous()

    def _append(self, latent: Tensor) -> Tensor:
        """Add the new tokens' latents to the cache; return the whole cache."""
        self.cache_c_kv = append_to_cache(self.cache_c_kv, latent, 1, "latent")
        self.ptr_current_pos += latent.shape[1]
        return self.cache_c_kv

    def reset_cache(self) -> None:
        """Forget the cached latents: the next cached call starts at position 0."""
        self.cache_c_kv = None
        self.ptr_current_pos = 0
