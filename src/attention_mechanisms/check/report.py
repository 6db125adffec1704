"""The report: one block per component with a mark per check, one JSON object, or a table.

Everything the learner reads is rendered here, in the language asked for (`messages`); the
JSON keys, the check names and the roles stay English. The marks are words (``pass``,
``FAIL``, ``skip``), readable without colour; a terminal that supports colour gets them in
green, red and grey too (not when ``NO_COLOR`` is set).
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import sys
import textwrap
from typing import TextIO

from .messages import link, render, word

_COLOURS = {"pass": "32", "fail": "31", "skip": "90", "ok": "32", "error": "31", "timeout": "31"}
_COLOURS["memory"] = "31"


def terminal_width(stream: TextIO = sys.stdout) -> int:
    """The terminal's width, or 100 columns when the report goes to a file or a page."""
    return shutil.get_terminal_size((100, 24)).columns if stream.isatty() else 100


def use_colour(stream: TextIO = sys.stdout) -> bool:
    """Colour only on a terminal that takes it, and never with NO_COLOR set."""
    return stream.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


def _paint(text: str, status: str, colour: bool) -> str:
    return f"\033[{_COLOURS[status]}m{text}\033[0m" if colour and status in _COLOURS else text


def _check(result: dict, language: str) -> dict:
    message = render(result["message"], language)
    if result.get("topic") and result["status"] == "fail":
        message += word("see", language, url=link(result["topic"], language))
    return {"check": result["check"], "status": result["status"], "message": message}


def _cell(cell: dict, language: str) -> dict:
    """A cell's entry, its error with where it was raised and any hint, in ``language``."""
    entry = {key: cell[key] for key in ("cell", "status") if key in cell}
    if "error" in cell:
        entry["error"] = render(cell["error"], language)
    if cell.get("where"):
        entry["error"] = render({"key": "raised", "error": cell["error"], "where": cell["where"]},
                                language)  # fmt: skip
    if cell.get("hint"):
        entry["error"] += render(cell["hint"], language)
    return entry


def as_dict(
    file: str, cells: list[dict], components: list[dict] | None, language: str = "en"
) -> dict:
    """The report as the JSON object that ``--json`` prints, its messages in ``language``."""
    report = {
        "file": file,
        "cells": [_cell(cell, language) for cell in cells],
        "components": [
            {
                "name": c["name"],
                "role": c["role"],
                "checks": [_check(result, language) for result in c["checks"]],
                **({"reason": render(c["reason"], language)} if c.get("reason") else {}),
            }
            for c in components or []
        ],
    }
    if components is None:
        report["unfinished"] = word("unfinished", language)
    return report


def as_json(reports: list[dict]) -> str:
    return json.dumps(reports[0] if len(reports) == 1 else reports, ensure_ascii=False, indent=2)


def _cell_lines(cells: list[dict], language: str, colour: bool) -> list[str]:
    lines = []
    for raw in cells:
        cell = {**raw, **_cell(raw, language)}
        for skipped in cell.get("skipped_lines", []):
            lines.append("  " + word("left_out", language, cell=cell["cell"], line=skipped))
        if cell["status"] != "ok":
            status = _paint(word(cell["status"], language), cell["status"], colour)
            name = "cell_error" if cell.get("error") else "cell"
            error = cell.get("error", "")
            lines.append("  " + word(name, language, cell=cell["cell"], status=status, error=error))
    return lines


def _wrap(text: str, width: int, language: str) -> list[str]:
    """The message in lines of ``width`` columns, long words (links) kept whole; Chinese,
    written without spaces, is left to the terminal to wrap."""
    if language == "zh":
        return [text]
    return textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False) or [""]


def _component_lines(component: dict, language: str, colour: bool, width: int) -> list[str]:
    role, name = component["role"], component["name"]
    if role is None:
        reason = component.get("reason", "")
        return ["", word("not_recognised", language, name=name, reason=reason)]
    title = name if role == name else word("as_role", language, name=name, role=role)
    does_not_apply = render({"key": "skip_does_not_apply", "role": role}, language)
    lines = ["", title]
    for check in component["checks"]:
        if check["status"] == "skip" and check["message"] == does_not_apply:
            continue
        mark = word(check["status"], language)
        head = f"  {_paint(f'{mark:<4}', check['status'], colour)}  {check['check']:<12}  "
        indent = " " * (2 + max(4, len(mark)) + 2 + 12 + 2)  # under the message, colour or not
        wrapped = _wrap(check["message"], width - len(indent), language)
        lines.append((head + wrapped[0]).rstrip())
        lines += [indent + line for line in wrapped[1:]]
    return lines


def as_text(
    report: dict, cells: list[dict], colour: bool = False, width: int = 100, language: str = "en"
) -> str:
    """The human report of one file (rendered by `as_dict` in ``language``), its long
    messages wrapped at ``width`` columns."""
    lines = [report["file"], *_cell_lines(cells, language, colour)]
    if report.get("unfinished"):
        lines.append(f"  {_paint(word('fail', language), 'fail', colour)}  {report['unfinished']}")
    elif not report["components"]:
        lines.append("  " + word("nothing_found", language))
    for component in report["components"]:
        lines += _component_lines(component, language, colour, width)
    return "\n".join(lines)


def failed(report: dict) -> bool:
    """Whether a check failed, the checks did not finish, or nothing could be checked
    because cells failed."""
    checks = [k for c in report["components"] for k in c["checks"]]
    cells_failed = any(cell["status"] in ("error", "timeout", "memory") for cell in report["cells"])
    return (
        any(check["status"] == "fail" for check in checks)
        or bool(report.get("unfinished"))
        or (not report["components"] and cells_failed)
    )


def exit_status(reports: list[dict]) -> int:
    """0 when every recognised component passes; 1 when `failed` holds for a report."""
    return 1 if any(failed(report) for report in reports) else 0


def summary_rows(reports: list[dict]) -> list[dict[str, str]]:
    """One row per notebook: its components, the checks they failed, the cells that did."""
    rows = []
    for report in reports:
        found = [c for c in report["components"] if c["role"] is not None]
        failures = [
            f"{c['name']}.{k['check']}" for c in found for k in c["checks"] if k["status"] == "fail"
        ]
        cells = [str(cell["cell"]) for cell in report["cells"] if cell["status"] != "ok"]
        rows.append(
            {
                "file": report["file"],
                "components": ", ".join(c["name"] for c in found),
                "failed": ", ".join(failures),
                "cells": ", ".join(cells),
            }
        )
    return rows


def as_summary(reports: list[dict], form: str, language: str = "en") -> str:
    """The summary table: ``md`` (headings in ``language``) or ``csv`` (English headings)."""
    rows = summary_rows(reports)
    if form == "csv":
        out = io.StringIO()
        writer = csv.DictWriter(out, ["file", "components", "failed", "cells"], lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        return out.getvalue().rstrip("\n")
    names = ("summary_file", "summary_components", "summary_failed", "summary_cells")
    none = word("summary_none", language)
    lines = ["| " + " | ".join(word(n, language) for n in names) + " |", "|---|---|---|---|"]
    for row in rows:
        cells = [
            row["file"],
            row["components"] or none,
            row["failed"] or none,
            row["cells"] or none,
        ]
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(lines)
