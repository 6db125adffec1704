"""The checks of a class in one of the book's roles, each a function of its `ClassSubject`.

The order of `checks.TABLE` is the order they run in: ``constructs``, ``runs`` and
``shape`` at every probe; ``matches_book`` compares the outputs with the book's on the same
weights; ``scale`` to ``out_proj`` pass when it does, and the one whose variant the output
equals fails (`VARIANT_CAUSES`); ``heads`` looks for one module repeated too. The checks
that need no reference (``causal``, ``diagonal``, ``weights_sum``, ``mask_buffer``) are in
`properties`.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable

import torch
from torch import Tensor, nn

from . import stages
from .causes import Failure, error_cause, head_dim_from_d_in, shape_message
from .messages import Message, msg
from .probes import describe
from .reference import BOOK, Variant, book_forward
from .result import Result, failed, passed, skipped
from .subject import TOLERANCE, ClassSubject, Outcome

# The message key and the site's section for an output that equals a variant of the book's.
VARIANT_CAUSES: dict[Variant, tuple[str, str]] = {
    Variant(scale="none"): ("cause_scale_none", "scale"),
    Variant(scale="d_k"): ("cause_scale_d_k", "scale"),
    Variant(scale="sqrt_d_out"): ("cause_scale_d_out", "scale"),
    Variant(scale="sqrt_d_in"): ("cause_scale_d_in", "scale"),
    Variant(scale="sqrt_tokens"): ("cause_scale_tokens", "scale_tokens"),
    Variant(scale="after_softmax"): ("cause_scale_after_softmax", "scale_after_softmax"),
    Variant(softmax_dim=-2): ("cause_softmax_dim", "softmax_dim"),
    Variant(mask="none"): ("cause_mask_none", "causal"),
    Variant(mask="future_only"): ("cause_keep_mask_as_hide", "diagonal"),
    Variant(mask="added"): ("cause_mask_added", "sdpa_mask"),
    Variant(mask="hide_diagonal_too"): ("cause_diagonal", "diagonal"),
    Variant(mask="hide_diagonal_too", fill=-1e9): ("cause_diagonal_finite", "diagonal"),
    Variant(mask="multiplied"): ("cause_mask_multiplied", "weights_sum"),
    Variant(heads="interleaved"): ("cause_heads_interleaved", "heads"),
    Variant(heads="no_transpose"): ("cause_heads_no_transpose", "heads_transpose"),
    Variant(heads="no_transpose_in"): ("cause_heads_no_transpose", "heads_transpose"),
    Variant(heads="no_transpose_out"): ("cause_heads_join_no_transpose", "heads_transpose"),
    Variant(out_proj=False): ("cause_out_proj", "out_proj"),
}


def _failure(s: ClassSubject, index: int) -> Failure:
    outcome = s.outcome(s.probes[index])
    book_ran = index > 0 and s.outcome(s.probes[0]).error is None
    d_in = s.names.get("d_in", "d_in")
    return Failure(outcome.error, outcome.module, outcome.probe, s.locator, book_ran, d_in)


def _shown(s: ClassSubject) -> str:
    arguments = s.arguments(s.probes[0])
    order = list(inspect.signature(s.cls.__init__).parameters)
    arguments = dict(sorted(arguments.items(), key=lambda item: order.index(item[0])))
    return f"{s.cls.__name__}({', '.join(f'{k}={v!r}' for k, v in arguments.items())})"


def constructs(s: ClassSubject) -> Result:
    if missing := s.missing():
        return failed(
            msg("fail_needs", cls=s.cls.__name__, missing=", ".join(missing), role=s.role)
        )
    for index, probe in enumerate(s.probes):
        if s.outcome(probe).stage == "constructs":
            cause, topic = error_cause(_failure(s, index))
            return failed(msg("fail_constructs", call=_shown(s), cause=cause), topic)
    note = msg("note_square") if s.square else ""
    return passed("pass_constructs", call=_shown(s), probes=len(s.probes), note=note)


def runs(s: ClassSubject) -> Result:
    for index, probe in enumerate(s.probes):
        if s.outcome(probe).stage == "runs":
            cause, topic = error_cause(_failure(s, index))
            return failed(cause, topic)
    inputs = dict.fromkeys(str(tuple(s.outcome(p).x.shape)) for p in s.probes)
    shapes = ", ".join(inputs)  # each input shape once (two probes may differ in d_out alone)
    return passed("pass_runs", shapes=shapes)


def _some_ran(s: ClassSubject, probes: int) -> Message | str:
    """The note that the checks ran at ``probes`` of the shapes, where some did not run."""
    return msg("note_some_ran", ran=probes, probes=len(s.probes)) if probes < len(s.probes) else ""


def shape(s: ClassSubject) -> Result:
    """The output's shape at every probe where the class runs (a class that fails at some
    shapes is still checked at the others, the book's among them)."""
    ran = [probe for probe in s.probes if s.outcome(probe).error is None]
    if not ran:
        return skipped("skip_needs", check="runs")
    for probe in ran:
        expected, y = s.expected_shape(probe), s.outcome(probe).y
        if not isinstance(y, Tensor) or tuple(y.shape) != expected:
            message, topic = shape_message(s.role, y, expected, probe)
            return failed(message, topic)
    note = _some_ran(s, len(ran))
    return passed("pass_shape", shape=str(s.expected_shape(s.probes[0])), note=note)


