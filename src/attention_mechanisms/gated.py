r"""Gated attention and Gated DeltaNet: the two layers of Qwen3-Next's hybrid stack.

Qwen3-Next and Kimi Linear (2025) put three linear-attention layers before each
full-attention layer. Qwen3-Next's full-attention layer is multi-head attention with an
output gate (Qiu et al., 2025): a sigmoid of another projection of the input scales every
feature of the heads' output before ``out_proj``. Its linear layer is Gated DeltaNet
(Yang, Kautz and Hatamizadeh, 2025). Instead of the keys and values of every earlier token,
each head keeps one matrix $S$ of $d \times d$ numbers ($d$ = ``head_dim``), read with the
query and rewritten with each token by the *delta rule*:

$$
\tilde S = \alpha_t S_{t-1}, \qquad
S_t = \tilde S + k_t \big(\beta_t \odot (v_t - \tilde S^\top k_t)\big)^\top, \qquad
y_t = S_t^\top q_t
$$

$\tilde S^\top k_t$ is what the memory recalls for the key $k_t$; the update writes a
$\beta_t$ share of the error $v_t - \tilde S^\top k_t$ back at that key. The decay
$\alpha_t = \exp(-e^{A} \operatorname{softplus}(W_\alpha x_t + b_{dt}))$ in $(0, 1)$
fades the memory, one rate per head; $\beta_t = \sigma(W_\beta x_t)$, one per feature as in
the book's bonus code, or one per head as in the paper and Qwen3-Next. Queries and keys are
scaled to length 1, and the queries then divided by $\sqrt{d}$. Every token costs the same
work and $S$ never grows: the layer is linear in the length of the context, and its cache is
constant.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F  # noqa: N812 (PyTorch's own convention)
from torch import Tensor, nn

from .checks import (
    check_dropout,
    check_flag,
    check_heads,
    check_like_parameters,
    check_size,
    check_tokens,
)
from .chunkwise import chunkwise_delta_rule

__all__ = ["GatedDeltaNet", "GatedMultiHeadAttention", "l2norm"]


class GatedMultiHeadAttention(nn.Module):
    r"""Chapter 3's multi-head attention with a sigmoid gate on its output.

    ``W_gate`` projects the input to ``d_out`` more features, and the heads' concatenated
    output is multiplied by their sigmoid, feature by feature, before ``out_proj``. The rest
    is [MultiHeadAttention][attention_mechanisms.multihead.MultiHeadAttention], except that
    hidden scores are filled with the dtype's lowest number instead of ``-inf``, as in the
    book's bonus code (the weights are the same).
    Parameters are created in the bonus class's order (``W_query``, ``W_gate``, ``W_key``,
    ``W_value``, ``out_proj``), so seeded results carry over bit for bit.

    Args:
        d_in: Size of each input embedding.
        d_out: Size of the output, split evenly across the heads.
        context_length: Longest sequence the module accepts; sizes the mask.
        dropout: Probability in ``[0, 1)`` of zeroing each attention weight in training.
        num_heads: Number of heads; must divide ``d_out``.
        qkv_bias: Give the query, gate, key and value projections a bias term.

    Raises:
        ValueError: If ``d_out`` is not divisible by ``num_heads``.

    Example:
        >>> attn = GatedMultiHeadAttention(8, 8, context_length=6, dropout=0.0, num_heads=2)
        >>> attn(torch.rand(2, 6, 8)).shape
        torch.Size([2, 6, 8])
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
        bias = check_flag("qkv_bias", qkv_bias)
        self.W_query = nn.Linear(d_in, d_out, bias=bias)
        self.W_gate = nn.Linear(d_in, d_out, bias=bias)  # new: one gate per output feature
        self.W_key = nn.Linear(d_in, d_out, bias=bias)
        self.W_value = nn.Linear(d_in, d_out, bias=bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(check_dropout("dropout", dropout))
        self.register_buffer(
            "mask",
            torch.triu(torch.ones(context_length, context_length), diagonal=1),
            persistent=False,
        )

    def forward(self, x: Tensor) -> Tensor:
        """Attend causally within each head, gate the result, then mix the heads.

        Args:
            x: ``(T, d_in)`` or ``(b, T, d_in)``, floating point, ``T <= context_length``.

        Returns:
            ``(T, d_out)`` or ``(b, T, d_out)`` to match ``x``.
        """
        x = check_tokens(x, self.d_in, self.context_length)
        x = check_like_parameters(x, self.W_query.weight)
        xb = x if x.dim() == 3 else x.unsqueeze(0)  # (b, T, d_in): one sequence is a batch of 1
        b, num_tokens, _ = xb.shape
        queries = self.W_query(xb)  # (b, T, d_out)
        gate = self.W_gate(xb)  # (b, T, d_out): new
        keys = self.W_key(xb)
        values = self.W_value(xb)
        keys = keys.view(b, num_tokens, self.num_heads, self.head_dim)  # (b, T, h, d_head)
        values = values.view(b, num_tokens, self.num_heads, self.head_dim)
        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)
        keys = keys.transpose(1, 2)  # (b, h, T, d_head)
        queries = queries.transpose(1, 2)
        values = values.transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)  # (b, h, T, T)
        mask_bool = self.mask.bool()[:num_tokens, :num_tokens]
        attn_scores.masked_fill_(mask_bool, torch.finfo(attn_scores.dtype).min)
        attn_weights = torch.softmax(attn_scores / (self.head_dim**0.5), dim=-1)
        attn_weights = self.dropout(attn_weights)  # only in training mode
        context = (attn_weights @ values).transpose(1, 2)  # (b, T, h, d_head)
        context = context.reshape(b, num_tokens, self.d_out)  # (b, T, d_out)
        context = context * torch.sigmoid(gate)  # new: each feature scaled by (0, 1)
        out: Tensor = self.out_proj(context)
        return out if x.dim() == 3 else out.squeeze(0)


