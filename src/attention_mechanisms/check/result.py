"""What one check says about one component: pass, fail or skip, and why."""

from __future__ import annotations

from dataclasses import dataclass

from .messages import Message, msg


@dataclass
class Result:
    """A check's status and its message; ``topic`` names the site's section to link."""

    status: str  # "pass", "fail" or "skip"
    message: Message
    topic: str | None = None
    check: str = ""  # filled in by the loop that runs the checks

    def as_dict(self) -> dict:
        return {"check": self.check, "status": self.status, "message": self.message,
                "topic": self.topic}  # fmt: skip


def passed(key: str, **params: object) -> Result:
    return Result("pass", msg(key, **params))


def failed(message: Message, topic: str | None = None) -> Result:
    return Result("fail", message, topic)


def skipped(key: str, **params: object) -> Result:
    return Result("skip", msg(key, **params))
