"""What the worker does after the cells ran: find the components and check each one."""

from __future__ import annotations

import inspect

from .checks import CHECKS, Locator, Result, check_class, check_function
from .components import find_components, source_of


def analyse(namespace: dict, first_lines: dict[str, int]) -> list[dict]:
    """One report entry per component: name, role and the results of its checks."""
    locator = Locator(first_lines)
    components = find_components(namespace)
    sources = [source_of(component.obj) for component in components]
    entries = []
    for component in components:
        if component.role is None:
            checks = []
            entry = {
                "name": component.name,
                "role": None,
                "checks": checks,
                "reason": component.reason,
            }
        else:
            run = check_function if inspect.isfunction(component.obj) else check_class
            try:
                results = run(component, locator, sources)
            except Exception as error:  # a bug of the checker's, not the learner's: say so
                message = f"the checker failed on it ({type(error).__name__}: {error})"
                results = [Result(check, "skip", message) for check in CHECKS]
            checks = [{"check": r.check, "status": r.status, "message": r.message} for r in results]
            entry = {"name": component.name, "role": component.role, "checks": checks}
        entries.append(entry)
    return entries
