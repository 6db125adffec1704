"""Read a learner's weights into the package's class, to compute what the package computes
with them: by name where the learner's parameters carry the package's names (an
``nn.Parameter`` stored either way round too); else by their shapes, the projections whole or
cut into equal parts (a fused key-value projection), choosing the first reading under which
the package's class gives the learner's output (`load`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping

import torch
from torch import Tensor, nn

from .messages import Message, msg
from .subject import call, close
from .weights import Affine, learner_maps, split_map


def _by_name(mine: Mapping[str, Tensor], name: str, shape: torch.Size) -> Tensor | None:
    """The learner's tensor for the package's parameter ``name``: the same name, or the
    attribute itself (``W_query`` for ``W_query.weight``), either way round."""
    for candidate in (name, name.removesuffix(".weight")):
        tensor = mine.get(candidate)
        if tensor is not None and tensor.shape == shape:
            return tensor
        if tensor is not None and tensor.dim() == 2 and tensor.shape == shape[::-1]:
            return tensor.T
    return None


def named_reading(learner: nn.Module, book: nn.Module) -> list[Tensor] | None:
    """The learner's tensors for the package's parameters by name, if every one is there."""
    mine = dict(learner.named_parameters())
    found = [_by_name(mine, name, p.shape) for name, p in book.named_parameters()]
    return [t for t in found if t is not None] if all(t is not None for t in found) else None


def _pool(learner: nn.Module) -> list[Affine]:
    """Every projection of the learner's, whole or cut into two or three equal parts (a fused
    key-value or query-key-value projection), each read as ``x @ W + b``."""
    whole = [a for readings in learner_maps(learner) for a in readings]
    parts = [
        piece
        for a in whole
        for n in (2, 3)
        if a.weight.shape[-1] % n == 0
        for piece in split_map(a, n)
    ]
    return whole + parts


def _shaped(learner: nn.Module, book: nn.Module) -> list[list[Affine | Tensor]]:
    """For each of the package's parameters, in order, what of the learner's could fill it:
    projections of its shape for an ``nn.Linear``, tensors of its shape for the others."""
    pool, others = _pool(learner), [p for p in learner.parameters() if p.dim() < 2]
    options: list[list[Affine | Tensor]] = []
    for name, p in book.named_parameters():
        if name.endswith(".bias"):
            continue  # read with its weight
        if p.dim() == 2:
            options.append([a for a in pool if tuple(a.weight.shape) == tuple(p.shape[::-1])])
        else:
            options.append([t for t in others if t.shape == p.shape])
    return options


def _copy(book: nn.Module, chosen: tuple[Affine | Tensor, ...]) -> bool:
    """Fill ``book`` with ``chosen``; False where a projection has a bias the package's lacks."""
    matrices = iter(chosen)
    with torch.no_grad():
        for name, p in book.named_parameters():
            if name.endswith(".bias"):
                continue
            source = next(matrices)
            if isinstance(source, Tensor):
                p.copy_(source)
                continue
            p.copy_(source.weight.T)
            bias = dict(book.named_parameters()).get(name.removesuffix("weight") + "bias")
            if bias is None and source.bias is not None:
                return False
            if bias is not None:
                bias.copy_(source.bias if source.bias is not None else torch.zeros_like(bias))
    return True


def _key(item: Affine | Tensor) -> tuple:
    """Which learner tensor (and part of it) an option is: two parameters never share one."""
    return item.source if isinstance(item, Affine) else (id(item),)


def _assignments(options: list[list[Affine | Tensor]]) -> Iterator[tuple[Affine | Tensor, ...]]:
    """Each choice of one option per parameter, no learner tensor used twice (its parts, a
    fused projection's, may fill several), in order of the options."""

    def fits(key: tuple, used: list[tuple]) -> bool:
        same = [u for u in used if u[0] == key[0]]
        return key not in used and all(len(u) > 1 and len(key) > 1 for u in same)

    def extend(chosen: list[Affine | Tensor], used: list[tuple]) -> Iterator[tuple]:
        if len(chosen) == len(options):
            yield tuple(chosen)
            return
        for option in options[len(chosen)]:
            if fits(_key(option), used):
                yield from extend([*chosen, option], [*used, _key(option)])

    return extend([], [])


SEARCH = 512  # at most this many ways of reading the learner's weights are tried


def load(learner: nn.Module, book: nn.Module, x: Tensor, y: object) -> tuple[str, Message | None]:
    """Fill ``book`` with the learner's weights: by name; else the first reading, by shape,
    under which ``book`` gives the learner's output ``y`` (else the first by shape).

    Returns:
        How they were read (a message key), and why they could not be, if they could not.
    """
    named = named_reading(learner, book)
    if named is not None:
        with torch.no_grad():
            for p, tensor in zip(book.parameters(), named, strict=True):
                p.copy_(tensor)
        return "how_by_name", None
    readings = list(itertools.islice(_assignments(_shaped(learner, book)), SEARCH))
    for chosen in readings:
        if _copy(book, chosen) and close(call(book, x), y):
            return "how_by_shape", None
    problem = _unread(learner, book)  # a parameter named as the package's, of another shape
    if problem["key"] == "fail_weight_missing" and readings and _copy(book, readings[0]):
        return "how_by_shape", None
    return "", problem


def _unread(learner: nn.Module, book: nn.Module) -> Message:
    """Why the learner's weights cannot be read: the first of the package's that is missing."""
    mine = dict(learner.named_parameters())
    name, p = next((n, p) for n, p in book.named_parameters() if _by_name(mine, n, p.shape) is None)
    seen = mine.get(name, mine.get(name.removesuffix(".weight")))
    return msg(
        "fail_weight_shape" if seen is not None else "fail_weight_missing",
        name=name, expected=str(tuple(p.shape)),
        seen=str(tuple(seen.shape)) if seen is not None else "",
        shapes=str([tuple(t.shape) for t in mine.values()]),
    )  # fmt: skip
