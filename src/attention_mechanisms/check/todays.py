"""Today's attention: a learner's own `GroupedQueryAttention`, `MultiHeadAttentionWithSWA`,
`MultiHeadLatentAttention` or `GatedDeltaNet`, with the package's signatures (which follow
the book's bonus code), checked against the package's class.

`TodaySubject` builds the learner's class at each of its role's settings (`ROLES`), runs
it, and builds the package's class with the same arguments, holding the learner's weights
(`reading.load`: by name, else by their shapes). Then:

- ``matches_book``: the two outputs are equal; if not, a parameter that changes nothing is
  named (`stages.unused`);
- ``causal``: changing the last token leaves every earlier output alone;
- ``window``: with a window of ``w``, changing the first token moves the outputs of tokens
  1 to ``w`` and no later one;
- ``kv_groups``: the key and value projections give ``num_kv_groups`` heads, each serving
  its consecutive query heads (``repeat_interleave``), not tiled (``repeat``).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from functools import cached_property

import torch
from torch import Tensor, nn

from .. import (
    GatedDeltaNet,
    GroupedQueryAttention,
    MultiHeadAttentionWithSWA,
    MultiHeadLatentAttention,
)
from . import stages
from .components import CONFIG, Component, config
from .locate import Locator
from .messages import Message, msg
from .properties import moved
from .reading import load, named_reading
from .result import Result, failed, passed, skipped
from .subject import LEARNER_ERRORS, TOLERANCE, call, close

TOKENS = 8
_SHARED = {"dropout": 0.0, "qkv_bias": False}
# role -> the package's class and the arguments it is checked with, several sizes each.
ROLES: dict[str, tuple[type[nn.Module], tuple[dict[str, int], ...]]] = {
    "GroupedQueryAttention": (GroupedQueryAttention, (
        {"d_in": 4, "d_out": 8, "num_heads": 4, "num_kv_groups": 2},
        {"d_in": 6, "d_out": 12, "num_heads": 6, "num_kv_groups": 3},
        {"d_in": 5, "d_out": 8, "num_heads": 4, "num_kv_groups": 1},
    )),
    "MultiHeadAttentionWithSWA": (MultiHeadAttentionWithSWA, (
        {"d_in": 4, "d_out": 8, "num_heads": 2, "sliding_window_size": 3},
        {"d_in": 6, "d_out": 6, "num_heads": 3, "sliding_window_size": 5},
    )),
    "MultiHeadLatentAttention": (MultiHeadLatentAttention, (
        {"d_in": 4, "d_out": 8, "num_heads": 2, "latent_dim": 4},
        {"d_in": 6, "d_out": 12, "num_heads": 3, "latent_dim": 5},
    )),
    "GatedDeltaNet": (GatedDeltaNet, (
        {"d_in": 4, "d_out": 8, "num_heads": 2},
        {"d_in": 6, "d_out": 12, "num_heads": 3},
    )),
}  # fmt: skip


@dataclass
class Run:
    """The learner's module at one setting, its output, and the package's output with the
    learner's weights (or why there is none: a message)."""

    setting: dict[str, int]  # the sizes; dropout and qkv_bias are `_SHARED`'s
    x: Tensor
    module: nn.Module | None = None
    y: object = None
    error: BaseException | None = None
    stage: str = ""
    book: Tensor | None = None
    unread: Message | None = None
    how: str = ""  # "how_by_name" or "how_by_shape"


def _arguments(names: dict[str, str], values: dict[str, object]) -> dict[str, object]:
    if CONFIG in names:
        return {names[CONFIG]: config(values)}
    return {mine: values[book] for book, mine in names.items() if book in values}


