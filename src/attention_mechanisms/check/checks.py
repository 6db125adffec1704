"""Check each of a learner's components against the book, one named check at a time.

A class is built with the book's arguments (mapped to the learner's parameter names), run
on the book's six tokens, and compared with the package's class for its role holding the
same weights (copied by creation order: query, key, value, then the output projection).
When the outputs differ, the variants of `reference` say why: the output that equals the
book's computation with one aspect changed fails the check named after that aspect, and
``matches_book`` is then skipped as explained. Causality, the mask buffer, dropout and the
output projection are also probed directly.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from .components import Component
from .locate import Locator
from .reference import (
    BOOK,
    REFERENCE,
    VARIANTS,
    Variant,
    biases,
    book_forward,
    projections,
)

SITE = "https://attention-mechanisms.github.io/attention-mechanisms/en/"
CHECKS = (
    "constructs", "runs", "shape", "matches_book", "scale", "softmax_dim", "causal",
    "diagonal", "mask_buffer", "dropout", "heads", "out_proj",
)  # fmt: skip
_SINGLE = {"constructs", "runs", "shape", "matches_book", "scale", "softmax_dim"}
_CAUSAL = _SINGLE | {"causal", "diagonal", "mask_buffer", "dropout"}
APPLIES = {
    "SelfAttention_v1": _SINGLE,
    "SelfAttention_v2": _SINGLE,
    "CausalAttention": _CAUSAL,
    "MultiHeadAttentionWrapper": _CAUSAL | {"heads"},
    "MultiHeadAttention": _CAUSAL | {"heads", "out_proj"},
    "attention_function": {"runs", "shape", "matches_book", "causal"},
    "softmax": {"runs", "shape", "matches_book"},
    "context": {"runs", "shape", "matches_book"},
    "scores": {"runs", "shape", "matches_book"},
}
# Where the site explains each role and each check: (page of chapter 3, section).
LINKS = {
    "SelfAttention_v1": (
        "03-trainable-self-attention",
        "342-implementing-a-compact-self-attention-python-class",
    ),
    "SelfAttention_v2": (
        "03-trainable-self-attention",
        "342-implementing-a-compact-self-attention-python-class",
    ),
    "CausalAttention": ("04-causal-attention", "353-implementing-a-compact-causal-attention-class"),
    "MultiHeadAttentionWrapper": (
        "05-multi-head-attention",
        "361-stacking-multiple-single-head-attention-layers",
    ),
    "MultiHeadAttention": ("05-multi-head-attention", "the-class"),
    "attention_function": ("04-causal-attention", "second-way-infty-before-the-softmax"),
    "softmax": ("02-simple-self-attention", "where-the-naive-softmax-breaks"),
    "context": ("02-simple-self-attention", "332-computing-attention-weights-for-all-input-tokens"),
    "scores": (
        "02-simple-self-attention",
        "331-a-simple-self-attention-mechanism-without-trainable-weights",
    ),
    "scale": ("03-trainable-self-attention", "why-the-scores-are-scaled"),
    "softmax_dim": (
        "03-trainable-self-attention",
        "341-computing-the-attention-weights-step-by-step",
    ),
    "causal": ("04-causal-attention", "second-way-infty-before-the-softmax"),
    "diagonal": ("pitfalls", "tril-or-triu-which-positions-does-the-mask-mark"),
    "mask_buffer": ("pitfalls", "a-mask-kept-as-a-plain-attribute"),
    "dropout": ("04-causal-attention", "352-masking-additional-attention-weights-with-dropout"),
    "heads": ("05-multi-head-attention", "tracing-the-reshapes-on-a-tiny-tensor"),
    "out_proj": ("05-multi-head-attention", "the-class"),
    "shape_call": ("pitfalls", "calling-xshape-1"),
    "trailing_comma": ("pitfalls", "a-trailing-comma-selfd_out-d_out"),
}
BOOK_VALUES = {
    "d_in": 3, "d_out": 2, "context_length": 6, "dropout": 0.0, "num_heads": 2, "qkv_bias": False,
}  # fmt: skip
# The book's six tokens ("Your journey starts with one step"), three numbers each.
INPUTS = torch.tensor(
    [
        [0.43, 0.15, 0.89],
        [0.55, 0.87, 0.66],
        [0.57, 0.85, 0.64],
        [0.22, 0.58, 0.33],
        [0.77, 0.25, 0.10],
        [0.05, 0.80, 0.55],
    ]
)
TOLERANCE = 1e-5
# What a learner's code may raise: a sys.exit() or a KeyboardInterrupt in it is their error too.
LEARNER_ERRORS = (Exception, SystemExit, KeyboardInterrupt)


@dataclass
class Result:
    check: str
    status: str  # "pass", "fail" or "skip"
    message: str = ""


def link(topic: str) -> str:
    """The address of the site's section on ``topic`` (a role or a check)."""
    page, section = LINKS[topic]
    return f"{SITE}chapter-3/{page}/#{section}"