# What the scores are divided by, named (`stages.SCALES`): the message key and the section.
SCALE_CAUSES: dict[str, tuple[str, str]] = {
    "none": ("cause_scale_none", "scale"),
    "d_k": ("cause_scale_d_k", "scale"),
    "power_half": ("cause_scale_power_half", "scale"),
    "power_half_divided": ("cause_scale_power_half", "scale"),
    "sqrt_d_out": ("cause_scale_d_out", "scale"),
    "sqrt_d_in": ("cause_scale_d_in", "scale"),
    "sqrt_tokens": ("cause_scale_tokens", "scale_tokens"),
    "measured": ("cause_scale_measured", "scale"),
}


def _cause(s: ClassSubject, variant: Variant) -> tuple[str, str, dict[str, object]]:
    """The message key, section and numbers for an output that equals ``variant``: a divisor
    of the scores is measured at every shape that ran, and named from those values."""
    measured = None
    if variant.scale not in ("sqrt_d_k", "after_softmax") and s.verdict.outcome is not None:
        measured = stages.measured_scale(s, s.verdict.outcome)
    if measured is None:
        return (*VARIANT_CAUSES[variant], {})
    name, divisor, book = measured
    return (*SCALE_CAUSES[name], {"measured": f"{divisor:.4g}", "book": f"{book:.4g}"})


def variant_message(s: ClassSubject, variant: Variant) -> tuple[Message, str]:
    verdict = s.verdict
    key, topic, numbers = _cause(s, variant)
    if key == "cause_keep_mask_as_hide" and _uses_sdpa(s):
        key, topic = "cause_sdpa_hide_mask", "sdpa_mask"
    if key == "cause_mask_none" and _DISCARDED.search(s.source):
        key = "cause_masked_fill_discarded"  # scores.masked_fill(...) alone on its line
    message = msg(key, cls=s.cls.__name__, **numbers)
    outcome = verdict.outcome
    # Divided by the square root of a head_dim taken from d_in: the cause is head_dim.
    scaled = key.startswith("cause_scale") and outcome is not None and outcome.module is not None
    if scaled and outcome and (head_dim := _head_dim_message(s, outcome)) is not None:
        message, topic = head_dim, "head_dim_d_in"
    # It matched at the book's shapes: say where it stopped matching.
    if verdict.compared and verdict.probe is not None:
        message = msg("at_probe", probe=describe(verdict.probe), cause=message)
    return message, topic


def _head_dim_message(s: ClassSubject, outcome: Outcome) -> Message | None:
    """The message for ``head_dim = d_in // num_heads``, if the class computes it so and it
    is wrong at the outcome's probe."""
    probe = outcome.probe
    failure = Failure(None, outcome.module, probe, s.locator, d_in=s.names.get("d_in", "d_in"))
    if not head_dim_from_d_in(failure):
        return None
    return msg(
        "cause_head_dim_d_in_output", d_in=probe.d_in, num_heads=probe.num_heads,
        wrong=probe.d_in // probe.num_heads, right=probe.head_dim,
    )  # fmt: skip


_DISCARDED = re.compile(r"^\s*[\w.\[\]]+\.masked_fill\(", re.MULTILINE)


def _uses_sdpa(s: ClassSubject) -> bool:
    """Whether the class calls scaled_dot_product_attention, itself or (with no mask of its
    own) through a function of the learner's."""
    own = "scaled_dot_product_attention" in s.source
    elsewhere = any("scaled_dot_product_attention" in source for source in s.sources)
    return own or ("masked_fill" not in s.source and elsewhere)