@dataclass
class TodaySubject:
    """One of the learner's classes in one of today's roles."""

    component: Component
    locator: Locator
    sources: list[str]
    role: str = field(init=False)

    def __post_init__(self) -> None:
        self.role = self.component.role or ""
        if not (isinstance(self.component.obj, type) and issubclass(self.component.obj, nn.Module)):
            raise TypeError(f"{self.component.name} must be an nn.Module class")
        self.cls: type[nn.Module] = self.component.obj
        self.busy = "runs"  # "constructs" while the learner's constructor runs

    @cached_property
    def runs(self) -> list[Run]:
        book_cls, settings = ROLES[self.role]
        return [self._run(book_cls, setting, n) for n, setting in enumerate(settings)]

    def _run(self, book_cls: type[nn.Module], setting: dict[str, int], n: int) -> Run:
        generator = torch.Generator().manual_seed(n)
        run = Run(setting, torch.rand(2, TOKENS, setting["d_in"], generator=generator))
        self.busy = "constructs"  # for the time limit's message, should it run out here
        try:
            torch.manual_seed(123)
            arguments = _arguments(self.component.parameters, {**_SHARED, **setting})
            run.module = self.cls(**arguments).eval()
        except LEARNER_ERRORS as error:
            run.error, run.stage = error, "constructs"
            return run
        self.busy = "runs"
        try:
            run.y = call(run.module, run.x)
        except LEARNER_ERRORS as error:
            run.error, run.stage = error, "runs"
            return run
        book = book_cls(**setting, **_SHARED).eval()
        run.how, run.unread = load(run.module, book, run.x, run.y)
        if run.unread is None:
            out = call(book, run.x)
            run.book = out if isinstance(out, Tensor) else None
        return run

    def shown(self, run: Run) -> str:
        arguments = _arguments(self.component.parameters, {**_SHARED, **run.setting})
        order = list(inspect.signature(self.cls.__init__).parameters)
        ordered = sorted(arguments.items(), key=lambda item: order.index(item[0]))
        return f"{self.cls.__name__}({', '.join(f'{k}={v!r}' for k, v in ordered)})"

    def error(self, run: Run) -> Message:
        text = f"{type(run.error).__name__}: {run.error}"
        where = self.locator.raised_message(run.error) if run.error is not None else None
        return msg("raised", error=text, where=where) if where else msg("error", error=text)

    def expected(self, run: Run) -> tuple[int, ...]:
        return (*run.x.shape[:-1], run.setting["d_out"])

    def ran(self) -> list[Run]:
        """The runs with an output of the package's shape."""
        return [
            r for r in self.runs if isinstance(r.y, Tensor) and tuple(r.y.shape) == self.expected(r)
        ]


def constructs(s: TodaySubject) -> Result:
    for run in s.runs:
        if run.stage == "constructs":
            return failed(msg("fail_constructs", call=s.shown(run), cause=s.error(run)), s.role)
    return passed("pass_constructs", call=s.shown(s.runs[0]), probes=len(s.runs), note="")


def runs(s: TodaySubject) -> Result:
    for run in s.runs:
        if run.stage == "runs":
            return failed(s.error(run), s.role)
    shapes = ", ".join(dict.fromkeys(str(tuple(r.x.shape)) for r in s.runs))
    return passed("pass_runs", shapes=shapes)


def shape(s: TodaySubject) -> Result:
    for run in s.runs:
        y = run.y
        if not isinstance(y, Tensor) or tuple(y.shape) != s.expected(run):
            seen = str(tuple(y.shape)) if isinstance(y, Tensor) else type(y).__name__
            message = msg("cause_shape", seen=seen, expected=str(s.expected(run)), role=s.role)
            return failed(message, s.role)
    return passed("pass_shape", shape=str(s.expected(s.runs[0])), note="")


def matches_book(s: TodaySubject) -> Result:
    for run in s.runs:
        if run.unread is not None:
            return failed(msg("fail_weights_today", role=s.role, cause=run.unread), s.role)
        y, book = run.y, run.book
        if close(y, book) or not isinstance(y, Tensor) or not isinstance(book, Tensor):
            continue
        differs = ~torch.isclose(y.float(), book.float(), rtol=0, atol=TOLERANCE, equal_nan=True)
        index = tuple(int(i) for i in differs.nonzero()[0])
        assert run.module is not None  # it ran
        never = stages.unused(run.module, run.x, y)
        message = msg(
            "fail_differs_unused" if never else "fail_differs", index=str(index),
            mine=f"{y[index].item():.4f}", book=f"{book[index].item():.4f}",
            names=", ".join(never),
        )  # fmt: skip
        return failed(message, s.role)
    return passed(
        "pass_matches_today", role=s.role, probes=len(s.runs), tolerance=TOLERANCE,
        how=msg(s.runs[0].how),
    )  # fmt: skip


