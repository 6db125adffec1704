r"""Beyond the book: what attention learns. Two layers of chapter 3's attention, trained to copy.

A run of random tokens that comes back later in a sequence can be continued only by
*induction*: at a token of the later copy, find where that token stood before and predict
the token that came after it there (the task of [repeats][attention_mechanisms.repeats]).
A transformer with two attention layers, and nothing else, learns it with two kinds of
head (Elhage et al., 2021, "A mathematical framework for transformer circuits"):

- a **previous-token head** in layer 0: each position attends to the position before it
  and writes that token into the residual stream;
- an **induction head** in layer 1: its keys read what the previous-token head wrote, so a
  query for token $A$ matches the position *after* an earlier $A$, and its values copy the
  token found there into the prediction.

The model here is small: token embeddings, a residual stream, ``num_layers`` of chapter 3's
[MultiHeadAttention][attention_mechanisms.multihead.MultiHeadAttention] (causal, no
dropout) with rotary position embeddings, and an output projection to the vocabulary. No
MLP, no layer norm: the task does not need them, and without them every head writes
straight into the stream that the next layer and the output read.
[interpret][attention_mechanisms.interpret] and [circuits][attention_mechanisms.circuits]
read what each head learned.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

import torch
from torch import Tensor, nn

from .checks import check_like_parameters, check_size, check_tokens
from .multihead import MultiHeadAttention
from .repeats import VOCAB_SIZE, check_range, check_token_ids, repeated_tokens
from .rope import apply_rope, compute_rope_params

__all__ = [
    "ROPE_BASE",
    "AttentionOnlyTransformer",
    "History",
    "RotaryMultiHeadAttention",
    "Training",
    "torch_threads",
    "train_induction",
]

ROPE_BASE = 10_000  # theta_base of the rotary position embeddings, as in Llama 2


class RotaryMultiHeadAttention(MultiHeadAttention):
    """Chapter 3's `MultiHeadAttention` with one step more: queries and keys are rotated by
    their positions ([apply_rope][attention_mechanisms.rope.apply_rope], theta_base
    `ROPE_BASE`) before the scores, so a score depends on the query's and the key's vectors
    and the distance between them, not on where they stand. Same arguments, parameters and
    ``forward``."""

    cos: Tensor
    sin: Tensor

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        cos, sin = compute_rope_params(self.head_dim, ROPE_BASE, self.context_length)
        self.register_buffer("cos", cos, persistent=False)  # (context_length, head_dim)
        self.register_buffer("sin", sin, persistent=False)

    def forward(self, x: Tensor) -> Tensor:
        x = check_tokens(x, self.d_in, self.context_length)
        x = check_like_parameters(x, self.W_query.weight)
        xb = x if x.dim() == 3 else x.unsqueeze(0)  # (b, T, d_in): one sequence is a batch of 1
        b, num_tokens, _ = xb.shape
        keys = self.W_key(xb).view(b, num_tokens, self.num_heads, self.head_dim)
        queries = self.W_query(xb).view(b, num_tokens, self.num_heads, self.head_dim)
        values = self.W_value(xb).view(b, num_tokens, self.num_heads, self.head_dim)
        keys = apply_rope(keys.transpose(1, 2), self.cos, self.sin)  # (b, h, T, d_head)
        queries = apply_rope(queries.transpose(1, 2), self.cos, self.sin)
        values = values.transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)  # (b, h, T, T)
        attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)  # a no-op here; hooks read the weights
        context_vec = (attn_weights @ values).transpose(1, 2)  # (b, T, h, d_head)
        context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)
        out: Tensor = self.out_proj(context_vec)  # (b, T, d_out)
        return out if x.dim() == 3 else out.squeeze(0)


class AttentionOnlyTransformer(nn.Module):
    r"""Token embeddings, ``num_layers`` residual attention blocks, logits.

    $$
    x_0 = E_\text{tok}[\text{ids}], \qquad
    x_{l+1} = x_l + \operatorname{MultiHeadAttention}_l(x_l), \qquad
    \text{logits} = x_L W_\text{out}^\top
    $$

    Each block is a causal
    [RotaryMultiHeadAttention][attention_mechanisms.induction.RotaryMultiHeadAttention]
    with ``d_in = d_out = d_model`` and no dropout: position enters only as the rotation of
    queries and keys, so a head can look "one token back" or "after my earlier copy" with
    the same weights at every position. ``tok_emb`` has ``vocab_size + 1`` rows: the last
    is the start token of [repeated_tokens][attention_mechanisms.repeats.repeated_tokens],
    which the model reads but never predicts.

    Args:
        vocab_size: Number of tokens the model predicts, ``V``.
        context_length: Longest sequence the model reads.
        d_model: Size of the residual stream.
        num_heads: Heads per block; must divide ``d_model`` into an even ``head_dim``.
        num_layers: Number of attention blocks.

    Raises:
        TypeError: If an argument is not an int.
        ValueError: If an argument is not positive, or ``num_heads`` does not divide
            ``d_model`` into an even ``head_dim``.
    """

    def __init__(
        self, vocab_size: int, context_length: int, d_model: int, num_heads: int, num_layers: int
    ) -> None:
        super().__init__()
        self.vocab_size = check_size("vocab_size", vocab_size)
        self.context_length = check_size("context_length", context_length)
        d_model, num_heads = check_size("d_model", d_model), check_size("num_heads", num_heads)
        if d_model % num_heads or (d_model // num_heads) % 2:
            raise ValueError(
                f"num_heads must divide d_model into an even head_dim (rotary embeddings turn "
                f"pairs of features); got d_model={d_model}, num_heads={num_heads}"
            )
        self.tok_emb = nn.Embedding(vocab_size + 1, d_model)
        self.blocks = nn.ModuleList(
            RotaryMultiHeadAttention(d_model, d_model, context_length, 0.0, num_heads)
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
        x = self.tok_emb(ids)  # (b, T, d_model): the residual stream
        for block in self.blocks:
            x = x + block(x)  # each block adds what its heads found
        logits: Tensor = self.out_head(x)  # (b, T, V)
        return logits


# Threads for training: one. Each step of this model is a few hundred small kernels, too
# small for a second thread to share; and when another process holds a core, torch's threads
# wait on each other at every kernel. With one thread, load slows training in proportion to
# the share of a core it gets.
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


class History(NamedTuple):
    """The heads while they form: at each recorded step, the highest previous-token score
    of layer 0's heads and the highest prefix-matching score of the later layers' heads
    ([head_scores][attention_mechanisms.interpret.head_scores]), on fixed sequences."""

    steps: list[int]
    previous_token: list[float]
    induction: list[float]


class Training(NamedTuple):
    """What `train_induction` returns."""

    model: AttentionOnlyTransformer  # in eval mode
    losses: list[float]  # every step's
    history: History


def record_scores(model: AttentionOnlyTransformer, probe: Any, step: int, history: History) -> None:
    from .interpret import head_scores  # interpret reads this module's model

    previous, prefix = head_scores(model, *probe)
    history.steps.append(step)
    history.previous_token.append(previous[0].max().item())
    history.induction.append(prefix[1:].max().item() if len(prefix) > 1 else float("nan"))


def train_induction(
    *,
    vocab_size: int = VOCAB_SIZE,
    lengths: tuple[int, int] = (8, 48),
    d_model: int = 32,
    num_heads: int = 2,
    num_layers: int = 2,
    steps: int = 1000,
    batch_size: int = 64,
    lr: float = 1e-2,
    weight_decay: float = 0.3,
    record_every: int = 20,
    seed: int = 123,
) -> Training:
    """Train an [AttentionOnlyTransformer][attention_mechanisms.induction.AttentionOnlyTransformer]
    to continue repeats wherever they stand.

    Every step draws a length from ``lengths`` and a batch of the chapter's
    [repeated_tokens][attention_mechanisms.repeats.repeated_tokens] of that length, and
    takes an AdamW step on the cross-entropy of every next token. Short sequences put few
    tokens between a copy and its repeat, which gives the heads a clear signal early; long
    ones train the later positions. Weight decay applies to ``W_value``
    and ``out_proj`` only, what each head writes, so that the queries and keys stay free to
    sharpen. Every ``record_every`` steps (and before the first) the `History` scores the
    heads on 64 fixed sequences of the longest length. The defaults are the chapter's: on
    the same machine, ``train_induction()`` returns its model bit for bit.

    Args:
        vocab_size: Number of ordinary tokens.
        lengths: Shortest and longest sequence (after the start token); ``context_length``
            is ``1 + lengths[1]``.
        d_model: Size of the residual stream.
        num_heads: Heads per layer.
        num_layers: Attention layers (with one, the `History`'s induction scores are NaN).
        steps: Optimizer steps.
        batch_size: Sequences per step.
        lr: AdamW's learning rate.
        weight_decay: AdamW's weight decay on ``W_value`` and ``out_proj``.
        record_every: Steps between two records of the `History`.
        seed: Seeds the initial weights (``torch.manual_seed``) and the data (a generator).

    Training runs on one torch thread (`TRAINING_THREADS`), whatever the process has set,
    and the process's own setting is restored afterwards.

    Raises:
        TypeError: If a size is not an int.
        ValueError: If a size is not positive, ``lengths`` is not ``(low, high)`` with
            ``6 <= low <= high``, or ``vocab_size`` is below ``lengths[1]``.
    """
    low, high = check_range("lengths", lengths, low=6)  # the shortest layout: 3 copies of 2
    if check_size("vocab_size", vocab_size) < high:
        raise ValueError(
            f"vocab_size must be at least lengths[1] (a sequence's tokens are distinct); got "
            f"vocab_size={vocab_size}, lengths={tuple(lengths)}"
        )
    steps, batch_size = check_size("steps", steps), check_size("batch_size", batch_size)
    record_every = check_size("record_every", record_every)
    torch.manual_seed(seed)
    model = AttentionOnlyTransformer(vocab_size, 1 + high, d_model, num_heads, num_layers)
    # Weight decay on what each head writes (W_value, out_proj), none on where it looks.
    writes = ("W_value.weight", "out_proj.weight")
    decayed = [p for n, p in model.named_parameters() if n.endswith(writes)]
    rest = [p for n, p in model.named_parameters() if not n.endswith(writes)]
    groups: list[dict[str, Any]] = [{"params": decayed}, {"params": rest, "weight_decay": 0.0}]
    optimizer = torch.optim.AdamW(groups, lr=lr, weight_decay=weight_decay)
    data = torch.Generator().manual_seed(seed)
    losses: list[float] = []
    history = History([], [], [])
    with torch_threads(TRAINING_THREADS):  # a small model: one thread, fast even on a busy CPU
        probe = repeated_tokens(
            64, high, vocab_size, generator=torch.Generator().manual_seed(~seed)
        )
        record_scores(model, probe, 0, history)
        for step in range(1, steps + 1):
            length = int(torch.randint(low, high + 1, (1,), generator=data))
            ids, _ = repeated_tokens(batch_size, length, vocab_size, generator=data)
            logits = model(ids[:, :-1])  # (b, T, V): a prediction at every token but the last
            loss = nn.functional.cross_entropy(logits.flatten(0, 1), ids[:, 1:].flatten())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            if step % record_every == 0:
                record_scores(model, probe, step, history)
    return Training(model.eval(), losses, history)
