"""The checks of a function: a helper of 3.3 (scores, softmax, context vectors) or a
stand-alone attention function ``f(query, key, value, mask=None)``.

Each role has its inputs and the book's answer (`CASES`); the function is called once per
case and its answer kept, so the checks only read it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import torch
from torch import Tensor

from ..rope import apply_rope, compute_rope_params, interleaved_to_halves
from .causes import Failure, error_cause
from .components import Component
from .locate import Locator
from .messages import msg
from .probes import BOOK, INPUTS
from .result import Result, failed, passed, skipped
from .subject import LEARNER_ERRORS, TOLERANCE, close

_Q, _K, _V = (torch.rand(2, 2, 6, 3, generator=torch.Generator().manual_seed(n)) for n in range(3))
_QKV = (_Q, _K, _V)
_HIDE = torch.triu(torch.ones(6, 6, dtype=torch.bool), diagonal=1)  # the book's causal mask


def _attention(q: Tensor, k: Tensor, v: Tensor, hide: Tensor | None = None) -> Tensor:
    scores = q @ k.mT / q.shape[-1] ** 0.5
    if hide is not None:
        scores = scores.masked_fill(hide, -torch.inf)
    return torch.softmax(scores, dim=-1) @ v


_WEIGHTS = torch.softmax(INPUTS @ INPUTS.T, dim=-1)
_ROW = _WEIGHTS[1]  # the weights of "journey", the book's query in 3.3.1
_QKV2 = (_Q[0, 0], _K[0, 0], _V[0, 0])  # one sequence, one head: (6, 3)
_ROPE = compute_rope_params(8, 10_000, 6)  # (cos, sin): (6, 8) each
_X = torch.rand(2, 3, 6, 8, generator=torch.Generator().manual_seed(3))  # (b, h, T, d)
_HALVES = interleaved_to_halves(8)  # features 0, 2, 4, 6, 1, 3, 5, 7
# role -> its cases: (arguments, the book's answer), the way the book calls it first; a
# function is checked on the first case that it runs on with the answer's shape.
CASES: dict[str, list[tuple[tuple[object, ...], Tensor]]] = {
    "attention_function": [(_QKV, _attention(*_QKV)), (_QKV2, _attention(*_QKV2))],
    "softmax": [((INPUTS @ INPUTS[1],), torch.softmax(INPUTS @ INPUTS[1], dim=0))],
    "context": [
        ((_WEIGHTS, INPUTS), _WEIGHTS @ INPUTS),
        ((_ROW, INPUTS), _ROW @ INPUTS),
        ((INPUTS, _WEIGHTS), _WEIGHTS @ INPUTS),  # (inputs, weights), as some write it
        ((INPUTS, _ROW), _ROW @ INPUTS),
    ],
    "compute_rope_params": [
        ((8, 10_000, 6), torch.stack(_ROPE)),
        ((16, 500_000, 5), torch.stack(compute_rope_params(16, 500_000, 5))),
    ],
    "apply_rope": [((_X, *_ROPE), apply_rope(_X, *_ROPE))],
    "scores": [
        ((INPUTS,), INPUTS @ INPUTS.T),
        ((INPUTS, INPUTS[1]), INPUTS @ INPUTS[1]),
        ((INPUTS, INPUTS), INPUTS @ INPUTS.T),  # (queries, keys)
    ],
}


def _first(out: object) -> object:
    return out[0] if isinstance(out, tuple) and out else out  # (context, weights)


def _both(out: object) -> object:
    """``(cos, sin)`` as one tensor, as `CASES` holds the book's."""
    if isinstance(out, tuple | list) and len(out) == 2:
        cos, sin = out
        if isinstance(cos, Tensor) and isinstance(sin, Tensor) and cos.shape == sin.shape:
            return torch.stack((cos, sin))
    return out


# How a role's answer is read: the first of a tuple, or for the angles' tables both.
_ANSWERS = {"compute_rope_params": _both}


