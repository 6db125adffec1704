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
    try:
        with torch.no_grad():
            model(ids)
    finally:
        for hook in hooks:
            hook.remove()
    return found


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


def _half_length(ids: Tensor) -> int:
    if ids.dim() != 2 or ids.shape[1] % 2 == 0 or ids.shape[1] < 3:
        raise ValueError(
            f"ids must be (batch, 1 + 2 * half_length) from repeated_tokens; "
            f"got shape {tuple(ids.shape)}"
        )
    return (ids.shape[1] - 1) // 2


def copy_accuracy(model: AttentionOnlyTransformer, ids: Tensor) -> tuple[float, float]:
    """How often the most likely next token is right, in each copy of ``ids``.

    ``ids`` come from [repeated_tokens][attention_mechanisms.induction.repeated_tokens]
    with copies of ``L`` tokens. First copy: the predictions of its ``L`` tokens, made at
    positions ``0`` to ``L - 1`` (chance: ``1 / V``). Repeated copy: the predictions made
    at the second copy's tokens but its last, ``L - 1`` per row. The prediction at the
    first copy's last token, the start of the repeat, counts in neither.

    Returns:
        ``(first_copy, repeated_copy)`` accuracies in ``[0, 1]``.
    """
    half = _half_length(ids)
    with torch.no_grad():
        right = model(ids[:, :-1]).argmax(-1) == ids[:, 1:]  # (b, 2L)
    return right[:, :half].float().mean().item(), right[:, half + 1 :].float().mean().item()


def head_scores(model: AttentionOnlyTransformer, ids: Tensor) -> tuple[Tensor, Tensor]:
    """Each head's previous-token and prefix-matching score on repeated sequences ``ids``.

    - previous-token score: the mean weight that a token of the first copy puts on the
      token just before it;
    - prefix-matching score: the mean weight that a token of the second copy (but its last,
      which predicts nothing) puts on the tokens that follow an earlier copy of it (Olsson et
      al.'s definition): the token after its copy in the first half, and, where its token
      occurs more than once, the token after each other occurrence too.

    Returns:
        Two ``(num_layers, num_heads)`` tensors, in that order.
    """
    half = _half_length(ids)
    first = torch.arange(1, half + 1)  # positions of the first copy
    second = first[:-1] + half  # the second copy's, but the last: it predicts nothing
    # follows[b, i, j]: key j + 1 comes right after a copy of query second[i]'s token
    follows = ids[:, second, None] == ids[:, None, :-1]  # (b, L - 1, T - 1)
    follows &= torch.arange(ids.shape[1] - 1) < second[:, None]  # only keys the query sees
    previous, prefix = [], []
    for weights in attention_patterns(model, ids):  # (b, h, T, T)
        previous.append(weights[:, :, first, first - 1].mean(dim=(0, 2)))  # (h,)
        after = weights[:, :, second, 1:] * follows[:, None]  # (b, h, L - 1, T - 1)
        prefix.append(after.sum(dim=-1).mean(dim=(0, 2)))
    return torch.stack(previous), torch.stack(prefix)  # (num_layers, h) each
