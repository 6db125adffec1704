r"""Fast causal multi-head attention: one projection, one attention call, and a KV cache.

[MultiHeadAttention][attention_mechanisms.multihead.MultiHeadAttention] spells every step
out: three projections, an explicit $T \times T$ score matrix, a mask, a softmax, dropout,
a second matrix product. Production models compute the same function with two changes:

1. **One projection** ``qkv = nn.Linear(d_in, 3 * d_out)`` instead of three: one larger
   matrix product uses the hardware better than three small ones.
2. **One attention call**, ``torch.nn.functional.scaled_dot_product_attention``, which picks
   an implementation per call. A fused kernel (FlashAttention-style) never materialises the
   $T \times T$ weights, so its memory grows linearly with the number of tokens instead of
   quadratically; the math path computes them all, as ``MultiHeadAttention`` does. With
   PyTorch 2.13 on CPU this module gets the fused kernel unless dropout is active (training
   with ``dropout > 0``), which falls back to the math path. On CUDA a fused kernel (such as
   FlashAttention or the memory-efficient one, which both take dropout) runs where the dtype,
   head size and mask allow, and the math path otherwise (``float64``, for one).

Either way the outputs equal ``MultiHeadAttention``'s to rounding, not bit for bit.
[KVCache][attention_mechanisms.fused.KVCache] keeps the keys and values of the tokens seen
so far, so that in generation each new token costs one query against the cache instead of
recomputing the whole sequence. It is for inference only.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F  # noqa: N812 (PyTorch's own convention)
from torch import Tensor, nn

from .checks import (
    check_dropout,
    check_heads,
    check_like_parameters,
    check_new_kv,
    check_size,
    check_tokens,
)
from .functional import causal_mask
from .multihead import MultiHeadAttention

__all__ = ["FusedMultiHeadAttention", "KVCache"]


class KVCache:
    """Keys and values of the tokens already processed, for incremental decoding.

    Pass the same cache to every call of
    [FusedMultiHeadAttention.forward][attention_mechanisms.fused.FusedMultiHeadAttention.forward]
    for one batch of sequences; each call writes the new tokens' keys and values after the
    cached ones. The storage is allocated once, at the first call, for ``capacity`` positions,
    so a step copies only its new tokens. Without a capacity the storage doubles whenever it
    is full, so growing copies fewer than two positions per cached position, all told.

    It is for inference: it writes each step into its storage in place, which autograd cannot
    follow back across steps, so it refuses tensors that require grad. Generate under
    ``torch.no_grad()`` or ``torch.inference_mode()``.

    Args:
        capacity: Most positions the cache will hold, e.g. the module's ``context_length``;
            ``None`` lets it grow.

    Attributes:
        keys: ``(b, h, S, d_head)``, the cached keys, or ``None`` before the first call.
        values: ``(b, h, S, d_head)``, the cached values, or ``None`` before the first call.

    Raises:
        TypeError: If ``capacity`` is not an int.
        ValueError: If ``capacity`` is not positive.

    Example:
        >>> cache = KVCache(capacity=8)
        >>> k = v = torch.zeros(1, 2, 3, 4)  # (b, h, T, d_head)
        >>> keys, values = cache.append(k, v)
        >>> len(cache), tuple(keys.shape)
        (3, (1, 2, 3, 4))
    """

    def __init__(self, capacity: int | None = None) -> None:
        self.capacity = None if capacity is None else check_size("capacity", capacity)
        self._keys: Tensor | None = None  # (b, h, allocated, d_head); filled up to _length
        self._values: Tensor | None = None
        self._length = 0

    def __len__(self) -> int:
        """Number of cached positions ``S``."""
        return self._length

    @property
    def keys(self) -> Tensor | None:
        return None if self._keys is None else self._keys[..., : self._length, :]

    @property
    def values(self) -> Tensor | None:
        return None if self._values is None else self._values[..., : self._length, :]

    def reset(self) -> None:
        """Forget every cached position and free the storage, e.g. before a new batch."""
        self._keys = self._values = None
        self._length = 0

    def append(self, keys: Tensor, values: Tensor) -> tuple[Tensor, Tensor]:
        """Add the new positions and return all keys and values so far.

        Args:
            keys: ``(b, h, T, d_head)``, the new tokens' keys.
            values: ``(b, h, T, d_head)``, the new tokens' values.

        Returns:
            The cached keys and values, ``(b, h, S + T, d_head)`` each.

        Raises:
            TypeError: If ``keys`` or ``values`` is not a floating-point tensor.
            ValueError: If they require grad, are not 4-D, their shapes differ, they do not
                match what the cache already holds (batch, heads, head size, dtype, device),
                or they would take the cache past its ``capacity``.
        """
        keys, values = check_new_kv(keys, values, self._keys)
        b, h, num_new, d = keys.shape
        end = self._length + num_new
        if self.capacity is not None and end > self.capacity:
            raise ValueError(
                f"keys has {num_new} tokens and the cache holds {self._length}, more than "
                f"capacity={self.capacity} together; reset() it or make a larger KVCache"
            )
        if self._keys is None or self._values is None:
            self._keys = keys.new_empty(b, h, self.capacity or num_new, d)
            self._values = values.new_empty(b, h, self.capacity or num_new, d)
        elif end > self._keys.shape[2]:  # full and growable: double the storage
            more = max(end, 2 * self._keys.shape[2]) - self._keys.shape[2]
            self._keys, self._values = (
                torch.cat((t, t.new_empty(b, h, more, d)), dim=2)
                for t in (self._keys, self._values)
            )
        self._keys[..., self._length : end, :] = keys
        self._values[..., self._length : end, :] = values
        self._length = end
        return self._keys[..., :end, :], self._values[..., :end, :]


class FusedMultiHeadAttention(nn.Module):
    r"""Causal multi-head attention with a combined QKV projection and PyTorch's attention call.

    Computes the function that
    [MultiHeadAttention][attention_mechanisms.multihead.MultiHeadAttention] computes,

    $$
    \operatorname{head}_i = \operatorname{softmax}\!\left(
        \frac{Q_i K_i^\top}{\sqrt{d_\text{head}}} + M\right) V_i,
    \qquad \operatorname{out} = [\operatorname{head}_1 \| \cdots \| \operatorname{head}_h]
        W_o + b_o,
    $$

    but with ``qkv = nn.Linear(d_in, 3 * d_out)`` (the rows of ``W_query``, ``W_key`` and
    ``W_value`` stacked) and ``torch.nn.functional.scaled_dot_product_attention(...,
    is_causal=True)`` in place of the explicit mask, softmax and matrix products; with the
    same weights the outputs agree to rounding. Dropout on the attention weights applies in
    training mode only, with random draws of its own (and, on CPU, through the math path:
    see the module's description). There is no ``mask`` buffer: ``is_causal`` applies
    causality, or, for several new tokens after a cache, a boolean ``(T, S + T)`` mask built
    per call; ``context_length`` only bounds the input.

    Args:
        d_in: Size of each input embedding.
        d_out: Size of the output, split evenly across the heads.
        context_length: Longest sequence the module accepts (cache included).
        dropout: Probability in ``[0, 1)`` of zeroing each attention weight in training.
        num_heads: Number of heads; must divide ``d_out``.
        qkv_bias: Give the query, key and value projections a bias term.

    Raises:
        ValueError: If ``d_out`` is not divisible by ``num_heads``.

    Example:
        >>> _ = torch.manual_seed(123)
        >>> mha = MultiHeadAttention(3, 4, context_length=6, dropout=0.0, num_heads=2)
        >>> fused = FusedMultiHeadAttention.from_multihead_attention(mha)
        >>> x = torch.rand(2, 6, 3)
        >>> torch.allclose(fused(x), mha(x), atol=1e-6)
        True
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
        self.d_in = check_size("d_in", d_in)
        self.d_out = check_size("d_out", d_out)
        self.context_length = check_size("context_length", context_length)
        self.num_heads = check_size("num_heads", num_heads)
        self.head_dim = check_heads(d_out, num_heads)
        self.dropout = check_dropout("dropout", dropout)
        self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    @classmethod
    def from_multihead_attention(cls, mha: MultiHeadAttention) -> FusedMultiHeadAttention:
        """Build a fused module holding the weights of a ``MultiHeadAttention``.

        Args:
            mha: The textbook module to copy.

        Returns:
            A ``FusedMultiHeadAttention`` on the same device and dtype, in the same training
            mode, whose outputs equal ``mha``'s to rounding (with dropout active, only in
            distribution: the random draws differ).

        Raises:
            TypeError: If ``mha`` is not a ``MultiHeadAttention``.
        """
        if not isinstance(mha, MultiHeadAttention):
            raise TypeError(f"mha must be a MultiHeadAttention; got {type(mha).__name__}")
        qkv_bias = mha.W_query.bias is not None
        fused = cls(
            mha.d_in, mha.d_out, mha.context_length, mha.dropout.p, mha.num_heads, qkv_bias
        ).to(device=mha.out_proj.weight.device, dtype=mha.out_proj.weight.dtype)
        with torch.no_grad():
            # nn.Linear computes x @ weight.T, so stacking the weights' rows stacks the outputs.
            fused.qkv.weight.copy_(
                torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight])
            )
            if qkv_bias:
                fused.qkv.bias.copy_(
                    torch.cat([mha.W_query.bias, mha.W_key.bias, mha.W_value.bias])
                )
            fused.out_proj.load_state_dict(mha.out_proj.state_dict())
        return fused.train(mha.training)

    def forward(self, x: Tensor, kv_cache: KVCache | None = None) -> Tensor:
        """Attend causally over ``x`` (and, with a cache, over the tokens before it).

        Args:
            x: ``(T, d_in)`` or ``(b, T, d_in)``, floating point.
            kv_cache: Keys and values of earlier tokens. The new tokens' keys and values are
                appended to it, and the new tokens attend to all cached positions plus the
                new ones up to their own.

        Returns:
            ``(T, d_out)`` or ``(b, T, d_out)`` to match ``x``.

        Raises:
            ValueError: If the cached plus new tokens exceed ``context_length``, ``x`` has
                another batch size than the keys in ``kv_cache``, or ``kv_cache`` is given
                while the keys would require grad (grad mode on, and ``x`` or the parameters
                requiring grad).
        """
        cached_keys = None if kv_cache is None else kv_cache.keys  # (b, h, S, d_head)
        cached = 0 if cached_keys is None else cached_keys.shape[2]
        x = check_tokens(x, self.d_in, self.context_length if cached == 0 else None)
        x = check_like_parameters(x, self.qkv.weight)
        if cached + x.shape[-2] > self.context_length:
            raise ValueError(
                f"x has {x.shape[-2]} tokens and kv_cache holds {cached}, more than "
                f"context_length={self.context_length} together; start a new KVCache"
            )
        xb = x if x.dim() == 3 else x.unsqueeze(0)  # (b, T, d_in)
        b, num_tokens, _ = xb.shape
        if cached_keys is not None and cached_keys.shape[0] != b:
            raise ValueError(
                f"x holds a batch of {b}, but kv_cache holds keys for a batch of "
                f"{cached_keys.shape[0]}; use a new KVCache, or reset() it, for a new batch"
            )

        qkv = self.qkv(xb).view(b, num_tokens, 3, self.num_heads, self.head_dim)
        queries, keys, values = qkv.permute(2, 0, 3, 1, 4)  # each (b, h, T, d_head)
        if kv_cache is not None:
            if keys.requires_grad:  # the cache writes in place: autograd cannot follow it
                why = "x" if x.requires_grad else "the module's parameters"
                raise ValueError(
                    "kv_cache must be used with gradients off: KVCache is for inference (wrap "
                    "generation in torch.no_grad() or torch.inference_mode()); got grad mode "
                    f"on and {why} requiring grad"
                )
            keys, values = kv_cache.append(keys, values)  # (b, h, S + T, d_head)

        # With dropout, PyTorch 2.13 on CPU takes the math path (T x T weights), not the fused one.
        dropout_p = self.dropout if self.training else 0.0
        if cached == 0 or num_tokens == 1:
            # No cache: PyTorch's causal mask is right. One new token: it sees everything.
            context = F.scaled_dot_product_attention(
                queries, keys, values, dropout_p=dropout_p, is_causal=cached == 0
            )
        else:
            # Several new tokens after a cache: they are the *last* T of S + T positions,
            # while is_causal would align them with the first. Pass the mask explicitly.
            keep = ~causal_mask(num_tokens, cached + num_tokens, device=x.device)
            context = F.scaled_dot_product_attention(
                queries, keys, values, attn_mask=keep, dropout_p=dropout_p
            )

        context = context.transpose(1, 2).reshape(b, num_tokens, self.d_out)  # (b, T, d_out)
        out: Tensor = self.out_proj(context)
        return out if x.dim() == 3 else out.squeeze(0)
