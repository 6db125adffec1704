r"""Beyond the book: read a trained
[AttentionOnlyTransformer][attention_mechanisms.induction.AttentionOnlyTransformer] as
circuits, from its weights (Elhage et al., 2021, "A mathematical framework for transformer
circuits").

With no MLP and no layer norm, the logits are a sum: the token embedding and what each head
wrote, each read by the output head. So a head's effect can be followed through the weights
alone, token by token:

- `qk_circuit`: how strongly an induction head's query for token $a$ matches a key whose
  previous token (written there by a previous-token head) is $b$;
- `ov_circuit`: which logits a head raises when it attends to token $a$;
- `logit_attribution`: how much each head's output adds to the right token's logit;
- `remove_from`: take one head's output out of what a later layer's queries, keys or
  values read, and leave the rest of the model as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import cast

import torch
from torch import Tensor, nn

from .induction import AttentionOnlyTransformer, RotaryMultiHeadAttention
from .rope import apply_rope

__all__ = ["head_outputs", "logit_attribution", "ov_circuit", "qk_circuit", "remove_from"]

ROLES = {"query": "W_query", "key": "W_key", "value": "W_value"}


def _head_weights(block: RotaryMultiHeadAttention, head: int) -> dict[str, Tensor]:
    """One head's rows of ``W_query``, ``W_key``, ``W_value`` and columns of ``out_proj``."""
    rows = slice(head * block.head_dim, (head + 1) * block.head_dim)
    return {
        "query": block.W_query.weight[rows],  # (d_head, d_model)
        "key": block.W_key.weight[rows],
        "value": block.W_value.weight[rows],
        "out": block.out_proj.weight[:, rows],  # (d_model, d_head)
    }


def _blocks(model: AttentionOnlyTransformer) -> list[RotaryMultiHeadAttention]:
    return [cast(RotaryMultiHeadAttention, block) for block in model.blocks]


def _check_head(model: AttentionOnlyTransformer, layer: int, head: int) -> RotaryMultiHeadAttention:
    if not 0 <= layer < len(model.blocks):
        raise ValueError(f"layer must be in [0, {len(model.blocks)}); got {layer}")
    block = _blocks(model)[layer]
    if not 0 <= head < block.num_heads:
        raise ValueError(f"head must be in [0, {block.num_heads}); got {head} (layer {layer})")
    return block


@torch.no_grad()
def ov_circuit(model: AttentionOnlyTransformer, layer: int, head: int) -> Tensor:
    """``(V, V)``: row ``a`` is what the head adds to each logit when it attends, fully, to a
    position holding token ``a`` (its token embedding alone)."""
    w = _head_weights(_check_head(model, layer, head), head)
    tokens = model.tok_emb.weight[: model.vocab_size]  # (V, d_model)
    written = tokens @ w["value"].T @ w["out"].T  # (V, d_model)
    return written @ model.out_head.weight.T  # (V, V)


@torch.no_grad()
def qk_circuit(
    model: AttentionOnlyTransformer,
    induction: tuple[int, int],
    previous: tuple[int, int],
    distance: int,
) -> Tensor:
    """``(V, V)``: the score of the ``induction`` head's query for token ``a`` (row) against
    a key ``distance`` positions back whose previous token is ``b`` (column), as far as the
    ``previous`` head put ``b`` there (attending fully to it).

    Both heads are ``(layer, head)``; the previous-token head's layer must come first.
    """
    (layer, head), (earlier, prev_head) = induction, previous
    block = _check_head(model, layer, head)
    _check_head(model, earlier, prev_head)
    if earlier >= layer:
        raise ValueError(f"previous must be in a layer before {layer}; got layer {earlier}")
    if not 0 <= distance < model.context_length:
        raise ValueError(f"distance must be in [0, {model.context_length}); got {distance}")
    w, p = _head_weights(block, head), _head_weights(_blocks(model)[earlier], prev_head)
    tokens = model.tok_emb.weight[: model.vocab_size]  # (V, d_model)
    # Every query at position `distance`, every key at position 0 (a turn by 0: unchanged).
    queries = (tokens @ w["query"].T)[:, None, None]  # (V, 1, 1, d_head): V batches of one
    queries = apply_rope(queries, block.cos, block.sin, offset=distance)[:, 0, 0]  # (V, d_head)
    keys = tokens @ p["value"].T @ p["out"].T @ w["key"].T  # (V, d_head): b as written
    scores: Tensor = queries @ keys.T / block.head_dim**0.5  # (V, V)
    return scores


def head_outputs(model: AttentionOnlyTransformer, ids: Tensor) -> list[Tensor]:
    """What each head adds to the residual stream on ``ids``: one ``(b, h, T, d_model)``
    tensor per layer (``out_proj``'s bias, shared by the heads, is left out)."""
    found: list[Tensor] = []

    def split(block: RotaryMultiHeadAttention) -> Callable[[nn.Module, tuple[Tensor]], None]:
        def hook(_module: nn.Module, args: tuple[Tensor]) -> None:
            context = args[0].unflatten(-1, (block.num_heads, block.head_dim))  # (b, T, h, d)
            weight = block.out_proj.weight.unflatten(1, (block.num_heads, block.head_dim))
            found.append(torch.einsum("bthd,mhd->bhtm", context, weight).detach())

        return hook

    hooks = [block.out_proj.register_forward_pre_hook(split(block)) for block in _blocks(model)]
    try:
        with torch.no_grad():
            model(ids)
    finally:
        for hook in hooks:
            hook.remove()
    return found


@torch.no_grad()
def logit_attribution(model: AttentionOnlyTransformer, ids: Tensor, repeated: Tensor) -> Tensor:
    """``(num_layers, num_heads)``: how much each head adds, on average, to the logit of the
    right token above the mean logit, at the predictions of repeated tokens (the direct
    path: through the output head only, not through later layers)."""
    unembed = model.out_head.weight  # (V, d_model)
    direction = unembed - unembed.mean(dim=0)  # (V, d_model): a logit above the mean
    target = ids[:, 1:][repeated[:, 1:]]  # (n,) the right tokens
    rows = []
    for outputs in head_outputs(model, ids[:, :-1]):  # (b, h, T, d_model)
        at = outputs.permute(0, 2, 1, 3)[repeated[:, 1:]]  # (n, h, d_model)
        rows.append((at * direction[target][:, None]).sum(dim=-1).mean(dim=0))  # (h,)
    return torch.stack(rows)


@contextmanager
def remove_from(
    model: AttentionOnlyTransformer, head: tuple[int, int], role: str
) -> Iterator[None]:
    """Within the ``with`` block, the layers after ``head``'s read the stream without that
    head's output in their ``role`` ("query", "key" or "value") alone; the head still
    writes into the stream, and every other input is unchanged."""
    if role not in ROLES:
        raise ValueError(f"role must be one of {sorted(ROLES)}; got {role!r}")
    layer, index = head
    block = _check_head(model, layer, index)
    columns = slice(index * block.head_dim, (index + 1) * block.head_dim)
    written: list[Tensor] = []

    def keep(_module: nn.Module, args: tuple[Tensor]) -> None:
        written[:] = [args[0][..., columns] @ block.out_proj.weight[:, columns].T]

    def subtract(_module: nn.Module, args: tuple[Tensor]) -> tuple[Tensor]:
        return (args[0] - written[0],)

    hooks = [block.out_proj.register_forward_pre_hook(keep)]
    for later in _blocks(model)[layer + 1 :]:
        hooks.append(getattr(later, ROLES[role]).register_forward_pre_hook(subtract))
    try:
        yield
    finally:
        for hook in hooks:
            hook.remove()