def _see(topic: str) -> str:
    return f" (see {link(topic)})"


def diagnose(error: BaseException, module: object, locator: Locator) -> str:
    """The likely cause of ``error`` in the learner's terms, or its plain text."""
    where = locator.raised(error)
    if isinstance(error, TypeError) and "'torch.Size' object is not callable" in str(error):
        return f"torch.Size is not callable: shape(-1) should be shape[-1] ({where})" + _see(
            "shape_call"
        )
    if isinstance(error, TypeError) and "forward() missing" in str(error):
        return (
            f"{error}: the book's forward takes the input x alone (its mask is a buffer of "
            "the module)" + _see("mask_buffer")
        )
    comma = trailing_comma(module, locator) if module is not None else ""
    text = f"{type(error).__name__}: {error}" + (f" ({where})" if where else "")
    if comma:
        return f"{comma}, so it raised {text}" + _see("trailing_comma")
    return text


def trailing_comma(module: object, locator: Locator) -> str:
    """An attribute that a trailing comma made a one-element tuple, named with its line."""
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
                    where = locator.where(init.__code__.co_filename, first + offset)
                    statement = text.split("#")[0].strip()
                    return (
                        f"self.{name} is the tuple {value!r}: the trailing comma in "
                        f"{statement!r} ({where})"
                    )
            return f"self.{name} is the tuple {value!r}: a trailing comma makes a tuple"
    return ""


def mask_convention(sources: list[str]) -> str:
    """How the learner's mask marks positions, read from their code (``tril``: keep)."""
    keeps = any("tril(" in source for source in sources)
    hides_zeros = any(re.search(r"masked_fill_?\(\s*\w+\s*==\s*0", source) for source in sources)
    if keeps and hides_zeros:
        return (
            "mask keeps the lower triangle (a keep mask), so masked_fill must hide where it "
            "is 0, as it does here; the book's mask marks what to hide (triu, diagonal=1)"
            + _see("diagonal")
        )
    return ""


def _close(a: object, b: Tensor) -> bool:
    return (
        isinstance(a, Tensor)
        and a.shape == b.shape
        and bool(torch.allclose(a.float(), b.float(), rtol=0, atol=TOLERANCE, equal_nan=True))
    )


def _values(role: str, mapping: dict[str, str]) -> dict[str, object]:
    """The book's arguments for ``role``; d_in = d_out = 4 where the learner has no d_out."""
    values = {book: BOOK_VALUES[book] for book in mapping if book in BOOK_VALUES}
    if "d_out" not in mapping:
        values["d_in"] = values["d_out"] = 4  # one size for both, divisible by two heads
    else:
        values.setdefault("d_out", BOOK_VALUES["d_out"])
    values.setdefault("d_in", BOOK_VALUES["d_in"])
    values.setdefault("num_heads", BOOK_VALUES["num_heads"])
    return values


def _input(role: str, d_in: int) -> Tensor:
    tokens = (
        INPUTS if d_in == 3 else torch.rand(6, d_in, generator=torch.Generator().manual_seed(0))
    )
    return (
        tokens
        if role in ("SelfAttention_v1", "SelfAttention_v2")
        else torch.stack((tokens, tokens))
    )


def _call(module: nn.Module, x: Tensor) -> object:
    """``module(x)``, or ``module(x, x, x)`` for a forward that requires query, key and value;
    the first element of a tuple it returns (as ``(context, weights)``)."""
    required = [
        p for p in inspect.signature(module.forward).parameters.values()
        if p.default is inspect.Parameter.empty
        and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]  # fmt: skip
    out = module(x, x, x) if len(required) >= 3 else module(x)
    return out[0] if isinstance(out, tuple) and out else out


