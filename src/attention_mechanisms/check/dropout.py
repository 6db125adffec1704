"""The dropout check: where the learner's dropout acts, read from what it produced.

Dropout's draws depend on how the code asks for them (``nn.Dropout``, ``F.dropout``,
``scaled_dot_product_attention``'s ``dropout_p``), so the check does not compare draws.
It asks instead whether the training-mode output *can be* the book's: every token's
context vector must be ``1 / (1 - p)`` times the sum of its value vectors weighted by the
attention weights, each weight either kept or dropped. With six tokens that is at most
``2 ** 6`` subsets a row and a head, all tried. If no subset gives the output, the other
placements are tried the same way (survivors scaled by ``1 / p``, dropout on the scores
before the softmax, on the output, on the context vectors before the output projection, on
the values), and the one that gives it is named. This is done where every head has two
columns at least: with one, dropping a head's context is dropping all its weights at once.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

from .messages import msg
from .probes import Probe
from .reference import Variant, head_inputs, scores_of, weights_of
from .result import Result, failed, passed, skipped
from .subject import LEARNER_ERRORS, ClassSubject, call, close
from .weights import Affine, Mapping

P = 0.25  # not 0.5, where 1 / p and 1 / (1 - p) are both 2
TOLERANCE = 1e-4  # float32 output against float64 sums of up to six terms


def _subsets(n: int) -> Tensor:
    """Every subset of ``n`` items, as rows of 0 and 1: ``(2 ** n, n)``."""
    return ((torch.arange(2**n)[:, None] >> torch.arange(n)) & 1).double()


Rows = Callable[[Tensor, Tensor, Tensor, int, Variant], Tensor]


def _on_weights(scale: float) -> Rows:
    """Row ``i``'s possible context vectors: each weight kept or dropped, survivors times
    ``scale``."""

    def rows(q: Tensor, k: Tensor, v: Tensor, i: int, variant: Variant) -> Tensor:
        weights = weights_of(q, k, variant, True)[i]  # (T,)
        seen = weights != 0
        return (_subsets(int(seen.sum())) * weights[seen] * scale) @ v[seen]

    return rows


def _on_scores(q: Tensor, k: Tensor, v: Tensor, i: int, variant: Variant) -> Tensor:
    """Row ``i``'s possible context vectors when dropout zeroes visible scores before the
    softmax."""
    scores = scores_of(q, k, variant, True)[i]  # (T,)
    seen = torch.isfinite(scores)
    subsets = _subsets(int(seen.sum()))
    dropped = scores.expand(len(subsets), -1).clone()
    dropped[:, seen] = subsets * scores[seen] / (1 - P)
    return torch.softmax(dropped, dim=-1) @ v


def _joint(rows: Rows, heads: list[tuple[Tensor, ...]], b: int, i: int, variant: Variant) -> Tensor:
    """Every combination of the heads' possible context vectors, side by side."""
    choices = [rows(q[b], k[b], v[b], i, variant) for q, k, v in heads]
    joint = choices[0]
    for more in choices[1:]:
        joint = torch.cat((joint.repeat_interleave(len(more), 0), more.repeat(len(joint), 1)), -1)
    return joint


def _distance(joint: Tensor, row: Tensor, output_dropout: bool) -> Tensor:
    """How far ``row`` is from the nearest of the possible outputs ``joint``: exactly, or
    with each element either dropped or scaled by ``1 / (1 - p)`` once more."""
    if not output_dropout:
        return (joint - row).abs().amax(-1).min()
    kept = (joint / (1 - P) - row).abs()
    return torch.where(row.abs() <= TOLERANCE, 0.0, kept).amax(-1).min()


@dataclass(frozen=True)
class Reading:
    """Where the dropout is located: the probe, and the book's computation there (the
    variant and the reading of the weights under which the output is explained)."""

    probe: Probe
    variant: Variant
    mapping: Mapping

    def heads(self, s: ClassSubject) -> list[tuple[Tensor, ...]]:
        """Each head's queries, keys and values, ``(batch, T, head_dim)``, in float64."""
        x = s.outcome(self.probe).x
        return [
            tuple(t.double().reshape(-1, *t.shape[-2:]) for t in head)
            for head in head_inputs(s.role, self.mapping, x, self.variant)
        ]

    def out(self, s: ClassSubject) -> Affine | None:
        projects = s.role == "MultiHeadAttention" and self.variant.out_proj
        return self.mapping.out if projects else None


@functools.lru_cache(maxsize=16)
def _reading(s: ClassSubject) -> Reading | None:
    """Where to locate the dropout: a probe where the output is explained, each head of at
    least two columns if one is (where a head has one, dropout on its context is dropout on
    all its weights at once)."""
    verdict = s.verdict
    if verdict.variant is None or verdict.mapping is None:
        return None
    if verdict.probe is not None:  # explained by a variant at its first probe only
        return Reading(verdict.probe, verdict.variant, verdict.mapping)
    wide = [p for p in verdict.compared if p.head_dim >= 2 or s.role != "MultiHeadAttention"]
    for probe in wide[:1]:
        found = s.match(s.outcome(probe), [verdict.variant])
        if found is not None:
            return Reading(probe, *found)
    return Reading(s.probes[0], verdict.variant, verdict.mapping)


def _explains(s: ClassSubject, y: Tensor, rows: Rows, output_dropout: bool = False) -> bool:
    """Whether every token's output is one of its row's possible outputs under ``rows``
    (with a second dropout on the output, after the projection, if ``output_dropout``)."""
    reading = _reading(s)
    if reading is None:  # no reading of the weights to explain it with
        return False
    variant, heads, out = reading.variant, reading.heads(s), reading.out(s)
    flat = y.double().reshape(-1, *y.shape[-2:])  # (batch, T, features)
    for b, i in itertools.product(range(flat.shape[0]), range(flat.shape[1])):
        joint = _joint(rows, heads, b, i, variant)
        if out is not None:
            joint = joint @ out.weight.double() + (0 if out.bias is None else out.bias.double())
        if _distance(joint, flat[b, i], output_dropout) > TOLERANCE:
            return False
    return True


