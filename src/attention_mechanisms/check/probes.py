"""The shapes at which a learner's class is run: the book's, and those its small ones hide.

The book checks its classes with ``d_in=3, d_out=2``, two heads of size 1 and six tokens
with ``context_length=6``. At those shapes a mask that is not cut to the number of tokens
works, a mask of the notebook's own for six tokens works as well as the module's, ``view``
after ``transpose`` works (a head of size 1 is contiguous by accident), and
an unscaled multi-head class is exact (``sqrt(1) = 1``). Each other probe changes one
thing, so that the first probe to fail names what broke; the last changes them all.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch
from torch import Tensor

# The book's six tokens ("Your journey starts with one step"), three numbers each.
INPUTS = torch.tensor(
    [
        [0.43, 0.15, 0.89],
        [0.55, 0.87, 0.66],
        [0.57, 0.85, 0.64],
        [0.22, 0.58, 0.33],
        [0.77, 0.25, 0.10],
        [0.05, 0.80, 0.55],
    ]
)


@dataclass(frozen=True)
class Probe:
    """One set of constructor arguments and one input shape."""

    name: str  # "book", "batch_1", "batch_3", "fewer_tokens", "long", "head_size", "sizes"
    d_in: int = 3
    d_out: int = 2
    context_length: int = 6
    num_heads: int = 2
    batch: int = 2  # 0: one sequence without a batch dimension, as v1 and v2 take it
    tokens: int = 6

    @property
    def head_dim(self) -> int:
        return self.d_out // self.num_heads

    def square(self) -> Probe:
        """The probe with ``d_in = d_out``, for code that cannot take them apart (no
        ``d_out`` parameter, or ``nn.MultiheadAttention``); two columns a head at least."""
        size = max(self.d_in, self.d_out, 2 * self.num_heads)
        size += -size % self.num_heads
        return replace(self, d_in=size, d_out=size)

    def shape(self) -> tuple[int, ...]:
        """What the probe builds and runs: two probes of one shape are one probe."""
        return (self.d_in, self.d_out, self.context_length, self.num_heads, self.batch, self.tokens)

    def values(self) -> dict[str, object]:
        """The book's constructor arguments for this probe."""
        return {
            "d_in": self.d_in,
            "d_out": self.d_out,
            "context_length": self.context_length,
            "dropout": 0.0,
            "num_heads": self.num_heads,
            "qkv_bias": False,
        }

    def inputs(self) -> Tensor:
        """The book's tokens (a batch of copies, as the book stacks them) at the book's
        shape; otherwise random tokens, different in every sequence of the batch."""
        if self.name == "book" and self.d_in == INPUTS.shape[-1]:
            return INPUTS if self.batch == 0 else torch.stack([INPUTS] * self.batch)
        generator = torch.Generator().manual_seed(_SEEDS[self.name])
        shape = (
            (self.tokens, self.d_in) if self.batch == 0 else (self.batch, self.tokens, self.d_in)
        )
        return torch.rand(shape, generator=generator)


_SEEDS = {"book": 0, "batch_1": 1, "batch_3": 3, "fewer_tokens": 4, "head_size": 5, "sizes": 6,
          "long": 7}  # fmt: skip
BOOK = Probe("book")
# A context longer than the book's six tokens, filled: a mask made for six tokens outside the
# module (a notebook's global), or one cut to the wrong size, shows here.
LONG = Probe("long", context_length=10, tokens=10)
_SINGLE = (Probe("book", batch=0), Probe("sizes", d_in=2, d_out=4, batch=0, tokens=5))
_CAUSAL = (
    BOOK,
    Probe("batch_1", batch=1),
    Probe("batch_3", batch=3),
    Probe("fewer_tokens", tokens=4),
    LONG,
    Probe("sizes", d_in=5, d_out=3, context_length=7, batch=3, tokens=5),
)
_MULTIHEAD = (
    BOOK,
    Probe("head_size", d_out=4),
    Probe("batch_1", batch=1),
    Probe("batch_3", batch=3),
    Probe("fewer_tokens", tokens=4),
    LONG,
    Probe("sizes", d_in=5, d_out=6, context_length=7, num_heads=3, batch=3, tokens=5),
)
PROBES = {
    "SelfAttention_v1": _SINGLE,
    "SelfAttention_v2": _SINGLE,
    "CausalAttention": _CAUSAL,
    "MultiHeadAttentionWrapper": _CAUSAL,
    "MultiHeadAttention": _MULTIHEAD,
}


def describe(probe: Probe) -> dict:
    """The probe as a message: what it changes from the book's shapes."""
    key = f"probe_{probe.name}" + (
        "_unbatched" if probe.name == "sizes" and not probe.batch else ""
    )
    return {**vars(probe), "key": key, "head_dim": probe.head_dim}