def causal(s: TodaySubject) -> Result:
    ran = s.ran()
    module, y = (ran[0].module, ran[0].y) if ran else (None, None)
    if module is None or not isinstance(y, Tensor):
        return skipped("skip_needs", check="shape")
    ahead = moved(module, ran[0].x, y, TOKENS - 1)[:-1]
    if bool((ahead <= TOLERANCE).all()):
        return passed("pass_causal", n=TOKENS)
    first = int((ahead > TOLERANCE).nonzero()[0])
    message = msg(
        "cause_future_visible", cls=s.cls.__name__, n=TOKENS, token=first + 1,
        by=f"{float(ahead[first]):.3g}",
    )  # fmt: skip
    return failed(message, s.role)


def window(s: TodaySubject) -> Result:
    """Changing the first token reaches tokens 1 to w, and no later one."""
    for run in s.ran():
        w = run.setting["sliding_window_size"]
        assert run.module is not None and isinstance(run.y, Tensor)
        reach = moved(run.module, run.x, run.y, 0)  # (T,)
        later = (reach[w:] > TOLERANCE).nonzero()
        if len(later):
            token = int(later[0]) + w + 1
            return failed(msg("cause_window_wide", cls=s.cls.__name__, w=w, before=w - 1,
                              token=token), s.role)  # fmt: skip
        if reach[w - 1] <= TOLERANCE:
            return failed(msg("cause_window_narrow", cls=s.cls.__name__, w=w), s.role)
    if not s.ran():
        return skipped("skip_needs", check="shape")
    w = s.ran()[0].setting["sliding_window_size"]
    return passed("pass_window", w=w, before=w - 1)


def _tiled(run: Run) -> Tensor | None:
    """The package's grouped-query attention, with the learner's weights, its key-value heads
    tiled ([K1, K2, K1, K2]) instead of repeated in place."""
    setting = run.setting
    book = GroupedQueryAttention(
        setting["d_in"], setting["d_out"], 0.0, setting["num_heads"], setting["num_kv_groups"]
    ).eval()
    assert run.module is not None
    if named_reading(run.module, book) is None:
        return None
    load(run.module, book, run.x, None)
    b, n, _ = run.x.shape
    h, g, d = book.num_heads, book.num_kv_groups, book.head_dim
    with torch.no_grad():
        q = book.W_query(run.x).view(b, n, h, d).transpose(1, 2)  # (b, h, T, d)
        k = book.W_key(run.x).view(b, n, g, d).transpose(1, 2).repeat(1, h // g, 1, 1)
        v = book.W_value(run.x).view(b, n, g, d).transpose(1, 2).repeat(1, h // g, 1, 1)
        hide = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
        scores = (q @ k.mT).masked_fill(hide, -torch.inf) / d**0.5
        context = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(b, n, h * d)
        out: Tensor = book.out_proj(context)
    return out


def kv_groups(s: TodaySubject) -> Result:
    """Grouped as the book groups them: checked by ``matches_book``, or named when tiled."""
    for run in s.runs:
        unread = run.unread or {}
        if unread.get("seen") and unread["name"].startswith(("W_key", "W_value")):
            setting = run.setting
            message = msg(
                "cause_kv_projection", cls=s.cls.__name__, name=unread["name"],
                seen=unread["seen"], expected=unread["expected"], g=setting["num_kv_groups"],
                head_dim=setting["d_out"] // setting["num_heads"],
            )  # fmt: skip
            return failed(message, s.role)
    ran = s.ran()
    if not ran:
        return skipped("skip_needs", check="shape")
    if all(close(r.y, r.book) for r in ran):
        g, h = ran[0].setting["num_kv_groups"], ran[0].setting["num_heads"]
        return passed("pass_kv_groups", g=g, size=h // g)
    if all(close(r.y, _tiled(r)) for r in ran if r.setting["num_kv_groups"] > 1):
        return failed(msg("cause_kv_groups_tiled", cls=s.cls.__name__), s.role)
    return skipped("skip_other_difference")
