"""What the worker does after the cells ran: find the components and check each one."""

from __future__ import annotations

import inspect
from collections.abc import Callable

from .checks import CHECKS, Result, check_class, check_function
from .components import find_components, source_of
from .locate import Locator


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
        entry = {"name": component.name, "role": component.role}
        if component.role is None:
            entries.append({**entry, "checks": [], "reason": component.reason})
            continue
        run = check_function if inspect.isfunction(component.obj) else check_class
        try:
            results = limited(lambda run=run, component=component: run(component, locator, sources))
        except timeout:
            stuck = "still running after its time limit: does forward loop forever?"
            results = [Result("runs", "fail", stuck)] + [
                Result(check, "skip", "not checked: it does not finish") for check in CHECKS[2:]
            ]
            results.insert(0, Result("constructs", "skip", "not checked: it does not finish"))
        except Exception as error:  # a bug of the checker's, not the learner's: say so
            message = (
                f"the checker failed on it ({type(error).__name__}: {error}); please report it"
            )
            results = [Result(check, "skip", message) for check in CHECKS]
        entry["checks"] = [
            {"check": r.check, "status": r.status, "message": r.message} for r in results
        ]
        entries.append(entry)
    return entries
