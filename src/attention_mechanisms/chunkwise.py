r"""The gated delta rule a chunk at a time: GatedDeltaNet's recurrence with matrix products.

Token by token, a head's state $S$ ($d \times d$) is rewritten as
$S_t = \alpha_t S_{t-1} + k_t u_t^\top$ with $u_t = \beta_t \odot (v_t - \alpha_t
S_{t-1}^\top k_t)$, and read as $y_t = S_t^\top q_t$. Within a chunk of $C$ tokens that
starts from $S_0$, write $g_t = \sum_{i \le t} \ln \alpha_i$ and $\gamma_t = e^{g_t}$.
Unrolling the recurrence gives, with $M_{ti} = e^{g_t - g_i}\, k_t^\top k_i$ for $i < t$:

$$
u_t + \beta_t \odot \sum_{i<t} M_{ti}\, u_i = \beta_t \odot (v_t - \gamma_t S_0^\top k_t),
\qquad
y_t = \gamma_t S_0^\top q_t + \sum_{i \le t} e^{g_t - g_i} (q_t^\top k_i)\, u_i
$$

The first is a unit lower-triangular system, $(I + \operatorname{diag}(\beta) M)\,U = \dots$,
solved for all $C$ rows of $U$ at once; its inverse is the *UT transform* of the
Gated DeltaNet paper (Yang, Kautz and Hatamizadeh, 2025), which with $K$ and $V$ gives its
WY representation. The state then jumps over the whole chunk:
$S_C = \gamma_C S_0 + \sum_i e^{g_C - g_i}\, k_i u_i^\top$.

With one $\beta$ per head (the paper, Qwen3-Next, FLA) all value features share one system.
With one per feature (the book's bonus code), each of the $d$ value features has its own:
$d$ times the triangular work and memory.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F  # noqa: N812 (PyTorch's own convention)
from torch import Tensor

__all__ = ["chunkwise_delta_rule", "solve_unit_lower"]


def solve_unit_lower(system: Tensor, rhs: Tensor) -> Tensor:
    """Solve the unit lower-triangular systems ``(I + system) U = rhs`` of a chunk.

    Args:
        system: ``(..., m, C, C)``, zero on and above the diagonal: one system per head
            (``m = 1``), whose right-hand sides are the ``d`` columns of ``rhs``, or one per
            value feature (``m = d``), whose right-hand side is that feature's column.
        rhs: ``(..., C, d)``.

    Returns:
        ``U``, ``(..., C, d)``.
    """
    if system.shape[-3] == 1:  # one beta per head: one system, each value feature a column
        one: Tensor = torch.linalg.solve_triangular(
            system.squeeze(-3), rhs, upper=False, unitriangular=True
        )
        return one
    columns = rhs.transpose(-1, -2).unsqueeze(-1)  # (..., d, C, 1): one system per feature
    solved = torch.linalg.solve_triangular(system, columns, upper=False, unitriangular=True)
    per_feature: Tensor = solved.squeeze(-1).transpose(-1, -2)  # (..., C, d)
    return per_feature


def chunkwise_delta_rule(
    queries: Tensor,
    keys: Tensor,
    values: Tensor,
    beta: Tensor,
    alpha_log: Tensor,
    state: Tensor,
    chunk_size: int,
) -> tuple[Tensor, Tensor]:
    r"""Every token's read-out and the last state, ``chunk_size`` tokens at a time.

    Shape notation:
        - ``b``: batch; ``h``: heads; ``T``: tokens; ``d``: ``head_dim``; ``C``: ``chunk_size``
        - ``m``: 1 (one $\beta$ per head) or ``d`` (one per value feature)

    Args:
        queries: ``(b, h, T, d)``, already normalized and scaled.
        keys: ``(b, h, T, d)``, already normalized.
        values: ``(b, h, T, d)``.
        beta: ``(b, h, T, m)``, in ``(0, 1)``.
        alpha_log: ``(b, h, T)``, $\ln \alpha_t \le 0$.
        state: ``(b, h, d, d)``, the state before the first token.
        chunk_size: Tokens per chunk; the last chunk is padded with tokens that change nothing.

    Returns:
        ``(outputs, state)``: ``(b, h, T, d)`` and ``(b, h, d, d)``, as the token-by-token loop
        of `GatedDeltaNet` gives them.
    """
    b, h, num_tokens, _ = keys.shape
    chunk_size = min(chunk_size, num_tokens)  # one short chunk, not padding, for a few tokens
    pad = -num_tokens % chunk_size  # a padded token: k = v = q = 0, beta = 0, alpha = 1
    q, k, v, beta = (F.pad(t, (0, 0, 0, pad)) for t in (queries, keys, values, beta))
    n = (num_tokens + pad) // chunk_size
    q, k, v, beta = (t.view(b, h, n, chunk_size, t.shape[-1]) for t in (q, k, v, beta))
    log_alpha = F.pad(alpha_log, (0, pad)).view(b, h, n, chunk_size)  # (b, h, n, C)
    causal = torch.ones(chunk_size, chunk_size, dtype=torch.bool, device=keys.device).tril()
    # g_t - g_i = sum of ln alpha_j for i < j <= t, summed as such: the difference of two long
    # sums would lose digits. Above the diagonal, -inf: exp gives 0, where it could overflow.
    after = log_alpha.unsqueeze(-1).expand(*log_alpha.shape, chunk_size)  # [t, i] = ln alpha_t
    segment = after.masked_fill(~causal.tril(-1), 0).cumsum(-2)  # (b, h, n, C, C): i < j <= t
    decay = segment.masked_fill(~causal, -torch.inf).exp()  # (b, h, n, C, C): e^(g_t - g_i)
    earlier = ((k @ k.transpose(-1, -2)) * decay).tril(-1)  # (b, h, n, C, C): M
    system = beta.transpose(-1, -2).unsqueeze(-1) * earlier.unsqueeze(3)  # (b, h, n, m, C, C)
    reads = (q @ k.transpose(-1, -2)) * decay  # (b, h, n, C, C): e^(g_t - g_i) q_t . k_i
    gamma = log_alpha.cumsum(-1).exp().unsqueeze(-1)  # (b, h, n, C, 1): decay since its start
    to_end = segment[..., -1, :].exp().unsqueeze(-1)  # (b, h, n, C, 1): decay to its end
    outs = []
    # unbind, not indexing: the backward of x[:, :, c] would write a zero tensor of x's size
    chunks = (t.unbind(2) for t in (q, k, v, beta, system, reads, gamma, to_end))
    for q_c, k_c, v_c, beta_c, system_c, reads_c, gamma_c, to_end_c in zip(*chunks, strict=True):
        recalled = k_c @ state  # (b, h, C, d): row t is S_0^T k_t
        u = solve_unit_lower(system_c, beta_c * (v_c - gamma_c * recalled))  # (b, h, C, d)
        outs.append(gamma_c * (q_c @ state) + reads_c @ u)  # (b, h, C, d)
        state = gamma_c[:, :, -1:] * state + (k_c * to_end_c).transpose(-1, -2) @ u
    outputs = torch.cat(outs, dim=2)[:, :, :num_tokens]  # (b, h, T, d)
    return outputs, state
