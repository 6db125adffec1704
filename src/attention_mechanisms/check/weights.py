"""Read a learner's weights as the book's projections, whatever form the code takes.

The book's classes hold one ``(d_in, d_out)`` matrix per role (query, key, value, and for
`MultiHeadAttention` the output projection), used as ``x @ W``. A learner may hold them as
``nn.Linear`` layers, as ``nn.Parameter`` matrices in either layout (``x @ W`` or
``x @ W.T``), as one fused ``3 * d_out`` projection split by ``chunk``, ``split`` or
``view``, or inside ``nn.MultiheadAttention``. Each is read here as an `Affine` map, and
`candidates` lists the ways of assigning those maps to the book's roles: by shape first,
then by name, then by creation order. The checker keeps the first assignment under which
the learner's output equals the book's; an assignment that is wrong cannot reproduce it.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass

from torch import Tensor, nn


@dataclass(frozen=True, eq=False)  # two maps are the same map only if they are one object
class Affine:
    """``x @ weight + bias``: one of the learner's projections, read as the book's."""

    weight: Tensor  # (n_in, n_out)
    bias: Tensor | None
    name: str  # the learner's attribute, e.g. "W_query" or "c_attn[q]"
    tensor: int  # which learner tensor it comes from (two roles never share one)

    def __call__(self, x: Tensor) -> Tensor:
        out = x @ self.weight
        return out if self.bias is None else out + self.bias


@dataclass(frozen=True)
class Mapping:
    """The learner's maps in the book's roles: ``(query, key, value)`` for each head (one
    head for every class but the wrapper), and the output projection, if any."""

    heads: tuple[tuple[Affine, Affine, Affine], ...]
    out: Affine | None = None
    num_heads: int = 1  # the heads that MultiHeadAttention splits its projections into


def _readings(name: str, weight: Tensor, bias: Tensor | None, index: int, linear: bool):
    """The ways of reading a 2-D weight as ``x @ W``: an ``nn.Linear`` weight is
    ``(n_out, n_in)``; a learner's own parameter may be stored either way round."""
    if linear:
        return [Affine(weight.T, bias, name, index)]
    return [Affine(weight, None, name, index), Affine(weight.T, None, f"{name}.T", index)]


def learner_maps(module: nn.Module) -> list[list[Affine]]:
    """Every projection the module holds, in creation order, each with its readings."""
    maps: list[list[Affine]] = []
    for prefix, sub in module.named_modules():
        own = dict(sub.named_parameters(recurse=False))
        if isinstance(sub, nn.Linear):
            maps.append(_readings(prefix, sub.weight, sub.bias, len(maps), linear=True))
            continue
        if isinstance(sub, nn.MultiheadAttention) and sub.in_proj_weight is not None:
            name = f"{prefix}.in_proj_weight".lstrip(".")
            maps.append(_readings(name, sub.in_proj_weight, sub.in_proj_bias, len(maps), True))
            continue
        for name, parameter in own.items():
            if parameter.dim() == 2:
                full = f"{prefix}.{name}".lstrip(".")
                linear = isinstance(sub, nn.MultiheadAttention)  # q_proj_weight, k_proj_weight
                maps.append(_readings(full, parameter, None, len(maps), linear))
    return maps


