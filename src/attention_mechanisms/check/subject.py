"""A learner's class in a role of the book, built and run at every probe, once.

`ClassSubject` builds the class at each of its role's probes (`probes.PROBES`) with the
book's arguments under the learner's parameter names, runs it, and keeps what happened
(`Outcome`). Its `verdict` compares the outputs with the book's computation on the same
weights, probe by probe where the class runs: the first probe where they differ, and the
`Variant` that the learner's output equals there, if one does (one of the listed variants,
or the scores divided by a number measured to fit, `measured_divisor`). Every check reads
from here, so the learner's code runs once per probe, whatever the number of checks.
"""

from __future__ import annotations

import inspect
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TypeGuard

import torch
from torch import Tensor, nn

from .components import CONFIG, Component, config, init_source
from .locate import Locator
from .probes import PROBES, Probe
from .reference import BOOK, VARIANTS, Variant, book_forward
from .weights import Mapping, candidates

TOLERANCE = 1e-5
MAPPINGS = 256  # at most this many ways of reading the learner's weights are tried
# What a learner's code may raise: a sys.exit() or a KeyboardInterrupt in it is their error too.
LEARNER_ERRORS = (Exception, SystemExit, KeyboardInterrupt)


def close(a: object, b: object, last_row: bool = True) -> TypeGuard[Tensor]:
    """Two tensors of equal shapes and values to `TOLERANCE` (NaN equal to NaN); without the
    last token's row when ``last_row`` is false."""
    if not isinstance(a, Tensor) or not isinstance(b, Tensor) or a.shape != b.shape:
        return False
    if not last_row:
        a, b = a[..., :-1, :], b[..., :-1, :]
    return bool(torch.allclose(a.float(), b.float(), rtol=0, atol=TOLERANCE, equal_nan=True))


def call(module: nn.Module, x: Tensor) -> object:
    """``module(x)``, or ``module(x, x, x)`` for a forward that requires query, key and value;
    the first element of a tuple it returns (as ``(context, weights)``)."""
    required = [
        p for p in inspect.signature(module.forward).parameters.values()
        if p.default is inspect.Parameter.empty
        and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]  # fmt: skip
    with torch.no_grad():
        out = module(x, x, x) if len(required) >= 3 else module(x)
    return out[0] if isinstance(out, tuple) and out else out


@dataclass
class Outcome:
    """What happened at one probe: the module built, its input and output, or the error
    and the stage (``"constructs"`` or ``"runs"``) that raised it."""

    probe: Probe
    x: Tensor
    module: nn.Module | None = None
    y: object = None
    error: BaseException | None = None
    stage: str = ""

    def ran(self) -> tuple[nn.Module, Tensor]:
        """The module and its output, for a check that runs once ``shape`` has passed.

        Raises:
            RuntimeError: If there is none: a check asked for them too early.
        """
        if self.module is None or not isinstance(self.y, Tensor):
            raise RuntimeError(f"no output at probe {self.probe.name!r} ({self.stage or 'ran'})")
        return self.module, self.y


@dataclass
class Verdict:
    """How the outputs compare with the book's: at the first probe where they differ (None:
    equal at every probe), the variant the output equals there (None: none does), and the
    learner's weights in the book's roles under which it does."""

    probe: Probe | None = None
    variant: Variant | None = BOOK
    mapping: Mapping | None = None
    check: str = ""  # the check named by the variant
    outcome: Outcome | None = None
    compared: list[Probe] = field(default_factory=list)