def _zero_or_scaled(y: Tensor, y_eval: Tensor) -> bool:
    """Every element either dropped or kept and scaled by 1 / (1 - p)."""
    tolerance = TOLERANCE * y_eval.abs().clamp(min=1)
    zero = y.abs() <= tolerance
    kept = (y - y_eval / (1 - P)).abs() <= tolerance
    return bool((zero | kept).all())


def _context(s: ClassSubject, y: Tensor) -> Tensor | None:
    """The context vectors before the output projection, solved from the output."""
    reading = _reading(s)
    if reading is None:
        return None
    out = reading.out(s)
    if out is None:
        return y.double()
    centred = y.double() if out.bias is None else y.double() - out.bias.double()
    context: Tensor = centred @ torch.linalg.pinv(out.weight.double())
    return context


def _on_context(s: ClassSubject, y: Tensor, y_eval: Tensor) -> bool:
    """Each context element dropped or kept: dropout on the context vectors (before the
    output projection, if there is one)."""
    ctx, ctx_eval = _context(s, y), _context(s, y_eval)
    return ctx is not None and ctx_eval is not None and _zero_or_scaled(ctx, ctx_eval)


def _on_values(s: ClassSubject, y: Tensor, y_eval: Tensor) -> bool:
    """Each context element, feature by feature, a sum of weights times values some of which
    were dropped: dropout on the values, before the weights take them."""
    reading, ctx = _reading(s), _context(s, y)
    if reading is None or ctx is None:
        return False
    ctx = ctx.reshape(-1, *ctx.shape[-2:])
    start = 0
    for q, k, v in reading.heads(s):
        width = v.shape[-1]
        for b, i in itertools.product(range(q.shape[0]), range(q.shape[1])):
            weights = weights_of(q[b], k[b], reading.variant, True)[i]
            seen = weights != 0
            sums = (_subsets(int(seen.sum())) * weights[seen] / (1 - P)) @ v[b][seen]
            row = ctx[b, i, start : start + width]
            if bool(((sums - row).abs().amin(0) > TOLERANCE).any()):
                return False
        start += width
    return True


# (whether it explains the training output, message key, the site's section)
_PLACEMENTS: list[tuple[Callable[[ClassSubject, Tensor, Tensor], bool], str, str]] = [
    (lambda s, y, e: bool(torch.isnan(y).any()), "cause_dropout_nan", "dropout_before_softmax"),
    (lambda s, y, e: _explains(s, y, _on_weights(1 / P)), "cause_dropout_1_p", "dropout_scale"),
    (lambda s, y, e: _explains(s, y, _on_scores), "cause_dropout_scores", "dropout_before_softmax"),
    (lambda s, y, e: _zero_or_scaled(y, e), "cause_dropout_output", "dropout"),
    (_on_context, "cause_dropout_context", "dropout"),
    (_on_values, "cause_dropout_values", "dropout"),
]


@torch.no_grad()
def dropout(s: ClassSubject) -> Result:
    if not s.takes("dropout"):
        return skipped("skip_no_dropout_rate")
    verdict = s.verdict
    if verdict.check:  # read with the book's computation only: another check says how it differs
        return skipped("skip_differs_as", check=verdict.check)
    reading = _reading(s)
    placed = reading is not None
    # Where the weights were read; without a reading, at the book's shapes, where it ran.
    probe = reading.probe if reading is not None else s.probes[0]
    if s.outcome(probe).error is not None or not isinstance(s.outcome(probe).y, Tensor):
        return skipped("skip_needs", check="runs")
    try:
        return _training(s, probe, placed)
    except LEARNER_ERRORS:  # it runs with dropout=0, not with dropout=P
        return failed(msg("fail_dropout_differs", p=P), "dropout")


def _training(s: ClassSubject, probe: Probe, placed: bool) -> Result:
    """Off in eval mode, on in training; then, with a reading of the weights, where."""
    module, x = s.build(probe, dropout=P), s.outcome(probe).x
    y_eval = call(module, x)
    if not close(call(module, x), y_eval) or not close(y_eval, s.outcome(probe).y):
        return failed(msg("fail_dropout_eval", p=P), "dropout")
    module.train()
    torch.manual_seed(0)
    y = call(module, x)
    if close(y, y_eval):
        return failed(msg("fail_dropout_inactive", p=P), "dropout")
    if not isinstance(y, Tensor):
        return failed(msg("fail_dropout_differs", p=P), "dropout")
    if not placed:  # no reading of the weights to place it with
        return skipped("skip_dropout_placement", p=P)
    return _placement(s, y, y_eval)


def _placement(s: ClassSubject, y: Tensor, y_eval: Tensor) -> Result:
    """Pass if the training output ``y`` is the book's dropout; else name where it acts."""
    book = _on_weights(1 / (1 - P))
    if not torch.isnan(y).any() and _explains(s, y, book):
        return passed("pass_dropout", p=P)
    if s.role == "MultiHeadAttention" and _explains(s, y, book, output_dropout=True):
        return passed("pass_dropout_and_output", p=P)  # GPT-2's resid_dropout, as nanoGPT
    for explains, key, topic in _PLACEMENTS:
        if explains(s, y, y_eval):
            return failed(msg(key, p=P), topic)
    return failed(msg("fail_dropout_differs", p=P), "dropout")
