"""Section 3.3: attention without trainable weights, against the transcripts' numbers."""

from __future__ import annotations

import pytest
import torch
from helpers import assert_printed

from attention_mechanisms import (
    attention_scores,
    attention_scores_loop,
    attention_weights,
    context_vector,
    context_vectors,
    normalize_by_sum,
    query_scores,
    query_scores_loop,
    simplified_self_attention,
    softmax_naive,
    softmax_stable,
)

SCORES = [
    [0.9995, 0.9544, 0.9422, 0.4753, 0.4576, 0.6310],
    [0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865],
    [0.9422, 1.4754, 1.4570, 0.8296, 0.7154, 1.0605],
    [0.4753, 0.8434, 0.8296, 0.4937, 0.3474, 0.6565],
    [0.4576, 0.7070, 0.7154, 0.3474, 0.6654, 0.2935],
    [0.6310, 1.0865, 1.0605, 0.6565, 0.2935, 0.9450],
]
WEIGHTS = [
    [0.2098, 0.2006, 0.1981, 0.1242, 0.1220, 0.1452],
    [0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581],
    [0.1390, 0.2369, 0.2326, 0.1242, 0.1108, 0.1565],
    [0.1435, 0.2074, 0.2046, 0.1462, 0.1263, 0.1720],
    [0.1526, 0.1958, 0.1975, 0.1367, 0.1879, 0.1295],
    [0.1385, 0.2184, 0.2128, 0.1420, 0.0988, 0.1896],
]
CONTEXT = [
    [0.4421, 0.5931, 0.5790],
    [0.4419, 0.6515, 0.5683],
    [0.4431, 0.6496, 0.5671],
    [0.4304, 0.6298, 0.5510],
    [0.4671, 0.5910, 0.5266],
    [0.4177, 0.6503, 0.5645],
]


@pytest.mark.parametrize("scores_of", [query_scores_loop, query_scores])
def test_scores_of_journey(scores_of, inputs):
    scores = scores_of(inputs[1], inputs)
    assert_printed(scores, SCORES[1])
    assert_printed(scores.sum(), 6.5617)


def test_normalize_by_sum(inputs):
    weights = normalize_by_sum(query_scores(inputs[1], inputs))
    assert_printed(weights, [0.1455, 0.2278, 0.2249, 0.1285, 0.1077, 0.1656])
    assert_printed(weights.sum(), 1.0)


@pytest.mark.parametrize("softmax", [softmax_naive, softmax_stable, attention_weights])
def test_softmax_of_journey(softmax, inputs):
    weights = softmax(query_scores(inputs[1], inputs))
    assert_printed(weights, WEIGHTS[1])
    torch.testing.assert_close(weights, torch.softmax(query_scores(inputs[1], inputs), dim=0))


def test_context_vector_of_journey(inputs):
    weights = attention_weights(query_scores(inputs[1], inputs))
    assert_printed(context_vector(weights, inputs), CONTEXT[1])


@pytest.mark.parametrize("scores_of", [attention_scores_loop, attention_scores])
def test_all_scores(scores_of, inputs):
    assert_printed(scores_of(inputs), SCORES)


def test_loop_and_matrix_forms_agree(inputs):
    torch.testing.assert_close(attention_scores_loop(inputs), attention_scores(inputs))
    weights = attention_weights(attention_scores(inputs))
    loop = torch.stack([context_vector(row, inputs) for row in weights])
    torch.testing.assert_close(loop, context_vectors(weights, inputs))


def test_all_weights_and_context(inputs):
    weights = attention_weights(attention_scores(inputs))
    assert_printed(weights, WEIGHTS)
    assert_printed(context_vectors(weights, inputs), CONTEXT)
    assert_printed(simplified_self_attention(inputs), CONTEXT)


def test_naive_softmax_overflows_where_stable_does_not():
    big = torch.tensor([100.0, 0.0])  # e**100 > float32's largest value, about 3.4e38
    assert torch.isnan(softmax_naive(big)[0])
    torch.testing.assert_close(softmax_stable(big), torch.tensor([1.0, 0.0]))
    # Just inside the float32 range the naive form is still right.
    small = torch.tensor([88.0, 0.0])
    torch.testing.assert_close(softmax_naive(small), softmax_stable(small))


def test_stable_softmax_matches_torch_along_any_dim():
    x = torch.randn(4, 5, 6, generator=torch.Generator().manual_seed(0)) * 50
    for dim in (0, 1, -1):
        torch.testing.assert_close(softmax_stable(x, dim=dim), torch.softmax(x, dim=dim))


def test_bad_inputs_are_named(inputs):
    with pytest.raises(ValueError, match=r"inputs must be 2-D \(num_tokens, d\); got 3-D"):
        attention_scores(inputs.unsqueeze(0))
    with pytest.raises(TypeError, match=r"inputs must have a floating-point dtype.*torch.int64"):
        attention_scores(torch.ones(3, 2, dtype=torch.long))
    with pytest.raises(ValueError, match=r"query must be 1-D of size d=3.*got shape \(2,\)"):
        query_scores(torch.ones(2), inputs)
    with pytest.raises(ValueError, match=r"weights must have shape \(6,\).*got shape \(5,\)"):
        context_vector(torch.ones(5), inputs)
    with pytest.raises(ValueError, match=r"weights must have shape \(6, 6\).*got shape \(6, 5\)"):
        context_vectors(torch.ones(6, 5), inputs)
    with pytest.raises(TypeError, match=r"x must be a torch.Tensor; got list"):
        softmax_naive([1.0, 2.0])
