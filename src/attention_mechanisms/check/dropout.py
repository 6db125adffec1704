"""The dropout check: where the learner's dropout acts, read from what it produced.

Dropout's draws depend on how the code asks for them (``nn.Dropout``, ``F.dropout``,
``scaled_dot_product_attention``'s ``dropout_p``), so the check does not compare draws.
It asks instead whether the training-mode output *can be* the book's: every token's
context vector must be ``1 / (1 - p)`` times the sum of its value vectors weighted by the
attention weights, each weight either kept or dropped. With six tokens that is at most
``2 ** 6`` subsets a row and a head, all tried. If no subset gives the output, the other
placements are tried the same way (survivors scaled by ``1 / p``, dropout on the scores
before the softmax, dropout on the output), and the one that gives it is named.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import torch
from torch import Tensor

from .messages import msg
from .probes import Probe
from .reference import Variant, head_inputs, scores_of, weights_of
from .result import Result, failed, passed, skipped
from .subject import LEARNER_ERRORS, ClassSubject, call, close

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


def _explains(s: ClassSubject, y: Tensor, rows: Rows, output_dropout: bool = False) -> bool:
    """Whether every token's output is one of its row's possible outputs under ``rows``
    (with a second dropout on the output, after the projection, if ``output_dropout``)."""
    verdict = s.verdict
    variant, mapping = verdict.variant, verdict.mapping
    if variant is None or mapping is None:  # no reading of the weights to explain it with
        return False
    x = s.outcome(verdict.probe or s.probes[0]).x
    heads = [
        tuple(t.double().reshape(-1, *t.shape[-2:]) for t in head)
        for head in head_inputs(s.role, mapping, x, variant)
    ]
    projects = s.role == "MultiHeadAttention" and variant.out_proj
    out = mapping.out if projects else None
    flat = y.double().reshape(-1, *y.shape[-2:])  # (batch, T, features)
    for b, i in itertools.product(range(flat.shape[0]), range(flat.shape[1])):
        joint = _joint(rows, heads, b, i, variant)
        if out is not None:
            joint = joint @ out.weight.double() + (0 if out.bias is None else out.bias.double())
        if _distance(joint, flat[b, i], output_dropout) > TOLERANCE:
            return False
    return True


def _on_output(y: Tensor, y_eval: Tensor) -> bool:
    """Every output element either dropped or kept and scaled: dropout after attention."""
    zero = y.abs() <= TOLERANCE
    kept = (y - y_eval / (1 - P)).abs() <= TOLERANCE
    return bool((zero | kept).all())


# (whether it explains the training output, message key, the site's section)
_PLACEMENTS: list[tuple[Callable[[ClassSubject, Tensor, Tensor], bool], str, str]] = [
    (lambda s, y, e: bool(torch.isnan(y).any()), "cause_dropout_nan", "dropout_before_softmax"),
    (lambda s, y, e: _explains(s, y, _on_weights(1 / P)), "cause_dropout_1_p", "dropout_scale"),
    (lambda s, y, e: _explains(s, y, _on_scores), "cause_dropout_scores", "dropout_before_softmax"),
    (lambda s, y, e: _on_output(y, e), "cause_dropout_output", "dropout"),
]


@torch.no_grad()
def dropout(s: ClassSubject) -> Result:
    if not s.takes("dropout"):
        return skipped("skip_no_dropout_rate")
    verdict = s.verdict
    if verdict.check:  # read with the book's computation only: another check says how it differs
        return skipped("skip_differs_as", check=verdict.check)
    placed = verdict.variant is not None and verdict.mapping is not None
    # Where the weights were read; without a reading, at the book's shapes, where it ran.
    probe = (verdict.probe or s.probes[0]) if placed else s.probes[0]
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