def l2norm(x: Tensor, dim: int = -1, eps: float = 1e-6) -> Tensor:
    """``x`` scaled to length 1 along ``dim``; ``eps`` keeps a zero vector at zero."""
    return x * torch.rsqrt((x * x).sum(dim=dim, keepdim=True) + eps)


class GatedDeltaNet(nn.Module):
    r"""Linear attention with the gated delta rule: a fixed-size state instead of a KV cache.

    The layer of the book's bonus code, without the short convolution that Qwen3-Next and
    Kimi Linear put on the queries, keys and values. After the recurrence, each head's output
    is normalized with ``norm`` (an RMSNorm over ``head_dim``), multiplied by the SiLU of
    ``W_gate``'s projection, and the heads are mixed with ``out_proj``. Dropout, in training,
    zeroes features of the gated output. Parameters are created in the bonus class's order
    (``W_query``, ``W_key``, ``W_value``, ``W_gate``, ``W_beta``, ``W_alpha``, ``dt_bias``,
    ``A_log``, ``norm``, ``out_proj``; ``A_log`` is the log of draws from ``U(0, 16)``), so
    seeded results carry over bit for bit.

    With ``use_cache=True``, the states after the last token are kept in ``cache_state``,
    ``(b, h, d_head, d_head)``, and the next cached call starts from them: the cache never
    grows (``ptr_current_pos`` counts the tokens it has seen).

    Args:
        d_in: Size of each input embedding.
        d_out: Size of the output, split evenly across the heads.
        dropout: Probability in ``[0, 1)`` of zeroing each feature of the gated output in
            training.
        num_heads: Number of heads; must divide ``d_out``.
        qkv_bias: Give the query, key and value projections a bias term.
        chunk_size: ``None``: token by token, as the bonus code; an int: the same, that many
            tokens at a time with matrix products (`chunkwise_delta_rule`), faster to train.
        beta_per_head: One update gate per head (``W_beta`` has ``num_heads`` outputs).

    Raises:
        ValueError: If ``d_out`` is not divisible by ``num_heads``.

    Example:
        >>> layer = GatedDeltaNet(8, 8, dropout=0.0, num_heads=2)
        >>> _ = layer(torch.rand(1, 5, 8), use_cache=True)
        >>> layer.cache_state.shape  # (b, h, d_head, d_head), after any number of tokens
        torch.Size([1, 2, 4, 4])
    """

    cache_state: Tensor | None

    def __init__(
        self,
        d_in: int,
        d_out: int,
        dropout: float,
        num_heads: int,
        qkv_bias: bool = False,
        chunk_size: int | None = None,
        beta_per_head: bool = False,
    ) -> None:
        super().__init__()
        self.d_in = check_size("d_in", d_in)
        self.d_out = check_size("d_out", d_out)
        self.num_heads = check_size("num_heads", num_heads)
        self.head_dim = check_heads(d_out, num_heads)
        self.chunk_size = None if chunk_size is None else check_size("chunk_size", chunk_size)
        per_head = check_flag("beta_per_head", beta_per_head)
        bias = check_flag("qkv_bias", qkv_bias)
        self.W_query = nn.Linear(d_in, d_out, bias=bias)
        self.W_key = nn.Linear(d_in, d_out, bias=bias)
        self.W_value = nn.Linear(d_in, d_out, bias=bias)
        self.W_gate = nn.Linear(d_in, d_out, bias=False)  # output gate, through a SiLU
        self.W_beta = nn.Linear(d_in, num_heads if per_head else d_out, bias=False)  # update gate
        self.W_alpha = nn.Linear(d_in, num_heads, bias=False)  # decay gate, per head
        self.dt_bias = nn.Parameter(torch.ones(num_heads))
        self.A_log = nn.Parameter(torch.log(torch.empty(num_heads).uniform_(0, 16)))
        self.norm = nn.RMSNorm(self.head_dim, eps=1e-6)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(check_dropout("dropout", dropout))
        self.register_buffer("cache_state", None, persistent=False)
        self.ptr_current_pos = 0

    def forward(self, x: Tensor, use_cache: bool = False) -> Tensor:
        """Run the gated delta rule over the tokens, one at a time, then gate and mix heads.

        Args:
            x: ``(T, d_in)`` or ``(b, T, d_in)``, floating point: the whole sequence, or with
                ``use_cache=True`` the tokens that follow the cached ones.
            use_cache: Start from ``cache_state`` (zeros if empty) and keep the last state there;
                ``False`` empties it and starts from zeros.

        Returns:
            ``(T, d_out)`` or ``(b, T, d_out)`` to match ``x``.

        Raises:
            ValueError: If, with ``use_cache``, the batch size of ``x`` is not the cached one.
        """
        x = check_tokens(x, self.d_in)
        x = check_like_parameters(x, self.W_query.weight)
        xb = x if x.dim() == 3 else x.unsqueeze(0)  # (b, T, d_in): one sequence is a batch of 1
        b, num_tokens, _ = xb.shape
        queries = self.W_query(xb)  # (b, T, d_out)
        keys = self.W_key(xb)
        values = self.W_value(xb)
        beta = torch.sigmoid(self.W_beta(xb))  # (b, T, d_out) or (b, T, h): how much to write
        alpha_log = -self.A_log.exp().view(1, 1, -1) * F.softplus(self.W_alpha(xb) + self.dt_bias)
        alpha = alpha_log.exp()  # (b, T, h): how much of the state to keep
        gate = self.W_gate(xb)  # (b, T, d_out)
        keys = keys.view(b, num_tokens, self.num_heads, self.head_dim)  # (b, T, h, d_head)
        values = values.view(b, num_tokens, self.num_heads, self.head_dim)
        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)
        beta = beta.view(b, num_tokens, self.num_heads, -1)  # (b, T, h, d_head or 1)
        gate = gate.view(b, num_tokens, self.num_heads, self.head_dim)
        keys = keys.transpose(1, 2)  # (b, h, T, d_head)
        queries = queries.transpose(1, 2)
        values = values.transpose(1, 2)
        beta = beta.transpose(1, 2)
        queries = l2norm(queries, dim=-1) / (self.head_dim**0.5)
        keys = l2norm(keys, dim=-1)
        S = self._initial_state(xb, check_flag("use_cache", use_cache))  # (b, h, d_head, d_head)
        if self.chunk_size is not None:  # the same recurrence, a chunk at a time
            steps = (queries, keys, values, beta, alpha_log.transpose(1, 2))
            context, S = chunkwise_delta_rule(*steps, S, self.chunk_size)  # (b, h, T, d_head)
        else:
            outs = []
            for t in range(num_tokens):
                k_t = keys[:, :, t]  # (b, h, d_head)
                q_t = queries[:, :, t]
                v_t = values[:, :, t]
                b_t = beta[:, :, t]
                a_t = alpha[:, t].unsqueeze(-1).unsqueeze(-1)  # (b, h, 1, 1)
                S = S * a_t  # forget a little
                kv_mem = (S * k_t.unsqueeze(-1)).sum(dim=-2)  # (b, h, d_head): S^T k, recalled
                delta = (v_t - kv_mem) * b_t  # the share of the error to write
                S = S + k_t.unsqueeze(-1) * delta.unsqueeze(-2)  # S += k delta^T
                y_t = (S * q_t.unsqueeze(-1)).sum(dim=-2)  # (b, h, d_head): S^T q, read
                outs.append(y_t)
            context = torch.stack(outs, dim=2)  # (b, h, T, d_head)
        if use_cache:
            self.cache_state = S
            self.ptr_current_pos += num_tokens
        context = context.transpose(1, 2).contiguous()  # (b, T, h, d_head)
        context = context.view(b, num_tokens, self.num_heads, self.head_dim)
        context = self.norm(context)
        context = context * F.silu(gate)
        context = context.view(b, num_tokens, self.d_out)  # (b, T, d_out)
        context = self.dropout(context)  # only in training mode
        out: Tensor = self.out_proj(context)
        return out if x.dim() == 3 else out.squeeze(0)

    def _initial_state(self, xb: Tensor, use_cache: bool) -> Tensor:
        """The cached state to continue from, or zeros (and an empty cache) without one."""
        b = xb.shape[0]
        if not use_cache or self.cache_state is None:
            self.reset_cache()
            return xb.new_zeros(b, self.num_heads, self.head_dim, self.head_dim)
        if self.cache_state.shape[0] != b:
            raise ValueError(
                f"x must continue the cached batch of {self.cache_state.shape[0]} sequences; "
                f"got a batch of {b}: call reset_cache() (or use_cache=False) to start anew"
            )
        return self.cache_state

    def reset_cache(self) -> None:
        """Forget the cached state: the next cached call starts from zeros."""
        self.cache_state = None
        self.ptr_current_pos = 0
