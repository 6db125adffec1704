"""Causes found from how the learner's module behaves, not from a list of known mistakes.

- `exchanged`: the learner's projections carry the book's names (``W_query``, ``q_proj``...);
  the output equals the book's only when two of them trade roles (``keys @ queries.T``).
- `reused`: a stage equals another's: the values are the keys (``values = W_key(x)``).
- `unused`: a parameter that changes nothing when it changes (``W_value`` never read).
- `measured_divisor` and `scale_name`: the number the scores are divided by, measured by
  fitting it to the output, then named (``d_k ** 1/2`` is ``(d_k ** 1) / 2``).

Each is confirmed at every shape where the class ran, not only where it first differed.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import torch
from torch import Tensor, nn

from .messages import Message, msg
from .probes import Probe
from .reference import BOOK, Variant, book_forward
from .subject import LEARNER_ERRORS, ClassSubject, Outcome, call, close, measured_divisor
from .weights import Affine, Mapping, learner_maps, role_rank

ROLES = ("query", "key", "value")
_SINGLE_MAPPING = ("SelfAttention_v1", "SelfAttention_v2", "CausalAttention", "MultiHeadAttention")


def named(module: nn.Module, d_in: int, d_out: int) -> tuple[Affine, Affine, Affine] | None:
    """The projections whose names say query, key and value, one each, read as ``x @ W``;
    None when the names do not say it of exactly one projection each."""
    found: dict[int, Affine] = {}
    for readings in learner_maps(module):
        fitting = [a for a in readings if tuple(a.weight.shape) == (d_in, d_out)]
        rank = role_rank(fitting[0]) if fitting else 3
        if rank < 3:
            if rank in found:
                return None
            found[rank] = fitting[0]
    if len(found) != 3:
        return None
    return found[0], found[1], found[2]


def _ran(s: ClassSubject) -> list[Outcome]:
    """The outcomes of the probes where the class ran and gave the book's shape."""
    outcomes = [s.outcome(probe) for probe in s.probes]
    return [
        o for o in outcomes
        if isinstance(o.y, Tensor) and tuple(o.y.shape) == s.expected_shape(o.probe)
    ]  # fmt: skip


def _holds(s: ClassSubject, forward: Callable[[Outcome], Tensor | None]) -> bool:
    """Whether ``forward`` gives the learner's output at every probe where it ran."""
    outcomes = _ran(s)
    return bool(outcomes) and all(close(o.y, forward(o)) for o in outcomes)


def _out(s: ClassSubject, outcome: Outcome) -> Affine | None:
    mappings = s.mappings(outcome)
    return mappings[0].out if mappings else None


def _with_named(
    s: ClassSubject, order: tuple[int, int, int], variant: Variant = BOOK
) -> Callable[[Outcome], Tensor | None]:
    """The book's forward with the named projections in ``order`` (role -> named index)."""

    def forward(outcome: Outcome) -> Tensor | None:
        probe = outcome.probe
        maps = named(outcome.module, probe.d_in, probe.d_out) if outcome.module else None
        if maps is None:
            return None
        triple = (maps[order[0]], maps[order[1]], maps[order[2]])
        mapping = Mapping((triple,), _out(s, outcome), probe.num_heads)
        try:
            return book_forward(s.role, mapping, outcome.x, variant)
        except (RuntimeError, LookupError):
            return None

    return forward


def _orders(distinct: bool) -> list[tuple[int, int, int]]:
    """Each way of giving the three roles the named projections, other than as named:
    exchanged (every projection once) or reused (one projection twice)."""
    orders = [(a, b, c) for a, b, c in itertools.product(range(3), repeat=3)]
    return [o for o in orders if (len(set(o)) == 3) == distinct and o != (0, 1, 2)]


def _changed(s: ClassSubject, distinct: bool) -> list[tuple[str, str]] | None:
    """The roles computed by another role's projection, as (role, the projection's name)."""
    if s.role not in _SINGLE_MAPPING or not (outcomes := _ran(s)):
        return None
    first = outcomes[0]
    maps = named(first.module, first.probe.d_in, first.probe.d_out) if first.module else None
    if maps is None or _holds(s, _with_named(s, (0, 1, 2))):
        return None
    for order in _orders(distinct):
        if _holds(s, _with_named(s, order)):
            return [(ROLES[r], maps[order[r]].name) for r in range(3) if order[r] != r]
    return None


def exchanged(s: ClassSubject) -> list[tuple[str, str]] | None:
    """Roles whose named projections the output equals the book's only exchanged."""
    return _changed(s, distinct=True)


def reused(s: ClassSubject) -> list[tuple[str, str]] | None:
    """Roles computed by another role's projection, that role's own never read."""
    return _changed(s, distinct=False)


_ROLE_WORDS = {"query": "role_queries", "key": "role_keys", "value": "role_values"}
_VARIABLES = {"query": "queries", "key": "keys", "value": "values"}


