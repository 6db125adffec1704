"""Shared set-up: one torch thread; the six-token sentence, alone and as a batch of two."""

from __future__ import annotations

import pytest
import torch

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