def _split(fused: Affine, parts: int, heads: int, per_head: bool) -> list[Affine]:
    """One fused ``(n_in, parts * d)`` map cut into ``parts`` maps of ``d`` columns:
    in blocks (``chunk``, ``split``, ``view(b, t, 3, h, hd)``) or, ``per_head``, with each
    head's query, key and value side by side (``view(b, t, h, 3, hd)``)."""
    width = fused.weight.shape[-1]
    d = width // parts

    def columns(weight: Tensor) -> list[Tensor]:
        if not per_head:
            return list(weight.split(d, dim=-1))
        grouped = weight.reshape(*weight.shape[:-1], heads, parts, d // heads)
        return [grouped[..., p, :].reshape(*weight.shape[:-1], d) for p in range(parts)]

    weights = columns(fused.weight)
    biases = columns(fused.bias) if fused.bias is not None else [None] * parts
    return [
        Affine(w, b, f"{fused.name}[{'qkv'[p]}]", fused.tensor)
        for p, (w, b) in enumerate(zip(weights, biases, strict=True))
    ]


_ROLE_NAMES = (("q", "query"), ("k", "key"), ("v", "value"))


def _role_rank(affine: Affine) -> int:
    """0, 1 or 2 when the name says query, key or value; 3 when it says nothing."""
    words = set(re.split(r"[^a-z]+", affine.name.lower().replace("w_", "w ")))
    words |= {word[1:] for word in words if word.startswith("w") and len(word) > 1}
    for rank, names in enumerate(_ROLE_NAMES):
        if words & set(names) or any(word.startswith(names[1]) for word in words):
            return rank
    return 3


def _orders(triple: tuple[Affine, ...]) -> Iterator[tuple[Affine, Affine, Affine]]:
    """The triple as named (or as created), then every other order."""
    named = tuple(sorted(triple, key=_role_rank))
    yield named  # type: ignore[misc]
    for order in itertools.permutations(triple):
        if order != named:
            yield order  # type: ignore[misc]


def _of_shape(maps: list[list[Affine]], n_in: int, n_out: int) -> list[Affine]:
    found = []
    for readings in maps:
        found += [a for a in readings if tuple(a.weight.shape) == (n_in, n_out)]
    return found


def _triples(maps: list[list[Affine]], d_in: int, d_out: int, heads: int):
    """Every (query, key, value) the learner's maps can give: fused ones, then separate."""
    for fused in _of_shape(maps, d_in, 3 * d_out):
        for per_head in (False, True):
            yield from _orders(tuple(_split(fused, 3, heads, per_head)))
    separate = _of_shape(maps, d_in, d_out)
    for triple in itertools.combinations(separate, 3):
        if len({a.tensor for a in triple}) == 3:
            yield from _orders(triple)


def _outs(maps: list[list[Affine]], d_out: int, used: set[int]) -> list[Affine | None]:
    """The output projection's candidates: a square map of a tensor not used yet, the one
    named like it first; or none."""
    square = [a for a in _of_shape(maps, d_out, d_out) if a.tensor not in used]
    square.sort(key=lambda a: not re.search(r"out|proj|^o|_o", a.name.lower()))
    return [*square, None]


def candidates(
    module: nn.Module, role: str, d_in: int, d_out: int, num_heads: int
) -> Iterator[Mapping]:
    """Every assignment of the learner's maps to the book's roles, most likely first."""
    maps = learner_maps(module)
    if role == "MultiHeadAttentionWrapper":
        yield from _wrapper(maps, d_in, d_out, num_heads)
        return
    for triple in _triples(maps, d_in, d_out, num_heads):
        if role != "MultiHeadAttention":
            yield Mapping((triple,))
            continue
        for out in _outs(maps, d_out, {a.tensor for a in triple}):
            yield Mapping((triple,), out, num_heads)


def _wrapper(maps: list[list[Affine]], d_in: int, d_out: int, heads: int) -> Iterator[Mapping]:
    """The wrapper's heads: each head's maps in creation order, three by three (or one fused
    map per head), the same order of roles in every head."""
    fused = _of_shape(maps, d_in, 3 * d_out)
    if len({a.tensor for a in fused}) == heads:
        for per_head in (False, True):
            splits = [tuple(_split(a, 3, 1, per_head)) for a in fused]
            for order in itertools.permutations(range(3)):
                yield Mapping(tuple(tuple(s[i] for i in order) for s in splits))  # type: ignore[misc]
    separate = _first_readings(_of_shape(maps, d_in, d_out))
    if len(separate) != 3 * heads:
        return
    groups = [tuple(separate[3 * h : 3 * h + 3]) for h in range(heads)]
    for order in itertools.permutations(range(3)):
        yield Mapping(tuple(tuple(g[i] for i in order) for g in groups))  # type: ignore[misc]


def _first_readings(affines: list[Affine]) -> list[Affine]:
    """One reading per learner tensor (the first that has the shape asked for)."""
    seen: set[int] = set()
    kept = []
    for affine in affines:
        if affine.tensor not in seen:
            seen.add(affine.tensor)
            kept.append(affine)
    return kept