def _reference(role: str, values: dict, module: nn.Module) -> nn.Module | str:
    """The package's class for ``role`` holding ``module``'s weights, or why it cannot."""
    learner = projections(module)
    qkv_bias = any(b is not None for b in biases(module)[:3])
    arguments = {"d_in": values["d_in"], "d_out": values["d_out"]}
    if role != "SelfAttention_v1":
        arguments["qkv_bias"] = qkv_bias
    if role not in ("SelfAttention_v1", "SelfAttention_v2"):
        arguments |= {"context_length": 6, "dropout": 0.0}
    if role.startswith("MultiHead"):
        arguments["num_heads"] = values["num_heads"]
    reference = REFERENCE[role](**arguments)
    book = projections(reference)
    if role == "MultiHeadAttention" and len(learner) == 3:
        book = book[:3]  # no output projection: compared with the variant without one
    if len(learner) != len(book):
        return (
            f"it has {len(learner)} weight matrices; the book's {role} has {len(book)} "
            "(query, key and value per head, then the output projection)"
        )
    with torch.no_grad():
        for mine, theirs in zip(book, learner, strict=True):
            if mine.shape != theirs.shape:
                return (
                    f"a weight of shape {tuple(theirs.shape)} where the book has "
                    f"{tuple(mine.shape)}"
                )
            mine.copy_(theirs)
        for mine, theirs in zip(biases(reference), biases(module), strict=False):
            if mine is not None:
                mine.copy_(theirs if theirs is not None else torch.zeros_like(mine))
    return reference.eval()


def check_class(component: Component, locator: Locator, sources: list[str]) -> list[Result]:
    """Every check of ``CHECKS`` on a class in one of the book's roles."""
    role, cls = component.role, component.obj
    results: dict[str, Result] = {}
    values = _values(role, component.parameters)
    missing = [
        name
        for name, parameter in list(inspect.signature(cls.__init__).parameters.items())[1:]
        if parameter.default is inspect.Parameter.empty
        and parameter.kind in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY)
        and name not in component.parameters.values()
    ]
    arguments = {
        learner: values[book] for book, learner in component.parameters.items() if book in values
    }

    def build(**changes):
        return cls(
            **{
                **arguments,
                **{
                    component.parameters[k]: v
                    for k, v in changes.items()
                    if k in component.parameters
                },
            }
        )

    shown = ", ".join(f"{k}={v!r}" for k, v in arguments.items())
    if missing:
        results["constructs"] = Result(
            "constructs",
            "fail",
            f"{cls.__name__} needs {', '.join(missing)}, which the book's {role} does not take",
        )
        return _finish(role, results, "it does not build")
    try:
        torch.manual_seed(123)
        module = build().eval()
    except LEARNER_ERRORS as error:  # the learner's constructor failed
        results["constructs"] = Result(
            "constructs",
            "fail",
            f"{cls.__name__}({shown}) raised " + diagnose(error, None, locator),
        )
        return _finish(role, results, "it does not build")
    results["constructs"] = Result("constructs", "pass", f"{cls.__name__}({shown})")

    x = _input(role, values["d_in"])
    try:
        with torch.no_grad():
            y = _call(module, x)
    except LEARNER_ERRORS as error:
        results["runs"] = Result("runs", "fail", diagnose(error, module, locator))
        note = mask_convention(sources)
        if note:
            results["causal"] = Result("causal", "skip", f"not run; its convention: {note}")
        return _finish(role, results, "it does not run")
    results["runs"] = Result("runs", "pass", f"on {tuple(x.shape)}")

    heads = values["num_heads"] if role == "MultiHeadAttentionWrapper" else 1
    expected = (*x.shape[:-1], values["d_out"] * heads)
    if not isinstance(y, Tensor) or tuple(y.shape) != expected:
        seen = tuple(y.shape) if isinstance(y, Tensor) else type(y).__name__
        results["shape"] = Result(
            "shape", "fail", f"{seen}, where the book's {role} gives {expected}"
        )
        return _finish(role, results, "the shape is wrong")
    results["shape"] = Result("shape", "pass", str(expected))

    shared = _shared_heads(module)
    if shared:
        results["heads"] = Result("heads", "fail", shared + _see("heads"))
        results["matches_book"] = Result("matches_book", "skip", "not compared: see heads")
        return _finish(role, results, "the heads share their weights")
    if role == "MultiHeadAttention" and values["d_out"] // values["num_heads"] < 2:
        # A head of one column hides the scaling and the split: compare at d_out = 4.
        values = {**values, "d_out": 4}
        try:
            torch.manual_seed(123)
            module = build(d_out=4).eval()
            with torch.no_grad():
                y = _call(module, x)
        except LEARNER_ERRORS as error:
            results["matches_book"] = Result(
                "matches_book", "fail", "with d_out=4 (two columns a head) it raised "
                + diagnose(error, module, locator),
            )  # fmt: skip
            return _finish(role, results, "it does not run with d_out=4")
    reference = _reference(role, values, module)
    variant = BOOK
    if isinstance(reference, str):
        results["matches_book"] = Result(
            "matches_book", "fail", f"cannot compare: {reference}" + _see(role)
        )
        isolated = False
    elif _close(y, book_forward(reference, role, x)):
        results["matches_book"] = Result(
            "matches_book", "pass", f"equal to the book's {role} to {TOLERANCE:g}"
        )
        isolated = True
    else:
        explained = _explain(role, reference, x, y, module)
        isolated = explained is not None
        if explained is not None:
            check, variant, message = explained
            results[check] = Result(check, "fail", message)
            results["matches_book"] = Result(
                "matches_book", "skip", f"differs from the book as {check} says"
            )
        else:
            results["matches_book"] = Result(
                "matches_book",
                "fail",
                _difference(y, book_forward(reference, role, x)) + _see(role),
            )
    for check, message in _AGREES.items():
        if check in APPLIES[role] and check not in results:
            results[check] = (
                Result(check, "pass", message)
                if isolated
                else Result(
                    check,
                    "skip",
                    "not checked: the output differs from the book's for another reason",
                )
            )

    # Probes that need no comparison with the book run whatever the comparison found (but a
    # token that cannot see itself sees the future through an all-hidden row: not causal's).
    explained_by_diagonal = results.get("diagonal", Result("", "")).status == "fail"
    causal_open = "causal" in APPLIES[role] and results["causal"].status != "fail"
    if causal_open and not explained_by_diagonal:
        results["causal"] = _causal(module, x, sources)
    if "diagonal" in APPLIES[role] and results["diagonal"].status != "fail":
        results["diagonal"] = _diagonal(y)
    if "mask_buffer" in APPLIES[role]:
        results["mask_buffer"] = _mask_buffer(module, cls)
    if "dropout" in APPLIES[role]:
        results["dropout"] = (
            _dropout(build, role, values, x, variant)
            if isolated
            else Result("dropout", "skip", "not checked: the output differs from the book's")
        )
    if "out_proj" in APPLIES[role] and results["out_proj"].status != "fail":
        results["out_proj"] = _out_proj(module, x, y)
    return _finish(role, results, "")