def _plain_list(module: nn.Module) -> str:
    """The attribute that holds modules in a plain list, where nn.ModuleList belongs."""
    for name, value in vars(module).items():
        if isinstance(value, list | tuple) and any(isinstance(v, nn.Module) for v in value):
            return name
    return ""


def _difference(s: ClassSubject, outcome: Outcome) -> tuple[Message, str]:
    """Where the output at ``outcome`` differs from the book's, read with the first mapping."""
    module, y = outcome.ran()
    mappings = s.mappings(outcome)
    if not mappings:
        hidden = _plain_list(module)
        if hidden:
            return msg("fail_heads_list", name=hidden), "heads"
        shapes = [tuple(p.shape) for p in module.parameters() if p.dim() == 2]
        probe = outcome.probe
        message = msg(
            "fail_weights_unread", role=s.role, shapes=str(shapes), d_in=probe.d_in,
            d_out=probe.d_out,
        )  # fmt: skip
        return message, s.role
    if (head_dim := _head_dim_message(s, outcome)) is not None:
        return msg("at_probe", probe=describe(outcome.probe), cause=head_dim), "head_dim_d_in"
    if reused := stages.reused(s):
        return stages.reused_message(s, reused), s.role
    book = book_forward(s.role, mappings[0], outcome.x, BOOK)
    differs = ~torch.isclose(y.float(), book.float(), rtol=0, atol=TOLERANCE, equal_nan=True)
    index = tuple(int(i) for i in differs.nonzero()[0])
    never = stages.unused(module, outcome.x, y)
    message = msg(
        "fail_differs_unused" if never else "fail_differs", index=str(index),
        mine=f"{y[index].item():.4f}", book=f"{book[index].item():.4f}", names=", ".join(never),
    )  # fmt: skip
    if s.verdict.compared:
        message = msg("at_probe", probe=describe(outcome.probe), cause=message)
    return message, s.role


def matches_book(s: ClassSubject) -> Result:
    if _shared_heads(s):
        return skipped("skip_differs_as", check="heads")
    verdict = s.verdict
    if verdict.outcome is None and (exchanged := stages.exchanged(s)):
        return failed(stages.exchanged_message(s, exchanged), s.role)
    if verdict.outcome is None:  # no probe where the outputs differ
        return passed(
            "pass_matches",
            role=s.role,
            probes=len(verdict.compared),
            tolerance=TOLERANCE,
            note=_some_ran(s, len(verdict.compared)),
        )
    if verdict.variant is not None:
        return skipped("skip_differs_as", check=verdict.check)
    return failed(*_difference(s, verdict.outcome))


_AGREES = {
    "scale": "pass_scale",
    "softmax_dim": "pass_softmax_dim",
    "causal": "pass_causal",
    "diagonal": "pass_diagonal",
    "heads": "pass_heads",
    "out_proj": "pass_out_proj",
}


_MASKS = {"causal", "diagonal"}


def explained(check: str) -> Callable[[ClassSubject], Result]:
    """A check that passes when the outputs equal the book's, or when they differ in another
    aspect alone; fails when they differ in its own."""

    def run(s: ClassSubject) -> Result:
        verdict = s.verdict
        if verdict.check == check and verdict.variant is not None:
            return failed(*variant_message(s, verdict.variant))
        if verdict.variant is None:
            return skipped("skip_other_difference")
        if {check, verdict.check} <= _MASKS:  # one mask: not right on the one, wrong on the other
            return skipped("skip_differs_as", check=verdict.check)
        return passed(_AGREES[check])

    return run


def _shared_heads(s: ClassSubject) -> bool:
    """Whether a ModuleList holds one module several times ([head] * num_heads)."""
    module, _ = s.outcome(s.probes[0]).ran()
    lists = [m for m in module.modules() if isinstance(m, nn.ModuleList)]
    return any(len({id(head) for head in heads}) < len(heads) for heads in lists)


def heads(s: ClassSubject) -> Result:
    """Explained by a variant, or one module repeated in a ModuleList ([head] * num_heads)."""
    if _shared_heads(s):  # the wrapper's heads are built in 3.6.1, MultiHeadAttention's in 3.6.2
        topic = s.role if s.role == "MultiHeadAttentionWrapper" else "heads"
        return failed(msg("cause_shared_heads", cls=s.cls.__name__), topic)
    return explained("heads")(s)
