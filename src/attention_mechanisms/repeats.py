"""Beyond the book: the task that "What attention learns" trains on, a repeat wherever it stands.

Each sequence is a start token, then ``num_tokens`` random tokens among which one *run* of
tokens occurs two or more times: random tokens before its first copy (the prefix), random
tokens between its copies (the gaps), and random tokens after its last copy. Nothing but the
sequence itself tells where the run is, how long it is or how many times it comes back, so a
model that continues every later copy must look back for an earlier one: induction.

``repeated`` marks the tokens that the tokens before them decide: those of a later copy
after its first token (the first token of a copy follows a random token, so nothing
announces it). The other tokens are random and can only be guessed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import torch
from torch import Tensor

from .checks import check_size

__all__ = ["SYMBOLS", "VOCAB_SIZE", "Repeats", "repeated_tokens", "spell"]

VOCAB_SIZE = 64  # the chapter's tokens: one character each in SYMBOLS
# One character per token id of the chapter's model, to read its sequences; the start token
# (id VOCAB_SIZE) is written "^".
SYMBOLS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789?!"
MAX_COPIES = 8  # the most copies one sequence can hold (a bound for the vectorized layout)


def spell(ids: Sequence[int] | Tensor) -> str:
    """A sequence of token ids as `SYMBOLS`, the start token as ``^``.

    Example:
        >>> spell([64, 0, 26, 52, 63])
        '^aA0!'
    """
    return "".join(SYMBOLS[i] if i < len(SYMBOLS) else "^" for i in map(int, ids))


def check_token_ids(ids: object, vocab_size: int, context_length: int) -> torch.Tensor:
    """Return ``ids`` if it is ``(batch, num_tokens)`` of integer ids in ``[0, vocab_size]``."""
    if not isinstance(ids, torch.Tensor):
        raise TypeError(f"ids must be a torch.Tensor of token ids; got {type(ids).__name__}")
    if ids.dtype not in (torch.int64, torch.int32):
        raise TypeError(f"ids must be torch.int64 or torch.int32; got {ids.dtype}")
    if ids.dim() != 2 or ids.shape[1] == 0:
        raise ValueError(
            f"ids must be 2-D (batch, num_tokens) with at least one token; got shape "
            f"{tuple(ids.shape)} (for one sequence, use ids.unsqueeze(0))"
        )
    if ids.shape[1] > context_length:
        raise ValueError(
            f"ids has {ids.shape[1]} tokens, more than context_length={context_length}"
        )
    if ids.numel() and not 0 <= int(ids.min()) <= int(ids.max()) <= vocab_size:
        raise ValueError(
            f"ids must be in [0, {vocab_size}] ({vocab_size} is the start token); got values "
            f"from {int(ids.min())} to {int(ids.max())}"
        )
    return ids


class Repeats(NamedTuple):
    """Sequences from `repeated_tokens`, and which of their tokens repeat an earlier copy."""

    ids: Tensor  # (n, 1 + num_tokens): the start token, then the tokens
    repeated: Tensor  # (n, 1 + num_tokens), bool: decided by the tokens before it


def check_range(name: str, value: object, low: int = 1) -> tuple[int, int]:
    if not isinstance(value, tuple | list) or len(value) != 2:
        raise ValueError(f"{name} must be (low, high); got {value!r}")
    first, last = value
    for end in (first, last):
        if isinstance(end, bool) or not isinstance(end, int) or end < low:
            raise ValueError(f"{name} must be two ints of at least {low}; got {tuple(value)}")
    if first > last:
        raise ValueError(f"{name} must be (low, high) with low <= high; got {tuple(value)}")
    return first, last


def _draw(low: Tensor | int, high: Tensor, generator: torch.Generator | None) -> Tensor:
    """One int per row, uniform from ``low`` to ``high`` (both included)."""
    fraction = torch.rand(high.shape, generator=generator)
    return low + (fraction * (high - low + 1)).long().clamp(max=high - low)


def repeated_tokens(
    num_sequences: int,
    num_tokens: int = 48,
    vocab_size: int = VOCAB_SIZE,
    *,
    run_lengths: tuple[int, int] = (2, 24),
    copies: tuple[int, int] = (2, 3),
    gaps: tuple[int, int] = (0, 8),
    prefix: tuple[int, int] = (0, 48),
    distinct: bool = True,
    generator: torch.Generator | None = None,
) -> Repeats:
    """Random sequences in which one run of tokens comes back, wherever it stands.

    Each row draws, in this order and each uniformly: how many ``copies`` of the run; its
    length, from ``run_lengths`` but no longer than fits; each gap between two copies, from
    ``gaps`` but no longer than fits; the prefix before the first copy, from ``prefix`` but
    no longer than fits. Random tokens fill the rest, after the last copy. With
    ``distinct`` (the default) a row's tokens are drawn without replacement, so no token
    occurs twice in it except in the copies; otherwise with replacement.

    The defaults are the chapter's training task. The classic task of a start token, one
    copy and the copy again is ``repeated_tokens(n, 2 * L, run_lengths=(L, L), copies=(2, 2),
    gaps=(0, 0), prefix=(0, 0))``.

    Args:
        num_sequences: Number of rows.
        num_tokens: Tokens after the start token, in every row.
        vocab_size: Number of ordinary tokens; the start token's id is ``vocab_size``.
        run_lengths: Shortest and longest run (at least 2: one token more than announces it).
        copies: Fewest and most copies of the run (at least 2, at most 8).
        gaps: Shortest and longest gap between two copies.
        prefix: Shortest and longest prefix.
        distinct: Draw each row's tokens without replacement (needs ``vocab_size >=
            num_tokens``).
        generator: Random generator to draw from (default: torch's global one).

    Returns:
        `Repeats`: ``ids``, ``(num_sequences, 1 + num_tokens)`` int64, and ``repeated``,
        bool of the same shape.

    Raises:
        ValueError: If a range is not ``(low, high)`` with ``low <= high``, or the shortest
            layout of the most copies does not fit in ``num_tokens``.
    """
    n, length = check_size("num_sequences", num_sequences), check_size("num_tokens", num_tokens)
    vocab_size = check_size("vocab_size", vocab_size)
    low_run, high_run = check_range("run_lengths", run_lengths, low=2)
    low_copies, high_copies = check_range("copies", copies, low=2)
    low_gap, high_gap = check_range("gaps", gaps, low=0)
    low_prefix, high_prefix = check_range("prefix", prefix, low=0)
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator or None; got {type(generator)}")
    if high_copies > MAX_COPIES:
        raise ValueError(f"copies must be at most {MAX_COPIES}; got {tuple(copies)}")
    shortest = low_prefix + high_copies * low_run + (high_copies - 1) * low_gap
    if shortest > length:
        raise ValueError(
            f"{high_copies} copies of {low_run} tokens with gaps of {low_gap} after a prefix "
            f"of {low_prefix} take {shortest} tokens, more than num_tokens={length}"
        )
    if distinct and vocab_size < length:
        raise ValueError(
            f"distinct tokens need vocab_size >= num_tokens; got {vocab_size} < {length}"
        )
    count = _draw(low_copies, torch.full((n,), high_copies), generator)  # (n,)
    fits = (length - low_prefix - (count - 1) * low_gap) // count
    run = _draw(low_run, fits.clamp(max=high_run), generator)  # (n,)
    room = (length - low_prefix - count * run) // (count - 1)  # the longest gap that fits
    gap = _draw(low_gap, room.clamp(max=high_gap)[:, None].expand(n, MAX_COPIES - 1), generator)
    gap = gap * (torch.arange(MAX_COPIES - 1) < count[:, None] - 1)  # (n, 7): unused gaps 0
    slack = length - count * run - gap.sum(dim=1)  # (n,): tokens not in a copy or a gap
    before = _draw(low_prefix, slack.clamp(max=high_prefix), generator)  # (n,)
    # starts[r, k]: where copy k of row r starts; copy k spans starts .. starts + run - 1
    between = torch.cat([torch.zeros(n, 1, dtype=torch.long), gap.cumsum(dim=1)], dim=1)
    starts = before[:, None] + torch.arange(MAX_COPIES) * run[:, None] + between  # (n, 8)
    position = torch.arange(length)  # (T,)
    offset = position - starts[:, :, None]  # (n, 8, T): how far into copy k each token is
    inside = (offset >= 0) & (offset < run[:, None, None])
    inside &= torch.arange(MAX_COPIES)[:, None] < count[:, None, None]
    in_copy = inside.any(dim=1)  # (n, T)
    # Where each token comes from: its place in the run, or the next unused filler token.
    filler = (~in_copy).long().cumsum(dim=1) - 1
    source = torch.where(in_copy, (offset * inside).sum(dim=1), run[:, None] + filler)
    if distinct:
        pool = torch.rand(n, vocab_size, generator=generator).argsort(dim=1)  # (n, V)
    else:
        pool = torch.randint(0, vocab_size, (n, length), generator=generator)
    tokens = pool.gather(1, source)  # (n, T)
    repeated = (inside[:, 1:] & (offset[:, 1:] > 0)).any(dim=1)  # a later copy, not its first
    start = torch.full((n, 1), vocab_size)
    return Repeats(
        torch.cat([start, tokens], dim=1),  # (n, 1 + T)
        torch.cat([torch.zeros(n, 1, dtype=torch.bool), repeated], dim=1),
    )
