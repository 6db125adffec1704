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


@pytest.mark.parametrize(
    "written",
    ["2,360,064", "2.360.064", "2\u00a0360\u00a0064", "2\u202f360\u202f064"],
    ids=["commas", "dots", "no-break spaces", "thin spaces"],
)
def test_a_grouped_integer_reads_as_the_printed_one(written):
    assert ex.prose_numbers(f"That is {written} parameters.") == [written]
    assert ex.grouped(written) == "2360064"
    assert ex.appears_in(written, ["2360064 parameters"])
    assert ex.appears_in(written, ["2,360,064 parameters, head_dim = 64"])
    assert not ex.appears_in(written, ["2360065"])
    assert not ex.appears_in(written, ["2.360064"])  # a decimal is not the integer


def test_one_dot_is_a_decimal_point_and_code_can_state_an_integer():
    # 1.024 is a decimal, as Python prints it; two dot groups or more are a grouped integer.
    assert ex.prose_numbers("1.024, 12,5 and (2, 6, 3), 100,000.5") == ["1.024"]
    assert ex.prose_numbers("a context of 1,024 tokens") == ["1,024"]
    assert not ex.appears_in("1,024", ["768"])
    assert ex.appears_in("1,024", ["768"], ("MultiHeadAttention(768, 768, context_length=1024)",))
    assert not ex.appears_in("1.4950", [], ("x = 1.4950",))  # decimals: printed ones only
