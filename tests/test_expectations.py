"""book.expectations: how stated outputs are compared with what ran."""

from __future__ import annotations

import pytest

from book import expectations as ex


@pytest.mark.parametrize(
    ("expected", "actual"),
    [
        ("tensor([0.1385, 0.2379])", "tensor([0.1385, 0.2379])"),
        ("tensor(1.0000)", "tensor(1.)"),  # torch drops zeros it does not need
        ("0.1455", "0.14554"),  # within half a unit of the 4th decimal
        ("3.7835e-44", "3.78354e-44"),
        ("torch.Size([2, 6, 3])", "torch.Size([2, 6, 3])"),
        ("grad_fn=<MmBackward0>", "grad_fn=<MmBackward0>  "),  # trailing spaces
        ("tensor([nan, 0.])", "tensor([nan, 0.])"),
    ],
)
def test_matches(expected, actual):
    assert ex.compare(expected, actual) is None


@pytest.mark.parametrize(
    ("expected", "actual", "detail"),
    [
        ("tensor([0.1385])", "tensor([0.1386])", "expected 0.1385, got 0.1386"),
        ("0.1455", "0.14556", "expected 0.1455, got 0.14556"),
        ("torch.Size([2, 6, 3])", "torch.Size([2, 6, 4])", "expected 3, got 4"),
        ("2,360,064 parameters", "2,360,065 parameters", "expected 064, got 065"),
        ("torch.float32", "torch.float64", "'torch.float32'"),
        ("grad_fn=<MmBackward0>", "grad_fn=<AddBackward0>", "first difference"),
        ("a\nb", "a", "output line 2: expected 'b', got '<end of output>'"),
        ("True", "False", "expected 'True', got 'False'"),
    ],
)
def test_mismatches_name_the_first_difference(expected, actual, detail):
    mismatch = ex.compare(expected, actual)
    assert mismatch is not None
    assert detail in mismatch.describe()


def test_prose_numbers_need_three_decimals_and_match_an_output():
    assert ex.prose_numbers("scores 1.4950 and 1.4754, about 0.23, $x_{0.125}$") == [
        "1.4950",
        "1.4754",
    ]
    outputs = ["tensor([0.9544, 1.4950])"]
    assert ex.appears_in("1.4950", outputs)
    assert ex.appears_in("1.495", outputs)
    assert not ex.appears_in("1.4951", outputs)


def test_output_text_joins_streams_and_results():
    cell = {
        "outputs": [
            {"output_type": "stream", "name": "stdout", "text": "a  \n"},
            {"output_type": "execute_result", "data": {"text/plain": "42"}},
            {"output_type": "error", "ename": "ValueError", "evalue": "x", "traceback": []},
        ]
    }
    assert ex.output_text(cell) == "a\n42"
