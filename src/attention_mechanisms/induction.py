r"""Beyond the book: what attention learns. Two layers of chapter 3's attention, trained to copy.

A sequence of random tokens followed by the same tokens again can be continued only by
*induction*: at a token of the second copy, find where that token stood in the first copy
and predict the token that came after it there. A transformer with two attention layers,
and nothing else, learns it (Olsson et al., 2022, "In-context learning and induction
heads") with two kinds of head:

- a **previous-token head** in layer 0: each position attends to the position before it
  and writes that token into the residual stream;
- an **induction head** in layer 1: its keys read what the previous-token head wrote, so a
  query for token $A$ matches the position *after* an earlier $A$, and its values copy the
  token found there into the prediction.

The model here is small: token and position embeddings, a residual stream, ``num_layers``
of the package's [MultiHeadAttention][attention_mechanisms.multihead.MultiHeadAttention]
(causal, no dropout) and an output projection to the vocabulary. No MLP, no layer norm: the
task does not need them, and without them every head writes straight into the stream that
the next layer and the output read. [interpret][attention_mechanisms.interpret] reads what
each head learned.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import torch
from torch import Tensor, nn

from .checks import check_size
from .multihead import MultiHeadAttention

__all__ = [
    "HALF_LENGTHS",
    "SYMBOLS",
    "VOCAB_SIZE",
    "AttentionOnlyTransformer",
    "repeated_tokens",
    "spell",
    "torch_threads",
    "train_induction",
]

# The chapter's task: 64 tokens, copies of 4 to 12 of them (train_induction's defaults).
VOCAB_SIZE = 64
HALF_LENGTHS = (4, 12)
# One character per token id of the chapter's model, to read its sequences; the start token
# (id VOCAB_SIZE) is written "^".
SYMBOLS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789?!"


def spell(ids: Sequence[int] | Tensor) -> str:
    """A sequence of token ids as `SYMBOLS`, the start token as ``^``.

    Example:
        >>> spell([64, 0, 26, 52, 63])
        '^aA0!'
    """
    return "".join(SYMBOLS[i] if i < len(SYMBOLS) else "^" for i in map(int, ids))


def repeated_tokens(
    num_sequences: int,
    half_length: int,
    vocab_size: int,
    *,
    generator: torch.Generator | None = None,
) -> Tensor:
    """Random sequences that repeat themselves once, after a start token.

    Each row is the start token (id ``vocab_size``), then ``half_length`` tokens drawn
    uniformly, with replacement, from ``[0, vocab_size)``, then the same tokens again.

    Args:
        num_sequences: Number of rows.
        half_length: Tokens in each copy, ``L``.
        vocab_size: Number of ordinary tokens; the start token's id is ``vocab_size``.
        generator: Random generator to draw from (default: torch's global one).

    Returns:
        ``(num_sequences, 1 + 2 * L)`` token ids, int64.

    Example:
        >>> repeated_tokens(2, 3, 10, generator=torch.Generator().manual_seed(0))
        tensor([[10,  4,  9,  3,  4,  9,  3],
                [10,  0,  3,  9,  0,  3,  9]])
    """
    n, half = check_size("num_sequences", num_sequences), check_size("half_length", half_length)
    vocab_size = check_size("vocab_size", vocab_size)
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator or None; got {type(generator)}")
    first = torch.randint(0, vocab_size, (n, half), generator=generator)  # (n, L)
    start = torch.full((n, 1), vocab_size)  # (n, 1)
    return torch.cat([start, first, first], dim=1)  # (n, 1 + 2L)


def check_token_ids(ids: object, vocab_size: int, context_length: int) -> torch.Tensor:
    """Return ``ids`` if it is ``(batch, num_tokens)`` of integer ids in ``[0, vocab_size]``."""
    if not isinstance(ids, torch.Tensor):
        raise TypeError(f"ids must be a torch.Tensor of token ids; got {type(ids).__name__}")
    if ids.is_floating_point() or ids.is_complex() or ids.dtype == torch.bool:
        raise TypeError(f"ids must have an integer dtype (e.g. torch.int64); got {ids.dtype}")
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


def check_range(name: str, value: object) -> tuple[int, int]:
    """Return ``value`` if it is ``(low, high)``, two positive ints with ``low <= high``."""
    if not isinstance(value, tuple | list) or len(value) != 2:
        raise ValueError(f"{name} must be (low, high); got {value!r}")
    low, high = check_size(f"{name}[0]", value[0]), check_size(f"{name}[1]", value[1])
    if low > high:
        raise ValueError(f"{name} must be (low, high) with low <= high; got {tuple(value)}")
    return low, high


class AttentionOnlyTransformer(nn.Module):
    r"""Token and position embeddings, ``num_layers`` residual attention blocks, logits.

    $$
    x_0 = E_\text{tok}[\text{ids}] + E_\text{pos}, \qquad
    x_{l+1} = x_l + \operatorname{MultiHeadAttention}_l(x_l), \qquad
    \text{logits} = x_L W_\text{out}^\top
    $$

    Each block is a causal
    [MultiHeadAttention][attention_mechanisms.multihead.MultiHeadAttention] with
    ``d_in = d_out = d_model`` and no dropout. ``tok_emb`` has ``vocab_size + 1`` rows: the
    last is the start token of [repeated_tokens][attention_mechanisms.induction.repeated_tokens],
    which the model reads but never predicts.

    Shape notation:
        - ``V``: ``vocab_size``

    Args:
        vocab_size: Number of tokens the model predicts.
        context_length: Longest sequence the model reads (the rows of ``pos_emb``).
        d_model: Size of the residual stream.
        num_heads: Heads per block; must divide ``d_model``.
        num_layers: Number of attention blocks.

    Raises:
        TypeError: If an argument is not an int.
        ValueError: If an argument is not positive or ``num_heads`` does not divide
            ``d_model``.
    """

    def __init__(
        self, vocab_size: int, context_length: int, d_model: int, num_heads: int, num_layers: int
    ) -> None:
        super().__init__()
        self.vocab_size = check_size("vocab_size", vocab_size)
        self.context_length = check_size("context_length", context_length)
        d_model = check_size("d_model", d_model)
        self.tok_emb = nn.Embedding(vocab_size + 1, d_model)
        self.pos_emb = nn.Embedding(context_length, d_model)
        self.blocks = nn.ModuleList(
            MultiHeadAttention(d_model, d_model, context_length, 0.0, num_heads)
            for _ in range(check_size("num_layers", num_layers))
        )
        self.out_head = nn.Linear(d_model, vocab_size, bias=False)

    def forward(self, ids: Tensor) -> Tensor:
        """Logits for the token after each position.

        Args:
            ids: ``(b, T)`` token ids in ``[0, V]`` (``V`` is the start token).

        Returns:
            ``(b, T, V)`` logits.

        Raises:
            TypeError: If ``ids`` is not an integer tensor.
            ValueError: If ``ids`` is not 2-D, is longer than ``context_length`` or holds an
                id outside ``[0, V]``.
        """
        ids = check_token_ids(ids, self.vocab_size, self.context_length)
        positions = torch.arange(ids.shape[1], device=ids.device)  # (T,)
        x = self.tok_emb(ids) + self.pos_emb(positions)  # (b, T, d_model): the residual stream
        for block in self.blocks:
            x = x + block(x)  # each block adds what its heads found
        logits: Tensor = self.out_head(x)  # (b, T, V)
        return logits


# Threads for training: one. Each step of this model is a few hundred small kernels, too
# small for a second thread to share; and when another process holds a core, torch's threads
# wait on each other at every kernel: on two cores that two other processes kept busy, the
# chapter's training took 1,211 s with two threads and 86 s with one. With one thread, load
# slows training in proportion to the share of a core it gets.
TRAINING_THREADS = 1


@contextmanager
def torch_threads(count: int) -> Iterator[None]:
    """Run the block with ``count`` torch threads, then restore the number there was."""
    before = torch.get_num_threads()
    torch.set_num_threads(check_size("count", count))
    try:
        yield
    finally:
        torch.set_num_threads(before)


def train_induction(
    *,
    vocab_size: int = VOCAB_SIZE,
    half_lengths: tuple[int, int] = HALF_LENGTHS,
    d_model: int = 32,
    num_heads: int = 2,
    num_layers: int = 2,
    steps: int = 6000,
    batch_size: int = 64,
    lr: float = 3e-3,
    weight_decay: float = 0.3,
    seed: int = 123,
) -> tuple[AttentionOnlyTransformer, list[float]]:
    """Train an [AttentionOnlyTransformer][attention_mechanisms.induction.AttentionOnlyTransformer]
    to continue repeated random tokens.

    Every step draws one ``half_length`` uniformly from ``half_lengths`` (both ends included)
    and a batch of [repeated_tokens][attention_mechanisms.induction.repeated_tokens] of that
    length, and takes an AdamW step on the cross-entropy of every next token. Lengths vary
    so that no position tells where the copy starts: only induction continues them all.
    Weight decay applies to ``W_value`` and ``out_proj`` only, what each head writes: a head
    that the task does not need fades, and the queries and keys stay free to sharpen. The
    defaults are the chapter's model: ``train_induction()`` returns it bit for bit on the
    same machine.

    Args:
        vocab_size: Number of ordinary tokens.
        half_lengths: Shortest and longest copy; ``context_length`` is ``1 + 2 * longest``.
        d_model: Size of the residual stream.
        num_heads: Heads per layer.
        num_layers: Attention layers.
        steps: Optimizer steps.
        batch_size: Sequences per step.
        lr: AdamW's learning rate.
        weight_decay: AdamW's weight decay on ``W_value`` and ``out_proj``.
        seed: Seeds the initial weights (``torch.manual_seed``) and the data (a generator).

    Training runs on one torch thread (`TRAINING_THREADS`), whatever the process has set,
    and the process's own setting is restored afterwards.

    Returns:
        The model, in eval mode, and the loss of every step.

    Raises:
        TypeError: If a size is not an int.
        ValueError: If a size is not positive or ``half_lengths`` is not ``(low, high)`` with
            ``low <= high``.
    """
    low, high = check_range("half_lengths", half_lengths)
    steps, batch_size = check_size("steps", steps), check_size("batch_size", batch_size)
    torch.manual_seed(seed)
    model = AttentionOnlyTransformer(vocab_size, 1 + 2 * high, d_model, num_heads, num_layers)
    # Weight decay on what each head writes (W_value, out_proj), none on where it looks: a
    # head that the task does not need fades, and the others stay free to attend sharply.
    writes = ("W_value.weight", "out_proj.weight")
    decayed = [p for n, p in model.named_parameters() if n.endswith(writes)]
    rest = [p for n, p in model.named_parameters() if not n.endswith(writes)]
    groups: list[dict[str, Any]] = [{"params": decayed}, {"params": rest, "weight_decay": 0.0}]
    optimizer = torch.optim.AdamW(groups, lr=lr, weight_decay=weight_decay)
    data = torch.Generator().manual_seed(seed)
    losses = []
    with torch_threads(TRAINING_THREADS):  # a small model: one thread, fast even on a busy CPU
        for _ in range(steps):
            half_length = int(torch.randint(low, high + 1, (1,), generator=data))
            ids = repeated_tokens(batch_size, half_length, vocab_size, generator=data)
            logits = model(ids[:, :-1])  # (b, 2L, V): a prediction at every token but the last
            loss = nn.functional.cross_entropy(logits.flatten(0, 1), ids[:, 1:].flatten())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return model.eval(), losses
