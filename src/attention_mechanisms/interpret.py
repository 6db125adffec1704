"""Beyond the book: read what the heads of a trained
[AttentionOnlyTransformer][attention_mechanisms.induction.AttentionOnlyTransformer] do.

Two ways in: look at a head's weights (`attention_patterns`, `head_scores`), and take the head
out to see what the model loses (`zero_heads`, `copy_accuracy`). Each works through hooks on
the package's own ``MultiHeadAttention``, whose code stays as chapter 3 wrote it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import torch
from torch import Tensor, nn

from .induction import AttentionOnlyTransformer
from .multihead import MultiHeadAttention

__all__ = ["attention_patterns", "copy_accuracy", "head_scores", "zero_heads"]


def _blocks(model: AttentionOnlyTransformer) -> list[MultiHeadAttention]:
    return [block for block in model.blocks if isinstance(block, MultiHeadAttention)]


def attention_patterns(model: AttentionOnlyTransformer, ids: Tensor) -> list[Tensor]:
    """Every head's attention weights on ``ids``: one ``(b, h, T, T)`` tensor per layer.

    ``MultiHeadAttention.forward`` passes its weights through ``self.dropout``; a forward
    hook there reads them without changing a line of the class.
    """
    found: list[Tensor] = []
    hooks = [
        block.dropout.register_forward_hook(lambda _m, _i, out: found.append(out.detach()))
        for block in _blocks(model)
    ]
    run_with_hooks(model, ids, hooks)
    return found


def run_with_hooks(model: AttentionOnlyTransformer, ids: Tensor, hooks: list) -> None:
    """Run ``model`` on ``ids`` once, without gradients, then remove ``hooks``."""
    try:
        with torch.no_grad():
            model(ids)
    finally:
        for hook in hooks:
            hook.remove()


@contextmanager
def zero_heads(model: AttentionOnlyTransformer, heads: Sequence[tuple[int, int]]) -> Iterator[None]:
    """Within the ``with`` block, the ``(layer, head)`` pairs in ``heads`` write nothing.

    Each head's context vectors are the columns ``head * head_dim`` to ``(head + 1) *
    head_dim - 1`` of what ``out_proj`` receives; a hook sets them to zero.
    """
    blocks = _blocks(model)
    for layer, head in heads:  # every pair checked before any hook is in place
        if not 0 <= layer < len(blocks):
            raise ValueError(f"layer must be in [0, {len(blocks)}); got {layer}")
        if not 0 <= head < blocks[layer].num_heads:
            raise ValueError(
                f"head must be in [0, {blocks[layer].num_heads}); got {head} (layer {layer})"
            )
    hooks = []
    for layer, head in heads:
        block = blocks[layer]
        columns = slice(head * block.head_dim, (head + 1) * block.head_dim)

        def silence(_module: nn.Module, args: tuple[Tensor], columns: slice = columns) -> tuple:
            (context_vec,) = args  # (b, T, d_out): the heads side by side
            context_vec = context_vec.clone()
            context_vec[..., columns] = 0.0
            return (context_vec,)

        hooks.append(block.out_proj.register_forward_pre_hook(silence))
    try:
        yield
    finally:
        for hook in hooks:
            hook.remove()


def check_repeats(ids: Tensor, repeated: Tensor) -> None:
    if not isinstance(repeated, Tensor) or repeated.dtype != torch.bool:
        raise TypeError("repeated must be a bool tensor from repeated_tokens")
    if ids.dim() != 2 or repeated.shape != ids.shape:
        raise ValueError(
            f"ids and repeated must be (batch, tokens) of one shape, from repeated_tokens; "
            f"got {tuple(ids.shape)} and {tuple(repeated.shape)}"
        )
    if not repeated[:, 1:].any():
        raise ValueError("repeated marks no token after the first: nothing to measure")


def copy_accuracy(
    model: AttentionOnlyTransformer, ids: Tensor, repeated: Tensor
) -> tuple[float, float]:
    """How often the most likely next token is right, where the tokens before decide it
    and where they do not.

    ``ids`` and ``repeated`` come from
    [repeated_tokens][attention_mechanisms.repeats.repeated_tokens]. The prediction made at
    position ``t`` is of token ``t + 1``: it counts as *repeated* if ``repeated[:, t + 1]``
    (a later copy, not its first token), and as *random* otherwise (chance: ``1 / V``).

    Returns:
        ``(random, repeated)`` accuracies in ``[0, 1]``.
    """
    check_repeats(ids, repeated)
    with torch.no_grad():
        right = model(ids[:, :-1]).argmax(-1) == ids[:, 1:]  # (b, T - 1)
    target = repeated[:, 1:]
    return right[~target].float().mean().item(), right[target].float().mean().item()


def head_scores(
    model: AttentionOnlyTransformer, ids: Tensor, repeated: Tensor
) -> tuple[Tensor, Tensor]:
    """Each head's previous-token and prefix-matching score on ``ids`` from
    [repeated_tokens][attention_mechanisms.repeats.repeated_tokens].

    - previous-token score: the mean weight that a token puts on the token just before it,
      over every position but the start token;
    - prefix-matching score: the mean weight that a token whose next token repeats an earlier
      copy puts on the tokens that follow an earlier occurrence of its own token (Olsson et
      al.'s definition): in a third copy, on the token after it in each copy before.

    Returns:
        Two ``(num_layers, num_heads)`` tensors, in that order.
    """
    check_repeats(ids, repeated)
    num_tokens = ids.shape[1]
    queries = repeated[:, 1:]  # (b, T - 1): query t predicts a repeated token t + 1
    # follows[b, t, j]: key j + 1 comes right after an earlier occurrence of query t's token
    follows = ids[:, :-1, None] == ids[:, None, :-1]  # (b, T - 1, T - 1)
    follows &= torch.ones(num_tokens - 1, num_tokens - 1, dtype=torch.bool).tril(-1)
    rows = torch.arange(1, num_tokens)
    previous, prefix = [], []
    for weights in attention_patterns(model, ids):  # (b, h, T, T)
        previous.append(weights[:, :, rows, rows - 1].mean(dim=(0, 2)))  # (h,)
        after = (weights[:, :, :-1, 1:] * follows[:, None]).sum(dim=-1)  # (b, h, T - 1)
        prefix.append(after.transpose(0, 1)[:, queries].mean(dim=1))
    return torch.stack(previous), torch.stack(prefix)  # (num_layers, h) each
