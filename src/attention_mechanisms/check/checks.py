"""The checks as data: a table of named checks, and the one loop that runs them.

Each row names a check, the roles it applies to, the checks it needs to have passed first,
and the function that runs it on the component (a `ClassSubject` or a `FunctionSubject`).
A check that does not apply to the role is skipped as such; one whose needs did not pass is
skipped with the name of the first that did not; the others say pass, fail or skip
themselves. The report lists the checks in the order of `CHECKS`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from . import class_checks as c
from . import function_checks as f
from . import properties as p
from . import todays as t
from .dropout import dropout
from .function_checks import FunctionSubject
from .messages import msg
from .result import Result, skipped
from .subject import ClassSubject
from .todays import TodaySubject

SINGLE = frozenset({"SelfAttention_v1", "SelfAttention_v2"})
CAUSAL = frozenset({"CausalAttention", "MultiHeadAttentionWrapper", "MultiHeadAttention"})
CLASSES = SINGLE | CAUSAL
HEADS = frozenset({"MultiHeadAttentionWrapper", "MultiHeadAttention"})
FUNCTIONS = frozenset({"attention_function", "softmax", "context", "scores", "compute_rope_params",
                       "apply_rope"})  # fmt: skip
TODAY = frozenset(t.ROLES)
GQA, SWA = frozenset({"GroupedQueryAttention"}), frozenset({"MultiHeadAttentionWithSWA"})


@dataclass(frozen=True)
class Check:
    name: str
    roles: frozenset[str]
    needs: tuple[str, ...]
    run: Callable[..., Result]


TABLE = (
    Check("constructs", CLASSES, (), c.constructs),
    Check("runs", CLASSES, ("constructs",), c.runs),
    Check("runs", FUNCTIONS, (), f.runs),
    Check("shape", CLASSES, ("constructs",), c.shape),
    Check("shape", FUNCTIONS, ("runs",), f.shape),
    Check("matches_book", CLASSES, ("shape",), c.matches_book),
    Check("matches_book", FUNCTIONS, ("shape",), f.matches_book),
    Check("scale", CLASSES, ("shape",), c.explained("scale")),
    Check("softmax_dim", CLASSES, ("shape",), c.explained("softmax_dim")),
    # The properties need only a shape where the class runs (`properties.book_output`).
    Check("causal", CAUSAL, ("constructs",), p.causal),
    Check("causal", frozenset({"attention_function"}), ("runs",), f.causal),
    Check("diagonal", CAUSAL, ("constructs",), p.diagonal),
    Check("weights_sum", CLASSES, ("constructs",), p.weights_sum),
    Check("mask_buffer", CAUSAL, ("constructs",), p.mask_buffer),
    Check("dropout", CAUSAL, ("constructs",), dropout),
    Check("heads", HEADS, ("shape",), c.heads),
    Check("out_proj", frozenset({"MultiHeadAttention"}), ("shape",), c.explained("out_proj")),
    # Today's attention (`todays`), and the rotary functions.
    Check("constructs", TODAY, (), t.constructs),
    Check("runs", TODAY, ("constructs",), t.runs),
    Check("shape", TODAY, ("runs",), t.shape),
    Check("matches_book", TODAY, ("shape",), t.matches_book),
    Check("causal", TODAY, ("runs",), t.causal),
    Check("window", SWA, ("runs",), t.window),
    Check("kv_groups", GQA, ("runs",), t.kv_groups),
    Check("rotation", frozenset({"apply_rope"}), ("runs",), f.rotation),
)
CHECKS = tuple(dict.fromkeys(check.name for check in TABLE))


def run_checks(subject: ClassSubject | FunctionSubject | TodaySubject) -> list[Result]:
    """Every check of `CHECKS` on ``subject``, in order: pass, fail or skip, with why."""
    role = subject.role
    results: dict[str, Result] = {}
    for check in TABLE:
        if role not in check.roles:
            continue
        blocked = next(
            (need for need in check.needs if need in results and results[need].status != "pass"),
            None,
        )
        result = skipped("skip_needs", check=blocked) if blocked else check.run(subject)
        result.check = check.name
        results[check.name] = result
    for name in CHECKS:
        if name not in results:
            results[name] = Result("skip", msg("skip_does_not_apply", role=role), check=name)
    return [results[name] for name in CHECKS]
