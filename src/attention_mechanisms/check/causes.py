"""The likely cause of what went wrong, in the learner's terms: errors and wrong shapes.

Each cause is a row of a table: how to recognise it, and the message (and the site's
section) that names it. The first row that recognises the failure wins; an error that no
row recognises is reported as it was raised, with its cell and line.
"""

from __future__ import annotations

import dis
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from types import CodeType
from typing import TypeGuard

import torch
from torch import Tensor, nn

from .locate import Locator
from .messages import Message, msg
from .probes import Probe, describe


@dataclass(frozen=True)
class Failure:
    """What the causes look at: the error (or wrong output), where, and at which probe."""

    error: BaseException | None
    module: nn.Module | None
    probe: Probe
    locator: Locator
    book_ran: bool = True  # whether the same class ran at the book's shapes
    d_in: str = "d_in"  # the learner's name for the book's d_in


def _text(failure: Failure) -> Message:
    """The error as raised, and where in the learner's cells."""
    error = failure.error
    text = f"{type(error).__name__}: {error}"
    where = failure.locator.raised_message(error) if error is not None else None
    return msg("raised", error=text, where=where) if where else msg("error", error=text)


def _says(*fragments: str) -> Callable[[Failure], bool]:
    return lambda f: f.error is not None and any(text in str(f.error) for text in fragments)


def _unsliced_mask(failure: Failure) -> bool:
    """Fewer tokens than context_length, and a size mismatch between the two: "The size of
    tensor a (4) must match the size of tensor b (6)"."""
    probe, text = failure.probe, str(failure.error)
    sizes = f"({probe.tokens})" in text and f"({probe.context_length})" in text
    return probe.name == "fewer_tokens" and failure.book_ran and sizes


def _transposed_weight(failure: Failure) -> bool:
    """A matrix product that fails on a parameter stored ``(d_out, d_in)`` and used as
    ``x @ W`` (it works whenever ``d_in == d_out``)."""
    if not _says("mat1 and mat2 shapes cannot be multiplied", "size mismatch")(failure):
        return False
    module, probe = failure.module, failure.probe
    shapes = {tuple(p.shape) for p in module.parameters()} if module is not None else set()
    return probe.d_in != probe.d_out and (probe.d_out, probe.d_in) in shapes


def mask_like(value: object) -> TypeGuard[Tensor]:
    """A square tensor (in its last two dimensions) of 0 and 1, bools or -inf: a mask."""
    if not isinstance(value, Tensor) or value.dim() < 2 or value.shape[-1] != value.shape[-2]:
        return False
    finite = value[torch.isfinite(value)] if value.is_floating_point() else value
    return value.dtype == torch.bool or bool(((finite == 0) | (finite == 1)).all())


def _globals_read(code: CodeType) -> set[str]:
    """The names that ``code`` (and the functions and comprehensions inside it) reads as
    globals: ``mask`` in ``scores.masked_fill(mask, ...)``, not in ``self.mask``."""
    names = {i.argval for i in dis.get_instructions(code) if i.opname in _GLOBAL_LOADS}
    for const in code.co_consts:
        if isinstance(const, CodeType):
            names |= _globals_read(const)
    return names


_GLOBAL_LOADS = ("LOAD_GLOBAL", "LOAD_NAME")


def global_masks(module: nn.Module) -> list[tuple[str, tuple[int, ...]]]:
    """The notebook's own masks that the methods of the module's classes (its heads' too)
    read as globals, with their shapes."""
    found = {}
    for cls in dict.fromkeys(type(m) for m in module.modules()):
        for method in vars(cls).values():
            if not inspect.isfunction(method):
                continue
            for name in sorted(_globals_read(method.__code__)):
                value = method.__globals__.get(name)
                if mask_like(value):
                    found[name] = tuple(value.shape)
    return list(found.items())


def _global_mask(failure: Failure) -> bool:
    """A size mismatch in a module that reads a mask of the notebook's, not its own."""
    mismatch = _says("must match the size", "out of bounds", "invalid for input of size")
    return mismatch(failure) and failure.module is not None and bool(global_masks(failure.module))


def head_dim_from_d_in(failure: Failure) -> bool:
    """``head_dim = d_in // num_heads``: right while ``d_in == d_out`` (GPT-2's sizes), a
    reshape that fails (or a wrong size) once they differ."""
    probe, module = failure.probe, failure.module
    if module is None or probe.d_in // probe.num_heads == probe.head_dim:
        return False
    pattern = re.compile(rf"\b{re.escape(failure.d_in)}\s*//")
    for method in (type(module).__init__, type(module).forward):
        try:  # a method's source (a class's own needs a file, which a cell's has not)
            if pattern.search(inspect.getsource(method)):
                return True
        except (OSError, TypeError):
            continue
    return False


