"""Read a learner's weights as the book's projections, whatever form the code takes.

The book's classes hold one ``(d_in, d_out)`` matrix per role (query, key, value, and for
`MultiHeadAttention` the output projection), used as ``x @ W``. A learner may hold them as
``nn.Linear`` layers; as ``nn.Parameter`` matrices in either layout (``x @ W`` or
``x @ W.T``), or as ``(num_heads, d_in, head_dim)`` tensors; as one fused projection of
``3 * d_out`` (or ``2 * d_out`` for keys and values) split by ``chunk``, ``split`` or
``view``; as one small projection per head; or inside ``nn.MultiheadAttention``. Each is
read here as an `Affine` map of ``d_out`` columns, and `candidates` lists the ways of
assigning them to the book's roles, the likeliest first: by shape, then by name, then by
creation order. The checker keeps the first under which the learner's output equals the
book's; a wrong assignment cannot reproduce it.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass

import torch
from torch import Tensor, nn


@dataclass(frozen=True, eq=False)  # two maps are the same map only if they are one object
class Affine:
    """``x @ weight + bias``: one of the learner's projections, read as the book's."""

    weight: Tensor  # (n_in, n_out)
    bias: Tensor | None
    name: str  # the learner's attribute, e.g. "W_query" or "c_attn[q]"
    source: tuple  # which learner tensor (and part of it): two roles never share one
    layout: str = ""  # "W" or "W.T" for a learner's own matrix, read one way in a triple

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


def _readings(
    name: str, weight: Tensor, bias: Tensor | None, index: int, linear: bool
) -> list[Affine]:
    """The ways of reading a weight as ``x @ W``: an ``nn.Linear`` weight is ``(n_out,
    n_in)``; a learner's own matrix may be stored either way round, and a 3-D one holds a
    ``(d_in, head_dim)`` matrix per head (``(num_heads, head_dim, d_in)`` the other way)."""
    if linear:
        return [Affine(weight.T, bias, name, (index,))]
    if weight.dim() == 3:  # (h, d_in, head_dim) -> (d_in, h * head_dim), or from (h, hd, d_in)
        matrix, transposed = weight.permute(1, 0, 2).flatten(1), weight.permute(2, 0, 1).flatten(1)
    else:
        matrix, transposed = weight, weight.T
    return [
        Affine(matrix, None, name, (index,), "W"),
        Affine(transposed, None, f"{name}.T", (index,), "W.T"),
    ]


def learner_maps(module: nn.Module) -> list[list[Affine]]:
    """Every projection the module holds, in creation order, each with its readings."""
    maps: list[list[Affine]] = []
    for prefix, sub in module.named_modules():
        if isinstance(sub, nn.Linear):
            maps.append(_readings(prefix, sub.weight, sub.bias, len(maps), linear=True))
            continue
        if isinstance(sub, nn.MultiheadAttention) and sub.in_proj_weight is not None:
            name = f"{prefix}.in_proj_weight".lstrip(".")
            maps.append(_readings(name, sub.in_proj_weight, sub.in_proj_bias, len(maps), True))
            continue
        for name, parameter in sub.named_parameters(recurse=False):
            if parameter.dim() in (2, 3):
                full = f"{prefix}.{name}".lstrip(".")
                linear = isinstance(sub, nn.MultiheadAttention)  # q_proj_weight, k_proj_weight
                maps.append(_readings(full, parameter, None, len(maps), linear))
    return maps


def _split(fused: Affine, parts: int, heads: int, per_head: bool) -> list[Affine]:
    """One fused ``(n_in, parts * d)`` map cut into ``parts`` maps of ``d`` columns: in
    blocks (``chunk``, ``split``, ``view(b, t, 3, h, hd)``) or, ``per_head``, with each
    head's query, key and value side by side (``view(b, t, h, 3, hd)``)."""
    d = fused.weight.shape[-1] // parts

    def columns(weight: Tensor) -> list[Tensor]:
        if not per_head:
            return list(weight.split(d, dim=-1))
        grouped = weight.reshape(*weight.shape[:-1], heads, parts, d // heads)
        return [grouped[..., p, :].reshape(*weight.shape[:-1], d) for p in range(parts)]

    weights = columns(fused.weight)
    biases = columns(fused.bias) if fused.bias is not None else [None] * parts
    return [
        Affine(w, b, f"{fused.name}[{p}]", (*fused.source, p), fused.layout)
        for p, (w, b) in enumerate(zip(weights, biases, strict=True))
    ]


def split_map(fused: Affine, parts: int) -> list[Affine]:
    """A fused map cut into ``parts`` maps of equal width, in blocks (``chunk``, ``split``)."""
    return _split(fused, parts, 1, per_head=False)


def _join(pieces: list[Affine], name: str) -> Affine:
    """Per-head maps side by side: one map of all heads' columns, as the book's."""
    biases = [p.bias for p in pieces if p.bias is not None]
    bias = torch.cat(biases, dim=-1) if len(biases) == len(pieces) else None
    source = ("joined", *(p.source for p in pieces))
    return Affine(torch.cat([p.weight for p in pieces], dim=-1), bias, name, source)


_ROLE_NAMES = (("q", "query", "quer"), ("k", "key", "key"), ("v", "value", "val"))


def role_rank(affine: Affine) -> int:
    """0, 1 or 2 when the name says query, key or value; 3 when it says nothing."""
    words = set(re.split(r"[^a-z]+", affine.name.lower().replace("w_", "w ")))
    words |= {word[1:] for word in words if word.startswith("w") and len(word) > 1}
    for rank, (short, full, stem) in enumerate(_ROLE_NAMES):
        if {short, full} & words or any(word.startswith(stem) for word in words):
            return rank
    return 3


Triple = tuple[Affine, Affine, Affine]  # (query, key, value)


def _orders(triple: Triple) -> Iterator[Triple]:
    """The triple as named (or as created), then every other order."""
    first, second, third = sorted(triple, key=role_rank)
    named = (first, second, third)
    yield named
    for order in itertools.permutations(triple, 3):
        if any(a is not b for a, b in zip(order, named, strict=True)):
            yield order


def _of_shape(maps: list[list[Affine]], n_in: int, n_out: int) -> list[Affine]:
    return [a for readings in maps for a in readings if tuple(a.weight.shape) == (n_in, n_out)]


def _parts(maps: list[list[Affine]], d_in: int, d_out: int, heads: int) -> list[Affine]:
    """Every map of ``d_out`` columns: whole, the halves of a fused key-value map, or one
    role's per-head maps joined (each head's three in creation order)."""
    parts = _of_shape(maps, d_in, d_out)
    for fused in _of_shape(maps, d_in, 2 * d_out):
        parts += _split(fused, 2, heads, per_head=False)
    small = [r[0] for r in maps if heads > 1 and tuple(r[0].weight.shape) == (d_in, d_out // heads)]
    if len(small) == 3 * heads:
        groups = [sorted(small[3 * h : 3 * h + 3], key=role_rank) for h in range(heads)]
        parts += [_join([g[r] for g in groups], f"heads[{'qkv'[r]}]") for r in range(3)]
    return parts


def _consistent(triple: tuple[Affine, ...]) -> bool:
    """Three maps of three learner tensors, a learner's own matrices read the same way."""
    layouts = {a.layout for a in triple if a.layout}
    return len({a.source for a in triple}) == 3 and len(layouts) <= 1


def _triples(maps: list[list[Affine]], d_in: int, d_out: int, heads: int) -> Iterator[Triple]:
    """Every (query, key, value) the learner's maps can give: fused ones, then the others,
    those whose names say query, key and value first."""
    for fused in _of_shape(maps, d_in, 3 * d_out):
        for per_head in (False, True):
            query, key, value = _split(fused, 3, heads, per_head)
            yield from _orders((query, key, value))
    triples = [t for t in itertools.combinations(_parts(maps, d_in, d_out, heads), 3)]
    triples = [t for t in triples if _consistent(t)]  # creation order kept among equals
    triples.sort(key=lambda t: sorted(role_rank(a) for a in t) != [0, 1, 2])
    for triple in triples:
        yield from _orders(triple)


def _outs(maps: list[list[Affine]], d_out: int, used: set[int]) -> list[Affine | None]:
    """The output projection's candidates: a square map of a tensor not used yet, the one
    named like it first; or none."""
    square = [a for a in _of_shape(maps, d_out, d_out) if a.source[0] not in used]
    square.sort(key=lambda a: not re.search(r"out|proj|^o|_o", a.name.lower()))
    return [*square, None]


def candidates(
    module: nn.Module, role: str, d_in: int, d_out: int, num_heads: int
) -> Iterator[Mapping]:
    """Every assignment of the learner's maps to the book's roles, likeliest first."""
    maps = learner_maps(module)
    if role == "MultiHeadAttentionWrapper":
        yield from _wrapper(maps, d_in, d_out, num_heads)
        return
    for triple in _triples(maps, d_in, d_out, num_heads):
        if role != "MultiHeadAttention":
            yield Mapping((triple,))
            continue
        used = {root for a in triple for root in _roots(a.source)}
        for out in _outs(maps, d_out, used):
            yield Mapping((triple,), out, num_heads)


def _roots(source: tuple) -> list[int]:
    """The learner tensors a map comes from (a joined map, from several)."""
    if source[0] == "joined":
        return [root for part in source[1:] for root in _roots(part)]
    return [source[0]]


def _wrapper(maps: list[list[Affine]], d_in: int, d_out: int, heads: int) -> Iterator[Mapping]:
    """The wrapper's heads: each head's maps in creation order, three by three (or one fused
    map per head), the same order of roles in every head."""
    fused = [r[0] for r in maps if tuple(r[0].weight.shape) == (d_in, 3 * d_out)]
    if len(fused) == heads:
        for per_head in (False, True):
            splits = [_split(a, 3, 1, per_head) for a in fused]
            for i, j, k in itertools.permutations(range(3), 3):
                yield Mapping(tuple((s[i], s[j], s[k]) for s in splits))
    for layout in range(2):  # a learner's own matrices read as x @ W, then as x @ W.T
        separate = [r[min(layout, len(r) - 1)] for r in maps]
        separate = [a for a in separate if tuple(a.weight.shape) == (d_in, d_out)]
        if len(separate) != 3 * heads:
            continue
        groups = [separate[3 * h : 3 * h + 3] for h in range(heads)]
        for i, j, k in itertools.permutations(range(3), 3):
            yield Mapping(tuple((g[i], g[j], g[k]) for g in groups))
