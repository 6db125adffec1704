"""Assertions shared by the tests (importable because pytest puts tests/ on sys.path)."""

from __future__ import annotations

import torch


def assert_printed(actual: torch.Tensor, expected: list | float, decimals: int = 4) -> None:
    """Assert ``actual`` equals a tensor printed to ``decimals`` places.

    A printed value stands for everything that rounds to it, so the tolerance is half a
    unit of the last printed digit, plus 1e-6 for float32 rounding at the boundary.
    """
    expected_t = torch.tensor(expected, dtype=torch.float64)
    actual_t = actual.detach().to(torch.float64)
    assert actual_t.shape == expected_t.shape, f"shape {actual_t.shape} != {expected_t.shape}"
    tol = 0.5 * 10.0**-decimals + 1e-6
    finite = torch.isfinite(expected_t)
    assert torch.equal(finite, torch.isfinite(actual_t)), f"non-finite entries differ: {actual}"
    assert torch.equal(actual_t[~finite], expected_t[~finite])
    diff = (actual_t[finite] - expected_t[finite]).abs()
    assert diff.numel() == 0 or diff.max() <= tol, (
        f"max difference {diff.max():.2e} > {tol:.2e}\nactual:\n{actual}\nexpected:\n{expected_t}"
    )
