"""The checks that need no reference: what any right attention class does, whatever its code.

They run on every class that runs, whether or not its output equals the book's, and each
says what it saw. A known mistake that explains the output (`subject.Verdict`) still names
the cause first; otherwise the module itself is probed:

- ``causal``: changing the last token must leave every earlier token's output alone, and
  changing the first must reach the last (else the mask hides the past, not the future);
- ``diagonal``: the first token's output is a number, not NaN (its row is not all hidden);
- ``weights_sum``: given equal tokens, every token gets the same output, since attention
  averages equal values with weights that sum to 1, wherever the mask falls;
- ``mask_buffer``: a mask kept in the module is a registered buffer, and ``forward`` reads
  it (changing the buffer changes the output). A mask of the notebook's is blamed only when
  changing it changes the output and changing the module's own does not.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable, Iterator

import torch
from torch import Tensor, nn

from .causes import global_masks, mask_like
from .class_checks import explained, variant_message
from .messages import msg
from .result import Result, failed, passed, skipped
from .subject import LEARNER_ERRORS, TOLERANCE, ClassSubject, call


def book_output(s: ClassSubject) -> tuple[nn.Module, Tensor, Tensor] | Result:
    """The module, input and output where the properties are probed: the first probe (the
    book's shapes, if it runs there) where it runs and gives a context vector per token, of
    whatever size (a class whose output has the wrong width still has them)."""
    for probe in s.probes:
        outcome = s.outcome(probe)
        y = outcome.y
        if outcome.module is None or outcome.error is not None or not isinstance(y, Tensor):
            continue
        if tuple(y.shape[:-1]) == tuple(outcome.x.shape[:-1]):
            return outcome.module, outcome.x, y
    ran = any(s.outcome(probe).error is None for probe in s.probes)
    return skipped("skip_needs", check="shape" if ran else "runs")


def moved(module: nn.Module, x: Tensor, y: Tensor, token: int) -> Tensor:
    """How far each token's output moves, ``(T,)``, when token ``token`` of ``x`` changes
    (NaN where it stays NaN counts as not moved; an output that no longer runs, as moved)."""
    changed = x.clone()
    changed[..., token, :] += 1.0
    try:
        out = call(module, changed)
    except LEARNER_ERRORS:
        return torch.full(y.shape[-2:-1], torch.inf)
    if not isinstance(out, Tensor) or out.shape != y.shape:
        return torch.full(y.shape[-2:-1], torch.inf)
    a, b = out.double(), y.double()
    same = torch.isclose(a, b, rtol=0, atol=TOLERANCE, equal_nan=True)
    gap = torch.where(same, 0.0, (a - b).abs().nan_to_num(torch.inf))
    return gap.reshape(-1, *gap.shape[-2:]).amax(dim=(0, 2))  # (T,)


def causal(s: ClassSubject) -> Result:
    """Explained by a variant, or probed on the module at the book's shapes."""
    result = explained("causal")(s)
    if result.status == "fail" or s.verdict.check == "diagonal":  # one mask, one verdict
        return result
    if isinstance(ran := book_output(s), Result):
        return ran
    module, x, y = ran
    tokens = x.shape[-2]
    ahead = moved(module, x, y, tokens - 1)[:-1]  # earlier tokens, after the last changed
    if bool((ahead <= TOLERANCE).all()):
        keep = "tril(" in s.source and "== 0" in s.source
        return passed("pass_causal_keep_mask" if keep else "pass_causal", n=tokens)
    first = int((ahead > TOLERANCE).nonzero()[0])
    back = moved(module, x, y, 0)[-1]  # the last token, after the first changed
    key = "cause_mask_hides_past" if back <= TOLERANCE else "cause_future_visible"
    if s.verdict.check:  # a known mistake of another check's lets the future through
        key = "cause_future_visible_as"
    saw = f"{float(ahead[first]):.3g}"
    message = msg(key, cls=s.cls.__name__, n=tokens, token=first + 1, by=saw,
                  check=s.verdict.check)  # fmt: skip
    return failed(message, "diagonal" if key == "cause_mask_hides_past" else "causal")


def diagonal(s: ClassSubject) -> Result:
    """Explained by a variant; else the first token's output must be a number."""
    result = explained("diagonal")(s)
    if result.status == "fail" or s.verdict.check == "causal":
        return result
    if isinstance(ran := book_output(s), Result):
        return ran
    y = ran[2]
    if torch.isnan(y[..., 0, :]).any():
        return failed(msg("cause_diagonal_nan"), "diagonal")
    return result if result.status == "pass" else passed("pass_diagonal_first")


def weights_sum(s: ClassSubject) -> Result:
    """Explained by a variant; else equal tokens must give equal outputs."""
    if s.verdict.check == "weights_sum" and s.verdict.variant is not None:
        return failed(*variant_message(s, s.verdict.variant))
    if isinstance(ran := book_output(s), Result):
        return ran
    module, x, _ = ran
    equal = x[..., :1, :].expand_as(x).clone()  # every token a copy of the first
    try:
        out = call(module, equal)
    except LEARNER_ERRORS:
        return skipped("skip_other_difference")
    if not isinstance(out, Tensor) or out.dim() < 2:
        return skipped("skip_other_difference")
    if torch.isnan(out[..., 0, :]).any():
        return skipped("skip_needs", check="diagonal")
    first = out[..., :1, :].expand_as(out)
    differs = ~torch.isclose(out.double(), first.double(), rtol=0, atol=TOLERANCE)
    differs &= ~torch.isnan(out)  # a row that sees nothing: the mask's checks say so
    tokens = x.shape[-2]
    if not differs.any():
        return passed("pass_weights_sum", n=tokens)
    if s.verdict.check:  # a known mistake of another check's explains the output
        return skipped("skip_differs_as", check=s.verdict.check)
    where = differs.nonzero()[0].tolist()  # (…, token, feature)
    token, feature = where[-2], where[-1]
    mine = out[tuple(where)].item()
    ones = out[(*where[:-2], 0, feature)].item()
    message = msg(
        "cause_weights_sum", cls=s.cls.__name__, n=tokens, token=token + 1, feature=feature,
        mine=f"{mine:.4f}", first=f"{ones:.4f}",
    )  # fmt: skip
    return failed(message, "weights_sum")


def _flipped(buffer: Tensor) -> Tensor:
    """The mask with what it hides and what it shows swapped."""
    if buffer.dtype == torch.bool:
        return ~buffer
    if torch.isinf(buffer).any():
        return torch.where(torch.isinf(buffer), 0.0, -torch.inf).to(buffer.dtype)
    return 1 - buffer


def _changes_output(
    module: nn.Module, x: Tensor, y: Tensor, flip: Callable[[], contextlib.AbstractContextManager]
) -> bool:
    """Whether the output changes while ``flip()`` holds (it undoes itself when its
    context exits): a run that breaks counts as a change."""
    try:
        with flip():
            out = call(module, x)
    except LEARNER_ERRORS:
        return True
    if not isinstance(out, Tensor) or out.shape != y.shape:
        return True
    return not torch.allclose(out, y, rtol=0, atol=TOLERANCE, equal_nan=True)


@contextlib.contextmanager
def _flipped_buffers(masks: list[Tensor]) -> Iterator[None]:
    saved = [mask.clone() for mask in masks]
    try:
        for mask in masks:
            mask.copy_(_flipped(mask))
        yield
    finally:
        for mask, old in zip(masks, saved, strict=True):
            mask.copy_(old)


@contextlib.contextmanager
def _flipped_global(module: nn.Module, name: str) -> Iterator[None]:
    """The notebook's variable ``name``, as the module's methods see it, flipped."""
    spaces = {
        id(f.__globals__): f.__globals__
        for cls in {type(m) for m in module.modules()}
        for f in vars(cls).values()
        if inspect.isfunction(f) and name in f.__globals__
    }
    saved = {key: space[name] for key, space in spaces.items()}
    try:
        for space in spaces.values():
            space[name] = _flipped(space[name])
        yield
    finally:
        for key, space in spaces.items():
            space[name] = saved[key]


def _global_blamed(module: nn.Module, x: Tensor, y: Tensor) -> Result | None:
    """The failure for a mask of the notebook's whose flipping changes the output, if any."""
    for mask, shape in global_masks(module):
        if _changes_output(module, x, y, functools.partial(_flipped_global, module, mask)):
            message = msg(
                "fail_global_mask", cls=type(module).__name__, name=mask, shape=str(shape)
            )
            return failed(message, "global_mask")
    return None


def mask_buffer(s: ClassSubject) -> Result:
    """The mask is kept in the module as a registered buffer, and forward reads that one.

    A mask of the notebook's is blamed only when the behaviour says so: flipping it changes
    the output, and flipping the module's own buffers does not.
    """
    name, module = s.cls.__name__, s.build(s.probes[0])
    buffers = [(key, b) for key, b in module.named_buffers() if mask_like(b)]
    plain = [key for key, value in vars(module).items() if mask_like(value)]
    if not buffers and not plain and not global_masks(module):
        return skipped("skip_no_mask_kept")
    x = s.outcome(s.probes[0]).x
    try:
        y = call(module, x)
    except LEARNER_ERRORS:  # whether forward reads it cannot be seen
        return skipped("skip_needs", check="runs")
    if not isinstance(y, Tensor):
        return skipped("skip_needs", check="shape")
    masks = [b for _, b in buffers]
    reads_own = bool(masks) and _changes_output(
        module, x, y, functools.partial(_flipped_buffers, masks)
    )
    if not reads_own and (blamed := _global_blamed(module, x, y)) is not None:
        return blamed
    if not buffers:
        if plain:
            return failed(msg("fail_mask_attribute", cls=name, name=plain[0]), "mask_buffer")
        return skipped("skip_no_mask_kept")
    if reads_own:
        return passed("pass_mask_buffer", name=buffers[0][0])
    if s.verdict.check == "causal":  # no mask at all: the causal check says so
        return skipped("skip_differs_as", check="causal")
    if causal(s).status == "pass":  # it hides the future another way (is_causal=True)
        return skipped("skip_mask_unused", name=buffers[0][0])
    return failed(msg("fail_mask_unread", cls=name, name=buffers[0][0]), "global_mask")