class ClassSubject:
    """One of the learner's classes in one of the book's roles."""

    def __init__(self, component: Component, locator: Locator, sources: list[str]) -> None:
        self.component, self.locator, self.sources = component, locator, sources
        self.role: str = component.role or ""
        if not (isinstance(component.obj, type) and issubclass(component.obj, nn.Module)):
            raise TypeError(f"{component.name} must be an nn.Module class; got {component.obj!r}")
        self.cls: type[nn.Module] = component.obj
        self.names = component.parameters  # the book's parameter -> the learner's
        self._outcomes: dict[Probe, Outcome] = {}
        self.busy = "runs"  # "constructs" while the learner's constructor runs

    @cached_property
    def square(self) -> bool:
        """Whether d_in must equal d_out: no d_out parameter, or nn.MultiheadAttention,
        whose query has embed_dim features by PyTorch's design."""
        return "d_out" not in self.names or "MultiheadAttention(" in init_source(self.cls)

    @cached_property
    def probes(self) -> list[Probe]:
        probes = (
            [probe.square() for probe in PROBES[self.role]] if self.square else PROBES[self.role]
        )
        if probes[0].batch == 0 and self._batched_only(probes[0]):
            probes = [replace(probe, batch=2) for probe in probes]
        by_shape = {probe.shape(): probe for probe in reversed(probes)}  # the first of a shape
        return [probe for probe in probes if by_shape[probe.shape()] is probe]

    def _batched_only(self, probe: Probe) -> bool:
        """Whether v1 or v2, which the book runs on one sequence, only runs on a batch (as a
        learner's written with ``transpose(1, 2)`` does): then it is checked on batches."""
        if self.outcome(probe).stage != "runs":
            return False
        return self.outcome(replace(probe, batch=2)).error is None

    @cached_property
    def source(self) -> str:
        """The source of the class's methods, its own learner's base classes' and the
        learner's functions they call (a class that a cell defined has no file)."""
        methods = [
            member
            for cls in self.cls.__mro__
            if cls.__module__ == "__main__"
            for member in vars(cls).values()
            if inspect.isfunction(member)
        ]
        called = [
            found
            for method in methods
            for name in method.__code__.co_names
            if inspect.isfunction(found := method.__globals__.get(name))
            and found.__module__ == "__main__"
        ]
        return "\n".join(inspect.getsource(f) for f in dict.fromkeys(methods + called))

    def takes(self, book: str) -> bool:
        """Whether the constructor takes the book's parameter ``book`` (a configuration
        takes them all)."""
        return book in self.names or CONFIG in self.names

    def missing(self) -> list[str]:
        """Parameters without a default that the book's constructor does not have."""
        parameters = list(inspect.signature(self.cls.__init__).parameters.items())[1:]
        return [
            name
            for name, p in parameters
            if p.default is inspect.Parameter.empty
            and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
            and name not in self.names.values()
        ]

    def arguments(self, probe: Probe, **changes: object) -> dict[str, object]:
        values = {**probe.values(), **changes}
        if CONFIG in self.names:
            return {self.names[CONFIG]: config(values)}
        return {mine: values[book] for book, mine in self.names.items() if book in values}

    def build(self, probe: Probe, **changes: object) -> nn.Module:
        torch.manual_seed(123)
        return self.cls(**self.arguments(probe, **changes)).eval()

    def outcome(self, probe: Probe) -> Outcome:
        if probe not in self._outcomes:
            self._outcomes[probe] = self._run(probe)
        return self._outcomes[probe]

    def _run(self, probe: Probe) -> Outcome:
        outcome = Outcome(probe, x=probe.inputs())
        self.busy = "constructs"  # for the time limit's message, should it run out here
        try:
            outcome.module = self.build(probe)
        except LEARNER_ERRORS as error:
            return replace(outcome, error=error, stage="constructs")
        self.busy = "runs"
        try:
            outcome.y = call(outcome.module, outcome.x)
        except LEARNER_ERRORS as error:
            return replace(outcome, error=error, stage="runs")
        return outcome

    def expected_shape(self, probe: Probe) -> tuple[int, ...]:
        heads = probe.num_heads if self.role == "MultiHeadAttentionWrapper" else 1
        x = probe.inputs()
        return (*x.shape[:-1], probe.d_out * heads)

    def mappings(self, outcome: Outcome) -> list[Mapping]:
        probe = outcome.probe
        if outcome.module is None:  # not built: no weights to read
            return []
        found = candidates(outcome.module, self.role, probe.d_in, probe.d_out, probe.num_heads)
        return list(itertools.islice(found, MAPPINGS))

    def match(self, outcome: Outcome, variants: list[Variant]) -> tuple[Variant, Mapping] | None:
        """The first variant, and the reading of the weights, that give the output."""
        mappings = self.mappings(outcome)
        for variant in variants:
            for mapping in mappings:
                try:
                    book = book_forward(self.role, mapping, outcome.x, variant)
                except (RuntimeError, LookupError):  # the reading does not fit the variant
                    continue
                if close(outcome.y, book, last_row=not variant.rows_ignored):
                    return variant, mapping
        return None

    @cached_property
    def verdict(self) -> Verdict:
        """Probe by probe, until the output differs from the book's (see `Verdict`)."""
        verdict = Verdict()
        for probe in self.probes:
            outcome = self.outcome(probe)
            if outcome.error is not None:  # `runs` says so; compared where it ran
                continue
            found = self.match(outcome, [BOOK])
            if found is not None:
                verdict.mapping = verdict.mapping or found[1]
                verdict.compared.append(probe)
                continue
            others = [v for variants in VARIANTS.values() for v in variants]
            explained = self.match(outcome, others) or self._measured(outcome)
            variant, mapping = explained or (None, None)
            check = next((c for c, vs in VARIANTS.items() if variant in vs), "")
            check = "scale" if variant is not None and variant.divisor else check
            return Verdict(probe, variant, mapping, check, outcome, verdict.compared)
        return verdict

    def _measured(self, outcome: Outcome) -> tuple[Variant, Mapping] | None:
        """The book's computation with the scores divided by a number measured to give the
        output, under one of the likeliest readings of the weights, if one does."""
        if not isinstance(outcome.y, Tensor):
            return None
        for mapping in self.mappings(outcome)[:8]:
            if (divisor := measured_divisor(self.role, outcome, mapping)) is not None:
                return Variant(scale="measured", divisor=divisor), mapping
        return None


def _fit(outcome: Outcome, forward: Callable[[float], Tensor | None]) -> float | None:
    """The divisor ``c`` for which ``forward(c)`` gives the output: a scan over c from 1/100
    to 10,000, then golden-section search around the best."""
    y = outcome.y

    def error(log_c: float) -> float:
        out = forward(math.exp(log_c))
        if not isinstance(out, Tensor) or not isinstance(y, Tensor) or out.shape != y.shape:
            return math.inf
        return float((out.double() - y.double()).abs().max())

    grid = [math.log(0.01) + i * math.log(1e6) / 240 for i in range(241)]
    errors = [error(g) for g in grid]
    best = min(range(len(grid)), key=errors.__getitem__)
    low, high = grid[max(best - 1, 0)], grid[min(best + 1, len(grid) - 1)]
    ratio = (math.sqrt(5) - 1) / 2
    for _ in range(60):
        a, b = high - ratio * (high - low), low + ratio * (high - low)
        low, high = (low, b) if error(a) < error(b) else (a, high)
    found = math.exp((low + high) / 2)
    return found if close(forward(found), y) else None


def measured_divisor(role: str, outcome: Outcome, mapping: Mapping) -> float | None:
    """What the scores are divided by, if one number makes the book's output the learner's."""

    def forward(c: float) -> Tensor | None:
        try:
            variant = Variant(scale="measured", divisor=c)
            return book_forward(role, mapping, outcome.x, variant)
        except (RuntimeError, LookupError):
            return None

    return _fit(outcome, forward)