# (recognises, message key, topic): the first that recognises the failure names its cause.
ERROR_CAUSES: list[tuple[Callable[[Failure], bool], str, str]] = [
    (_says("'torch.Size' object is not callable"), "cause_shape_call", "shape_call"),
    (_says("forward() missing"), "cause_forward_arguments", "mask_buffer"),
    (head_dim_from_d_in, "cause_head_dim_d_in", "head_dim_d_in"),
    (_global_mask, "cause_global_mask", "global_mask"),
    (_unsliced_mask, "cause_mask_not_sliced", "mask_not_sliced"),
    (
        _says("view size is not compatible with input tensor's size and stride"),
        "cause_contiguous",
        "contiguous",
    ),
    (_transposed_weight, "cause_weight_layout", "weight_layout"),
]


def trailing_comma(module: nn.Module | None, locator: Locator) -> Message | None:
    """An attribute that a trailing comma made a one-element tuple, named with its line."""
    if module is None:
        return None
    init = type(module).__init__
    try:
        lines, first = inspect.getsourcelines(init)
    except (OSError, TypeError):
        lines, first = [], 1
    for name, value in vars(module).items():
        if isinstance(value, tuple) and len(value) == 1 and isinstance(value[0], int | float):
            pattern = re.compile(rf"self\.{re.escape(name)}\s*=.*,\s*(#.*)?$")
            for offset, text in enumerate(lines):
                if pattern.search(text.rstrip()):
                    where = locator.where_message(init.__code__.co_filename, first + offset)
                    statement = text.split("#")[0].strip()
                    return msg(
                        "cause_trailing_comma_at", name=name, value=repr(value),
                        statement=statement, where=where,
                    )  # fmt: skip
            return msg("cause_trailing_comma", name=name, value=repr(value))
    return None


def error_cause(failure: Failure) -> tuple[Message, str | None]:
    """The message for an error raised by the learner's code, and its topic to link."""
    text = _text(failure)
    comma = trailing_comma(failure.module, failure.locator)
    if comma is not None:
        return at_probe(msg("cause_raised", cause=comma, error=text), failure), "trailing_comma"
    for recognises, key, topic in ERROR_CAUSES:
        if recognises(failure):
            return at_probe(msg(key, error=text, **_details(failure)), failure), topic
    return at_probe(msg("error", error=text), failure), None


def _details(failure: Failure) -> dict[str, object]:
    """What the causes' messages may name: the probe's sizes, the notebook's mask."""
    probe = failure.probe
    masks = global_masks(failure.module) if failure.module is not None else []
    mask, shape = masks[0] if masks else ("", ())
    return {"tokens": probe.tokens, "d_in": probe.d_in, "d_out": probe.d_out,
            "num_heads": probe.num_heads, "wrong": probe.d_in // probe.num_heads,
            "right": probe.head_dim, "mask": mask, "shape": str(shape)}  # fmt: skip


def at_probe(message: Message, failure: Failure) -> Message:
    """The message as it stands at the book's shapes; elsewhere, after what the probe
    changed: "works with the book's shapes; with 4 tokens (context_length=6): ..."."""
    if failure.probe.name == "book" or not failure.book_ran:
        return message
    return msg("at_probe", probe=describe(failure.probe), cause=message)


def shape_cause(
    role: str, seen: tuple[int, ...], expected: tuple[int, ...], probe: Probe
) -> tuple[str, str | None]:
    """The message key and topic for an output of shape ``seen`` where the book's role gives
    ``expected``: heads joined along the wrong dimension, ``d_out`` read as the other
    meaning, the attention weights returned instead of the context."""
    heads, d_out = probe.num_heads, probe.d_out
    if role == "MultiHeadAttentionWrapper" and len(seen) == len(expected):
        joined = {
            (expected[0] * heads, *expected[1:-1], d_out): "cause_cat_batch",
            (*expected[:-2], expected[-2] * heads, d_out): "cause_cat_tokens",
            (*expected[:-1], d_out): "cause_wrapper_total",
        }
        if seen in joined:
            return joined[seen], "cat_dim" if "cat" in joined[seen] else "d_out_meaning"
    if role == "MultiHeadAttention" and seen == (*expected[:-1], d_out * heads):
        return "cause_multihead_per_head", "d_out_meaning"
    if seen[-2:] == (probe.tokens, probe.tokens) and expected[-1] != probe.tokens:
        return "cause_returns_weights", None
    return "cause_shape", None


def shape_message(
    role: str, y: object, expected: tuple[int, ...], probe: Probe
) -> tuple[Message, str | None]:
    seen = tuple(y.shape) if isinstance(y, Tensor) else type(y).__name__
    if not isinstance(seen, tuple):
        return msg("cause_not_a_tensor", seen=seen, expected=str(expected), role=role), None
    key, topic = shape_cause(role, seen, expected, probe)
    message = msg(
        key, seen=str(seen), expected=str(expected), role=role, heads=probe.num_heads,
        d_out=probe.d_out,
    )  # fmt: skip
    if probe.name != "book":
        message = msg("at_probe", probe=describe(probe), cause=message)
    return message, topic