def reused_message(s: ClassSubject, reused: list[tuple[str, str]]) -> Message:
    """ "the values equal the keys: values = W_key(x)? (W_value is never used)"."""
    role, name = reused[0]
    other = next(r for r in ROLES if _named_as(s, r) == name)
    return msg(
        "cause_reused", cls=s.cls.__name__, role=msg(_ROLE_WORDS[role]),
        other=msg(_ROLE_WORDS[other]), variable=_VARIABLES[role], name=name,
        own=_named_as(s, role),
    )  # fmt: skip


def _named_as(s: ClassSubject, role: str) -> str:
    """The learner's name of the projection whose name says ``role``."""
    outcome = s.outcome(s.probes[0])
    probe = outcome.probe
    maps = named(outcome.module, probe.d_in, probe.d_out) if outcome.module else None
    return maps[ROLES.index(role)].name if maps else role


def exchanged_message(s: ClassSubject, exchanged: list[tuple[str, str]]) -> Message:
    """Queries and keys swapped (the scores are keys @ queries.T), or other roles traded."""
    roles = {role for role, _ in exchanged}
    if roles == {"query", "key"}:
        return msg(
            "cause_query_key_swapped", cls=s.cls.__name__, query_name=_named_as(s, "query"),
            key_name=_named_as(s, "key"),
        )  # fmt: skip
    changes = ", ".join(f"{_VARIABLES[role]} = {name}(x)" for role, name in exchanged)
    return msg("cause_roles_exchanged", cls=s.cls.__name__, changes=changes)


@torch.no_grad()
def unused(module: nn.Module, x: Tensor, y: Tensor) -> list[str]:
    """The parameters whose change leaves the output ``y`` of ``module(x)`` as it was: each is
    moved both ways, by several times its size (a gate that saturates one way moves the other)."""
    generator = torch.Generator().manual_seed(0)
    found = []
    for name, parameter in module.named_parameters():
        saved = parameter.detach().clone()
        noise = torch.randn(parameter.shape, generator=generator).to(parameter.dtype)
        noise = noise * 4 * (1 + saved.abs())
        outputs = []
        for sign in (1, -1):
            parameter.copy_(saved + sign * noise)
            try:
                outputs.append(call(module, x))
            except LEARNER_ERRORS:
                outputs.append(None)
            finally:
                parameter.copy_(saved)
        if all(close(out, y) for out in outputs):
            found.append(name)
    # Most of them unmoved: the output barely depends on the input; naming them would mislead.
    return found if len(found) <= len(list(module.parameters())) // 2 else []


# What the scores may be divided by, from the key size, all heads' size, the input's size
# and the number of tokens; the book divides by sqrt(d_k). Named in this order.
SCALES: dict[str, Callable[[int, int, int, int], float]] = {
    "none": lambda d_k, d_out, d_in, n: 1.0,
    "d_k": lambda d_k, d_out, d_in, n: float(d_k),
    "power_half": lambda d_k, d_out, d_in, n: d_k / 2,  # (d_k ** 1) / 2, scores / d_k ** 1/2
    "power_half_divided": lambda d_k, d_out, d_in, n: 2.0 * d_k,  # scores / d_k ** 1 / 2
    "sqrt_d_out": lambda d_k, d_out, d_in, n: d_out**0.5,
    "sqrt_d_in": lambda d_k, d_out, d_in, n: d_in**0.5,
    "sqrt_tokens": lambda d_k, d_out, d_in, n: n**0.5,
}


def _key_size(s: ClassSubject, probe: Probe) -> int:
    return probe.head_dim if s.role == "MultiHeadAttention" else probe.d_out


def _named_scale(s: ClassSubject, found: dict[Probe, float]) -> str:
    """The expression of `SCALES` that gives every measured divisor, or ``"measured"``."""
    for name, divisor in SCALES.items():
        expected = {p: divisor(_key_size(s, p), p.d_out, p.d_in, p.tokens) for p in found}
        if all(math.isclose(c, expected[p], rel_tol=1e-3) for p, c in found.items()):
            return name
    return "measured"


def measured_scale(s: ClassSubject, outcome: Outcome) -> tuple[str, float, float] | None:
    """What the scores are divided by at ``outcome``, measured, and named from its value at
    every probe where the class ran: ``(name, divisor, the book's divisor)``; None if no one
    number per probe gives the output (the difference is not the scale)."""
    for index in range(min(8, len(s.mappings(outcome)))):  # the same reading at every probe
        found = {}
        for ran in _ran(s):
            readings = s.mappings(ran)
            if index >= len(readings):
                break
            if (c := measured_divisor(s.role, ran, readings[index])) is None:
                break
            found[ran.probe] = c
        else:
            if outcome.probe in found:
                book = _key_size(s, outcome.probe) ** 0.5
                return _named_scale(s, found), found[outcome.probe], book
    return None