@dataclass
class FunctionSubject:
    component: Component
    locator: Locator
    sources: list[str]
    error: BaseException | None = None  # what the first case raised, if none ran

    @property
    def role(self) -> str:
        return self.component.role or ""

    @property
    def function(self) -> Callable[..., object]:
        if not inspect.isfunction(self.component.obj):
            raise TypeError(f"{self.component.name} must be a function; got {self.component.obj!r}")
        return self.component.obj

    def binds(self) -> bool:
        """Whether the function can be called as the book calls its role, in any case."""
        signature = inspect.signature(self.function)
        for arguments, _ in CASES[self.role]:
            try:
                signature.bind(*arguments)
            except TypeError:
                continue
            return True
        return False

    @cached_property
    def answer(self) -> tuple[object, Tensor]:
        """The function's answer and the book's, on the first case that fits it; `error`
        keeps what the first case raised when none ran."""
        found: tuple[object, Tensor] | None = None
        error: BaseException | None = None
        signature = inspect.signature(self.function)
        for arguments, book in CASES[self.role]:
            try:
                signature.bind(*arguments)
            except TypeError:
                continue  # not a call this function takes
            try:
                torch.manual_seed(123)
                out = _ANSWERS.get(self.role, _first)(self.function(*arguments))
            except LEARNER_ERRORS as raised:
                error = error or raised
                continue
            found = found or (out, book)
            if isinstance(out, Tensor) and out.shape == book.shape:
                return out, book
        self.error = error if found is None else None
        return found or (None, CASES[self.role][0][1])


def runs(s: FunctionSubject) -> Result:
    answer, _ = s.answer
    if answer is None and s.error is not None:
        cause, topic = error_cause(Failure(s.error, None, BOOK, s.locator))
        return failed(cause, topic or s.role)
    return passed("pass_runs_function")


def shape(s: FunctionSubject) -> Result:
    answer, book = s.answer
    expected = tuple(book.shape)
    if not isinstance(answer, Tensor) or tuple(answer.shape) != expected:
        seen = tuple(answer.shape) if isinstance(answer, Tensor) else type(answer).__name__
        return failed(msg("cause_shape", seen=str(seen), expected=str(expected), role=s.role))
    return passed("pass_shape_function", shape=str(expected))


def matches_book(s: FunctionSubject) -> Result:
    answer, book = s.answer
    if s.role == "apply_rope" and not close(answer, book) and _interleaved(s):
        return skipped("skip_differs_as", check="rotation")
    answer = answer if isinstance(answer, Tensor) else torch.tensor(float("nan"))
    if close(answer, book):
        return passed("pass_matches_function", tolerance=TOLERANCE)
    if s.role == "scores" and close(answer, book / INPUTS.shape[-1] ** 0.5):
        return passed("pass_matches_scaled_scores", tolerance=TOLERANCE)  # as 3.4 scales them
    differs = ~torch.isclose(answer.float(), book, rtol=0, atol=TOLERANCE, equal_nan=True)
    index = tuple(int(i) for i in differs.nonzero()[0])
    message = msg(
        "fail_differs", index=str(index), mine=f"{answer[index].item():.4f}",
        book=f"{book[index].item():.4f}",
    )  # fmt: skip
    return failed(message, s.role)


# What a fourth argument may be asked to mean: the book's hide mask, a keep mask, an
# additive float mask, or a flag (causal=True, is_causal=True).
_MASKS = (
    (_HIDE, "pass_causal_hide_mask"),
    (~_HIDE, "pass_causal_keep_mask"),
    (torch.zeros(6, 6).masked_fill(_HIDE, -torch.inf), "pass_causal_float_mask"),
    (True, "pass_causal_flag"),
)


def causal(s: FunctionSubject) -> Result:
    """Given a causal mask as its fourth argument, in any of `_MASKS`' forms, it hides the
    future; skipped when it takes no fourth argument, or none of those."""
    if len(inspect.signature(s.function).parameters) < 4:
        return skipped("skip_takes_no_mask")
    _, book_answer = s.answer
    qkv = _QKV if book_answer.dim() == 4 else _QKV2
    book = _attention(*qkv, _HIDE)
    ran = False
    for mask, key in _MASKS:
        try:
            out = _first(s.function(*qkv, mask))
        except LEARNER_ERRORS:
            continue
        ran = True
        if close(out, book):
            return passed(key)
    return failed(msg("fail_causal_function"), "causal") if ran else skipped("skip_takes_no_mask")


def _interleaved(s: FunctionSubject) -> bool:
    """Whether the function rotates neighbouring features (2k, 2k + 1) together, as Meta's
    reference Llama code does: the book's rotation of the features taken in that order."""
    answer, _ = s.answer
    if not isinstance(answer, Tensor):
        return False
    inverse = torch.argsort(_HALVES)
    return close(answer, apply_rope(_X[..., _HALVES], *_ROPE)[..., inverse])


def rotation(s: FunctionSubject) -> Result:
    """Feature k turns with feature k + d/2 (the book's layout), by the book's angles."""
    answer, book = s.answer
    if close(answer, book):
        return passed("pass_rotation")
    if _interleaved(s):
        return failed(msg("cause_rope_interleaved"), "rope_layout")
    return skipped("skip_other_difference")
