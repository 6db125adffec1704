"""The report: one block per component with a mark per check, or one JSON object.

The marks are words (``pass``, ``FAIL``, ``skip``), readable without colour; a terminal that
supports colour gets them in green, red and grey too (not when ``NO_COLOR`` is set).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import textwrap

_COLOURS = {"pass": "32", "fail": "31", "skip": "90", "ok": "32", "error": "31", "timeout": "31"}
_WORDS = {"pass": "pass", "fail": "FAIL", "skip": "skip"}


def terminal_width(stream=sys.stdout) -> int:
    """The terminal's width, or 100 columns when the report goes to a file or a page."""
    return shutil.get_terminal_size((100, 24)).columns if stream.isatty() else 100


def use_colour(stream=sys.stdout) -> bool:
    """Colour only on a terminal that takes it, and never with NO_COLOR set."""
    return stream.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


def _paint(text: str, status: str, colour: bool) -> str:
    return f"\033[{_COLOURS[status]}m{text}\033[0m" if colour and status in _COLOURS else text


def as_dict(file: str, cells: list[dict], components: list[dict]) -> dict:
    """The report as the JSON object that ``--json`` prints."""
    return {
        "file": file,
        "cells": [
            {key: cell[key] for key in ("cell", "status", "error") if key in cell} for cell in cells
        ],
        "components": [
            {
                "name": c["name"],
                "role": c["role"],
                "checks": c["checks"],
                **({"reason": c["reason"]} if c.get("reason") else {}),
            }
            for c in components
        ],
    }


def as_json(reports: list[dict]) -> str:
    return json.dumps(reports[0] if len(reports) == 1 else reports, ensure_ascii=False, indent=2)


def as_text(report: dict, cells: list[dict], colour: bool = False, width: int = 100) -> str:
    """The human report of one file, its long messages wrapped at ``width`` columns."""
    lines = [report["file"]]
    for cell in cells:
        for skipped in cell.get("skipped_lines", []):
            lines.append(f"  cell {cell['cell']}: left out {skipped!r} (IPython, not Python)")
        if cell["status"] != "ok":
            status = _paint(cell["status"], cell["status"], colour)
            lines.append(
                f"  cell {cell['cell']}: {status}"
                + (f": {cell['error']}" if cell.get("error") else "")
            )
    if report.get("unfinished"):
        lines.append(f"  {_paint('FAIL', 'fail', colour)}  {report['unfinished']}")
    elif not report["components"]:
        lines.append("  no chapter-3 component found: no attention class or function was defined")
    for component in report["components"]:
        role = component["role"]
        title = f"{component['name']}" + (
            f" (as {role})" if role and role != component["name"] else ""
        )
        if role is None:
            lines.append(f"\n{title}: not recognised: {component.get('reason', '')}")
            continue
        lines.append(f"\n{title}")
        for check in component["checks"]:
            if check["status"] == "skip" and check["message"].startswith("does not apply"):
                continue
            mark = _paint(f"{_WORDS[check['status']]:<4}", check["status"], colour)
            head = f"  {mark}  {check['check']:<12}  "
            indent = " " * (len(head) - len(mark) + 4)  # under the message, colour or not
            wrapped = textwrap.wrap(
                check["message"], width - len(indent), break_long_words=False,
                break_on_hyphens=False,
            ) or [""]  # fmt: skip
            lines.append((head + wrapped[0]).rstrip())
            lines += [indent + line for line in wrapped[1:]]
    return "\n".join(lines)


def exit_status(reports: list[dict]) -> int:
    """0 when every recognised component passes; 1 when a check fails, when the checks did
    not finish, or when nothing could be checked because cells failed."""
    for report in reports:
        checks = [k for c in report["components"] for k in c["checks"]]
        cells_failed = any(cell["status"] in ("error", "timeout") for cell in report["cells"])
        if (
            any(check["status"] == "fail" for check in checks)
            or report.get("unfinished")
            or (not report["components"] and cells_failed)
        ):
            return 1
    return 0