_AGREES = {
    "scale": "the scores are divided by the square root of the key dimension",
    "softmax_dim": "the weights are normalised over the keys",
    "causal": "no output depends on a later token",
    "diagonal": "each token sees itself",
    "heads": "each head equals single-head attention with its slice of the weights",
    "out_proj": "applied",
}


def _shared_heads(module: nn.Module) -> str:
    """A message if a ModuleList holds one module several times ([head] * num_heads)."""
    for heads in (m for m in module.modules() if isinstance(m, nn.ModuleList)):
        if len({id(head) for head in heads}) < len(heads):
            return (
                f"{type(module).__name__}: the heads are one module repeated "
                "([head] * num_heads); each needs its own weights"
            )
    return ""


def _finish(role: str, results: dict[str, Result], why_skipped: str) -> list[Result]:
    """All checks, in order: those that were not run are skipped, with the reason."""
    out = []
    for check in CHECKS:
        if check in results:
            out.append(results[check])
        elif check not in APPLIES[role]:
            out.append(Result(check, "skip", f"does not apply to {role}"))
        else:
            out.append(Result(check, "skip", f"not checked: {why_skipped or 'no probe'}"))
    return out


_VARIANT_MESSAGES = {
    Variant(
        scale="none"
    ): "the scores are not scaled: divide them by keys.shape[-1] ** 0.5 before the softmax",
    Variant(
        scale="d_k"
    ): "the scores are divided by d_k, not by its square root: use keys.shape[-1] ** 0.5",
    Variant(
        scale="sqrt_d_out"
    ): "the scores are divided by the square root of d_out, not of the head dimension",
    Variant(
        softmax_dim=-2
    ): "the softmax normalises over the queries (dim=-2 or 0): use dim=-1, over the keys",
    Variant(mask="none"): "later tokens are not hidden: the outputs equal attention without a mask",
    Variant(
        mask="hide_diagonal_too"
    ): "the mask hides each token from itself too: triu needs diagonal=1",
    Variant(
        out_proj=False
    ): "the output projection is never applied: end with self.out_proj(context_vec)",
    Variant(mask="hide_diagonal_too", fill=-1e9): (
        "the mask hides each token from itself too (triu needs diagonal=1), so the first "
        "token's row is all hidden and averages every token, the later ones included"
    ),
    Variant(heads="interleaved"): (
        "each head takes every num_heads-th column, not a slice of head_dim columns: view as "
        "(b, num_tokens, num_heads, head_dim), then transpose(1, 2)"
    ),
}


