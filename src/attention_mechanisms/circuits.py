r"""Beyond the book: read a trained
[AttentionOnlyTransformer][attention_mechanisms.induction.AttentionOnlyTransformer] as
circuits, from its weights (Elhage et al., 2021, "A mathematical framework for transformer
circuits").

With no MLP and no layer norm, the logits are a sum: the token embedding, what each head
wrote and the biases of ``out_proj``, each read by the output head. So a head's effect can
be followed through the weights alone, token by token:

- `qk_circuit`: how strongly an induction head's query for token $a$ matches a key whose
  previous token (written there by a previous-token head) is $b$;
- `ov_circuit`: which logits a head raises when it attends to token $a$;
- `logit_attribution`: how much each head's output adds to the right token's logit;
- `remove_from`: take heads' output out of what the later layers' queries, keys or values
  read, and leave the rest of the model as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import cast

import torch
from torch import Tensor, nn

from .induction import AttentionOnlyTransformer, RotaryMultiHeadAttention
from .interpret import check_repeats, run_with_hooks
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


def _pair(name: str, value: object) -> tuple[int, int]:
    """``value`` if it is a ``(layer, head)`` pair of ints."""
    if not isinstance(value, tuple | list) or len(value) != 2:
        raise ValueError(f"{name} must be a (layer, head) pair; got {value!r}")
    for number in value:
        if isinstance(number, bool) or not isinstance(number, int):
            raise TypeError(f"{name} must be a (layer, head) pair of ints; got {value!r}")
    return value[0], value[1]


def _check_head(model: AttentionOnlyTransformer, layer: int, head: int) -> RotaryMultiHeadAttention:
    layer, head = _pair("(layer, head)", (layer, head))
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
    (layer, head), (earlier, prev_head) = _pair("induction", induction), _pair("previous", previous)
    block = _check_head(model, layer, head)
    _check_head(model, earlier, prev_head)
    if earlier >= layer:
        raise ValueError(f"previous must be in a layer before {layer}; got layer {earlier}")
    if isinstance(distance, bool) or not isinstance(distance, int):
        raise TypeError(f"distance must be an int; got {distance!r}")
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
    run_with_hooks(model, ids, hooks)
    return found


@torch.no_grad()
def logit_attribution(model: AttentionOnlyTransformer, ids: Tensor, repeated: Tensor) -> Tensor:
    """``(num_layers, num_heads)``: how much each head adds, on average, to the logit of the
    right token above the mean logit, at the predictions of repeated tokens (the direct
    path: through the output head only, not through later layers)."""
    check_repeats(ids, repeated)
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
    model: AttentionOnlyTransformer, heads: Sequence[tuple[int, int]], role: str
) -> Iterator[None]:
    """Within the ``with`` block, the layers after each of ``heads`` read the stream without
    that head's output in their ``role`` ("query", "key" or "value") alone; the heads still
    write into the stream, and every other input is unchanged."""
    if role not in ROLES:
        raise ValueError(f"role must be one of {sorted(ROLES)}; got {role!r}")
    if isinstance(heads, tuple) and heads and not isinstance(heads[0], tuple | list):
        raise ValueError(f"heads must be a list of (layer, head) pairs; got {heads!r}")
    hooks = []
    for pair in heads:  # every pair checked before any hook is in place
        layer, index = _pair("heads", pair)
        _check_head(model, layer, index)
        if layer == len(model.blocks) - 1:
            raise ValueError(f"heads must be in a layer before the last ({layer}): none reads it")
    try:
        for layer, index in heads:
            hooks += _remove(model, layer, index, role)
        yield
    finally:
        for hook in hooks:
            hook.remove()


def _remove(model: AttentionOnlyTransformer, layer: int, index: int, role: str) -> list:
    """The hooks that take one head's output out of the later layers' ``role``."""
    block = _blocks(model)[layer]
    columns = slice(index * block.head_dim, (index + 1) * block.head_dim)
    written: list[Tensor] = []

    def keep(_module: nn.Module, args: tuple[Tensor]) -> None:
        written[:] = [args[0][..., columns] @ block.out_proj.weight[:, columns].T]

    def subtract(_module: nn.Module, args: tuple[Tensor]) -> tuple[Tensor]:
        return (args[0] - written[0],)

    hooks = [block.out_proj.register_forward_pre_hook(keep)]
    for later in _blocks(model)[layer + 1 :]:
        hooks.append(getattr(later, ROLES[role]).register_forward_pre_hook(subtract))
    return hooks
