"""Shared set-up: one torch thread; the six-token sentence, alone and as a batch of two; and
the lines a test leaves for the end of the run (`say`), shown after the results."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

# Where a test leaves a line to show after the results: test processes (pytest-xdist's
# workers) cannot print to the terminal themselves.
SAID = Path(__file__).resolve().parents[1] / "build" / "tests-said"


def say(name: str, line: str) -> None:
    """Show ``line`` after this run's results."""
    SAID.mkdir(parents=True, exist_ok=True)
    (SAID / name).write_text(line + "\n", encoding="utf-8")


def pytest_sessionstart(session: pytest.Session) -> None:
    if not os.environ.get("PYTEST_XDIST_WORKER"):  # once, in the process that reports
        for old in SAID.glob("*") if SAID.is_dir() else []:
            old.unlink()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slow tests first (in their order): spread over the workers from the start, they do
    not leave one worker running alone at the end of the run."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for said in sorted(SAID.glob("*")) if SAID.is_dir() else []:
        terminalreporter.write_line(said.read_text(encoding="utf-8").rstrip())


# The tests' tensors are tiny: one thread does each op sooner than a pool that must be woken,
# and, while other processes hold the cores, far sooner (half the time on a busy 2-core machine).
torch.set_num_threads(1)

# "Your journey starts with one step", one 3-dimensional embedding per token.
SENTENCE = [
    [0.43, 0.15, 0.89],  # Your
    [0.55, 0.87, 0.66],  # journey
    [0.57, 0.85, 0.64],  # starts
    [0.22, 0.58, 0.33],  # with
    [0.77, 0.25, 0.10],  # one
    [0.05, 0.80, 0.55],  # step
]


@pytest.fixture
def inputs() -> torch.Tensor:
    return torch.tensor(SENTENCE)


@pytest.fixture
def batch(inputs: torch.Tensor) -> torch.Tensor:
    return torch.stack((inputs, inputs), dim=0)  # (2, 6, 3)