def _explain(role, reference, x, y, module) -> tuple[str, Variant, str] | None:
    """The check whose variant the learner's output equals: (check, variant, message)."""
    for check, variants in VARIANTS.items():
        if check not in APPLIES[role]:
            continue
        for variant in variants:
            if _close(y, book_forward(reference, role, x, variant)):
                message = f"{type(module).__name__}: {_VARIANT_MESSAGES[variant]}" + _see(check)
                return check, variant, message
    return None


def _difference(y: Tensor, book: Tensor) -> str:
    differs = ~torch.isclose(y, book, rtol=0, atol=TOLERANCE, equal_nan=True)
    index = tuple(int(i) for i in differs.nonzero()[0])
    return (
        f"differs from the book: at {index} it gives {y[index].item():.4f}, the book "
        f"{book[index].item():.4f}"
    )


@torch.no_grad()
def _causal(module: nn.Module, x: Tensor, sources: list[str]) -> Result:
    changed = x.clone()
    changed[..., -1, :] += 1.0
    before, after = _call(module, x), _call(module, changed)
    if not torch.allclose(before[..., :-1, :], after[..., :-1, :], atol=TOLERANCE, equal_nan=True):
        return Result(
            "causal",
            "fail",
            "changing the last token changes the earlier tokens' outputs: the future is not hidden"
            + _see("causal"),
        )
    return Result(
        "causal", "pass", mask_convention(sources) or "no output depends on a later token"
    )


def _diagonal(y: Tensor) -> Result:
    if torch.isnan(y).any():
        return Result(
            "diagonal",
            "fail",
            (
                "the first token's output is NaN: its whole row is hidden, so the mask hides "
                "the diagonal too (triu needs diagonal=1)"
            )
            + _see("diagonal"),
        )
    return Result("diagonal", "pass", "each token sees itself")


def _mask_buffer(module: nn.Module, cls: type) -> Result:
    buffers = [
        name for name, b in module.named_buffers() if b.dim() == 2 and b.shape[0] == b.shape[1]
    ]
    if buffers:
        return Result("mask_buffer", "pass", f"registered buffer {buffers[0]}")
    plain = [
        name
        for name, value in vars(module).items()
        if isinstance(value, Tensor) and value.dim() == 2
    ]
    where = f"self.{plain[0]} is a plain attribute" if plain else "the mask is made in forward"
    return Result(
        "mask_buffer",
        "fail",
        (
            f"{cls.__name__}: {where}; register it with self.register_buffer('mask', ...) so "
            f"it moves with .to(device) and is in state_dict"
        )
        + _see("mask_buffer"),
    )


def _dropout(build, role, values, x, variant: Variant) -> Result:
    """Same seed, same draws: the learner's module in training mode against the book's."""
    if "dropout" not in values:
        return Result("dropout", "skip", "it takes no dropout rate")
    torch.manual_seed(123)
    module = build(dropout=0.5, d_out=values["d_out"])
    reference = _reference(role, values, module)
    if isinstance(reference, str):
        return Result("dropout", "skip", f"cannot compare: {reference}")
    with torch.no_grad():
        module.eval()
        first, second = _call(module, x), _call(module, x)
        if not torch.allclose(first, second, rtol=0, atol=0, equal_nan=True):
            return Result(
                "dropout",
                "fail",
                (
                    "eval mode is not deterministic: use an nn.Dropout module, which is off "
                    "in eval mode"
                )
                + _see("dropout"),
            )
        module.train()
        torch.manual_seed(0)
        theirs = _call(module, x)
        torch.manual_seed(0)
        book = book_forward(reference, role, x, variant, nn.Dropout(0.5).train())
    if _close(theirs, book):
        return Result(
            "dropout",
            "pass",
            "on the attention weights; survivors scaled by 1/(1-p); eval mode deterministic",
        )
    return Result(
        "dropout",
        "fail",
        (
            "in training mode, with the same seed, the output differs from the book's: "
            "dropout must act on the attention weights, once per head module (nn.Dropout "
            "scales survivors by 1/(1-p))"
        )
        + _see("dropout"),
    )


