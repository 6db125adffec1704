r"""Token positions, and the cache the attention classes of today's LLMs keep between calls.

Chapter 3's classes see a whole sequence at once, so query $i$ and key $i$ are the same token
and the causal mask is a fixed triangle. In generation with a cache, a call brings only the
new tokens: their queries sit at positions ``start`` to ``start + num_queries - 1`` of the
sequence, and the keys (cached and new) at their own positions. Every mask is then written
with positions, as the book's bonus classes write it:

$$
\text{hide}_{ij} = \underbrace{p_i - p_j < 0}_{\text{key in the future}}
    \;\lor\; \underbrace{p_i - p_j \ge w}_{\text{key out of the window}}
$$

where $p_i$ is query $i$'s position, $p_j$ key $j$'s, and $w$ the sliding window (no
window: only the first condition). A window of $w$ lets each query see itself and the
$w - 1$ tokens before it.

The classes call these functions from their ``forward``; ``use_cache=True`` appends the new
tokens to the cache, and ``use_cache=False`` (a whole sequence) empties it.
"""

from __future__ import annotations

import torch
from torch import Tensor

from .checks import check_position, check_size

__all__ = ["append_to_cache", "position_hide_mask"]


def position_hide_mask(
    query_start: int,
    num_queries: int,
    key_start: int,
    num_keys: int,
    window: int | None = None,
    device: torch.device | str | None = None,
) -> Tensor:
    """Boolean hide mask for queries and keys at consecutive absolute positions.

    Args:
        query_start: Position of the first query in the sequence.
        num_queries: Number of queries, ``L``.
        key_start: Position of the first key in the sequence.
        num_keys: Number of keys, ``S``.
        window: If given, also hide keys ``window`` or more positions before the query.
        device: Where to create the mask.

    Returns:
        A ``torch.bool`` tensor of shape ``(L, S)``; ``True`` marks a hidden key.

    Raises:
        TypeError, ValueError: If a start is not an int ``>= 0``, or a count or the window
            is not a positive int.

    Example:
        >>> position_hide_mask(0, 4, 0, 4, window=2).int()
        tensor([[0, 1, 1, 1],
                [0, 0, 1, 1],
                [1, 0, 0, 1],
                [1, 1, 0, 0]], dtype=torch.int32)
        >>> position_hide_mask(3, 1, 0, 4)  # a new token at position 3 sees all four keys
        tensor([[False, False, False, False]])
    """
    query_start, key_start = (
        check_position("query_start", query_start),
        check_position("key_start", key_start),
    )
    num_queries, num_keys = check_size("num_queries", num_queries), check_size("num_keys", num_keys)
    window = None if window is None else check_size("window", window)
    q_positions = torch.arange(query_start, query_start + num_queries, device=device)
    k_positions = torch.arange(key_start, key_start + num_keys, device=device)
    distance = q_positions.unsqueeze(-1) - k_positions.unsqueeze(0)  # (L, S): how far back
    hide = distance < 0
    if window is not None:
        hide = hide | (distance >= window)
    return hide


def append_to_cache(cached: Tensor | None, new: Tensor, dim: int, name: str) -> Tensor:
    """Return ``new`` appended to ``cached`` along the token dimension ``dim``.

    Raises:
        ValueError: If ``new`` does not fit the cache (another batch size, head count, dtype
            or device): the cache belongs to one batch of sequences until ``reset_cache()``.
    """
    if cached is None:
        return new
    if new.shape[0] != cached.shape[0]:
        raise ValueError(
            f"x has a batch of {new.shape[0]} sequence(s), but the cache holds "
            f"{cached.shape[0]}; call reset_cache() before a new batch, or pass use_cache=False"
        )
    expected = [size for i, size in enumerate(cached.shape) if i != dim]
    came = [size for i, size in enumerate(new.shape) if i != dim]
    if expected != came or (new.dtype, new.device) != (cached.dtype, cached.device):
        raise ValueError(
            f"x must continue the cached sequence: its {name}, {tuple(new.shape)} "
            f"({new.dtype} on {new.device}), do not extend the cache, {tuple(cached.shape)} "
            f"({cached.dtype} on {cached.device}); call reset_cache() first"
        )
    return torch.cat([cached, new], dim=dim)
