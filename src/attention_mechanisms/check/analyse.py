"""What the worker does after the cells ran: find the components and check each one."""

from __future__ import annotations

import inspect
from collections.abc import Callable

from .checks import CHECKS, run_checks
from .class_checks import ClassSubject
from .components import Component, find_components, source_of
from .function_checks import FunctionSubject
from .locate import Locator
from .messages import msg
from .result import Result
from .todays import ROLES as TODAY_ROLES
from .todays import TodaySubject

# What was running when a component's time ran out: the check that fails, and its message.
_STUCK = {"constructs": "fail_stuck_constructs", "runs": "fail_stuck"}


def _unfinished(key: str, check: str = "runs", **params: object) -> list[dict]:
    """Every check skipped, and ``check`` failed (stuck) or skipped with ``key``'s message."""
    results = [Result("skip", msg("skip_unfinished"), check=name) for name in CHECKS]
    stuck = key in _STUCK.values()
    results[CHECKS.index(check)] = Result(
        "fail" if stuck else "skip", msg(key, **params), check=check
    )
    return [result.as_dict() for result in results]


def _subject(
    component: Component, locator: Locator, sources: list[str]
) -> ClassSubject | FunctionSubject | TodaySubject:
    """What checks ``component``: a function, one of chapter 3's classes or one of today's."""
    if inspect.isfunction(component.obj):
        return FunctionSubject(component, locator, sources)
    if component.role in TODAY_ROLES:
        return TodaySubject(component, locator, sources)
    return ClassSubject(component, locator, sources)


def analyse(
    namespace: dict,
    first_lines: dict[str, int],
    limited: Callable = lambda run: run(),
    timeout: type[BaseException] = TimeoutError,
) -> list[dict]:
    """One report entry per component: name, role and the results of its checks.

    Args:
        namespace: What the learner's cells defined.
        first_lines: Each cell's file name (``"<cell N>"``) and first line in the file.
        limited: Runs a component's checks under a time limit.
        timeout: What ``limited`` raises when the time runs out.
    """
    locator = Locator(first_lines)
    components = find_components(namespace)
    sources = [source_of(component.obj) for component in components]
    entries = []
    for component in components:
        entry: dict = {"name": component.name, "role": component.role}
        if component.role is None:
            entries.append({**entry, "checks": [], "reason": component.reason})
            continue
        subject = _subject(component, locator, sources)
        if isinstance(subject, FunctionSubject) and not subject.binds():
            continue  # named like a helper of the book's, but not called like one: the learner's
        try:
            results = limited(lambda subject=subject: run_checks(subject))
            entry["checks"] = [result.as_dict() for result in results]
        except timeout:
            busy = getattr(subject, "busy", "runs")  # what the learner's code was doing
            entry["checks"] = _unfinished(_STUCK[busy], busy)
        except Exception as error:  # a bug of the checker's, not the learner's: say so
            entry["checks"] = _unfinished(
                "skip_checker_failed", error=f"{type(error).__name__}: {error}"
            )
        entries.append(entry)
    return entries