@torch.no_grad()
def _out_proj(module: nn.Module, x: Tensor, y: Tensor) -> Result:
    """The fourth projection (after query, key and value) is the output projection."""
    linears = [m for m in module.modules() if isinstance(m, nn.Linear)]
    if len(linears) < 4:
        return Result(
            "out_proj", "fail",
            f"{type(module).__name__} has {len(linears)} nn.Linear layers: no output projection "
            "after the query, key and value ones" + _see("out_proj"),
        )  # fmt: skip
    last = linears[3]
    saved = last.weight.clone()
    last.weight.zero_()
    changed = _call(module, x)
    last.weight.copy_(saved)
    if _close(changed, y):
        return Result(
            "out_proj", "fail",
            "the output does not change with the output projection's weights: it is not "
            "applied" + _see("out_proj"),
        )  # fmt: skip
    return Result("out_proj", "pass", "applied")


def check_function(component: Component, locator: Locator, sources: list[str]) -> list[Result]:
    """The checks that apply to a helper of 3.3 or a stand-alone attention function."""
    role, function = component.role, component.obj
    results: dict[str, Result] = {}
    torch.manual_seed(123)
    if role == "attention_function":
        q, k, v = (torch.rand(2, 2, 6, 3) for _ in range(3))  # (b, heads, tokens, head_dim)
        call, expected = (lambda: function(q, k, v)), (2, 2, 6, 3)
        book = torch.softmax(q @ k.mT / 3**0.5, dim=-1) @ v
    elif role == "softmax":
        scores = INPUTS @ INPUTS[1]
        call, expected, book = (lambda: function(scores)), (6,), torch.softmax(scores, dim=0)
    elif role == "context":
        weights = torch.softmax(INPUTS @ INPUTS.T, dim=-1)
        call, expected, book = (lambda: function(weights, INPUTS)), (6, 3), weights @ INPUTS
    else:  # scores
        call, expected, book = (lambda: function(INPUTS)), (6, 6), INPUTS @ INPUTS.T
    try:
        out = call()
    except LEARNER_ERRORS as error:
        message = diagnose(error, None, locator)
        results["runs"] = Result(
            "runs", "fail", message if "(see " in message else message + _see(role)
        )
        note = mask_convention(sources)
        if note and "causal" in APPLIES[role]:
            results["causal"] = Result("causal", "skip", f"not run; its convention: {note}")
        return _finish(role, results, "it does not run")
    results["runs"] = Result("runs", "pass")
    out = out[0] if isinstance(out, tuple) else out  # (context, weights), as some return
    if not isinstance(out, Tensor) or tuple(out.shape) != expected:
        seen = tuple(out.shape) if isinstance(out, Tensor) else type(out).__name__
        results["shape"] = Result("shape", "fail", f"{seen}, where the book's gives {expected}")
        return _finish(role, results, "the shape is wrong")
    results["shape"] = Result("shape", "pass", str(expected))
    if _close(out, book):
        results["matches_book"] = Result(
            "matches_book", "pass", f"equal to the book's to {TOLERANCE:g}"
        )
    else:
        results["matches_book"] = Result(
            "matches_book", "fail", _difference(out, book) + _see(role)
        )
    if role == "attention_function":
        results["causal"] = _causal_function(function, q, k, v, sources)
    return _finish(role, results, "")


def _causal_function(function, q: Tensor, k: Tensor, v: Tensor, sources: list[str]) -> Result:
    """With a causal mask as its fourth argument, in either convention, it hides the future."""
    if len(inspect.signature(function).parameters) < 4:
        return Result("causal", "skip", "it takes no mask")
    book = torch.softmax((q @ k.mT / 3**0.5).masked_fill(_HIDE, -torch.inf), dim=-1) @ v
    for mask, convention in ((_HIDE, "hide"), (~_HIDE, "keep")):
        try:
            out = function(q, k, v, mask)
        except LEARNER_ERRORS:
            continue
        out = out[0] if isinstance(out, tuple) else out
        if _close(out, book):
            note = mask_convention(sources) if convention == "keep" else ""
            return Result("causal", "pass", note or f"a {convention} mask hides the future")
    return Result(
        "causal", "fail",
        "given a causal mask (as the book's, or its opposite), the output still differs from "
        "causal attention" + _see("causal"),
    )  # fmt: skip


_HIDE = torch.triu(torch.ones(6, 6, dtype=torch.bool), diagonal=1)  # the book's causal mask
