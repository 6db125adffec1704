"""Where in the learner's file something happened: "cell N, line L", in lines of their file.

Each cell runs as the code object ``"<cell N>"``; the worker and the checks both turn its
frames into the learner's terms here.
"""

from __future__ import annotations

import traceback


class Locator:
    """Maps ``"<cell N>"`` code objects and their line numbers to the learner's file."""

    def __init__(self, first_lines: dict[str, int]) -> None:
        self.first_lines = first_lines  # "<cell N>" -> the cell's first line in its file

    def line(self, filename: str, lineno: int) -> int:
        """The line of the learner's file for line ``lineno`` of cell ``filename``."""
        return lineno + self.first_lines.get(filename, 1) - 1

    def frame(self, error: BaseException) -> traceback.FrameSummary | None:
        """The deepest frame of ``error``'s traceback that lies in one of the cells."""
        frames = traceback.extract_tb(error.__traceback__)
        return next((f for f in reversed(frames) if f.filename in self.first_lines), None)

    def where_message(self, filename: str, lineno: int) -> dict:
        """`where` as a message, to be put in the learner's language."""
        number = int(filename.removeprefix("<cell ").removesuffix(">"))
        return {"key": "where", "cell": number, "line": self.line(filename, lineno)}

    def raised_message(self, error: BaseException) -> dict | None:
        """`raised` as a message, to be put in the learner's language."""
        frame = self.frame(error)
        if frame is None:
            return None
        where = self.where_message(frame.filename, frame.lineno or 0)
        return {**where, "key": "raised_at", "code": repr((frame.line or "").strip())}
