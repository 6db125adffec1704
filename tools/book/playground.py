"""The playground page's numbers, from the package.

The page (``docs/en/chapter-3/playground.md``) computes attention in the browser with one
small JavaScript module, ``docs/overrides/assets/javascripts/attention.js``. Everything it
starts from comes from the package, here: the book's six tokens, and for each stage the
weights that the book's seed for that section gives its class (`page_data`). `reference`
is what the package computes for a stage on any input: the context vectors from the
classes, the weights from the package's ``scaled_dot_product_attention``, the scores as the
book computes them (``queries @ keys.T``, hidden with ``causal_mask``).
`book.playground_check` holds the JavaScript to it.
"""

from __future__ import annotations

import copy
import struct
from functools import cache

import torch
from torch import Tensor

from attention_mechanisms import (
    CausalAttention,
    MultiHeadAttentionWrapper,
    SelfAttention_v2,
    attention_scores,
    attention_weights,
    causal_mask,
    context_vectors,
    scaled_dot_product_attention,
)
from attention_mechanisms.check.probes import INPUTS
from book import paths

MODULE = paths.DOCS / "overrides" / "assets" / "javascripts" / "attention.js"

TOKENS = ["Your", "journey", "starts", "with", "one", "step"]  # the book's sentence

# Values for tokens 7 and 8, when the reader adds them (the book has six).
EXTRA = [[0.30, 0.70, 0.20], [0.60, 0.10, 0.40]]

MAX_TOKENS = 8

# The largest embedding value the page takes: within it, what the page shows differs from
# the package's float32 by float32 rounding (`book.playground_check.verify`). The book's
# values are within 1.
LIMIT = 5

STAGES = ("3.3", "3.4", "3.5", "3.6")

MATRICES = ("scores", "weights", "context")

# What each head also shows where a stage projects the tokens (3.4 to 3.6): the queries,
# keys and values that its scores and context vectors come from.
PROJECTED = ("queries", "keys", "values")

_PROJECTIONS = ("W_query", "W_key", "W_value")


@cache
def modules() -> dict[str, list[torch.nn.Module]]:
    """The classes of each stage, with the weights that the book's seed gives them.

    3.4 and 3.5 start from ``SelfAttention_v2`` after ``torch.manual_seed(789)`` (3.5 copies
    its weights into a ``CausalAttention``), 3.6 from ``MultiHeadAttentionWrapper`` after
    ``torch.manual_seed(123)``. A context length of `MAX_TOKENS` draws the same weights as
    the book's 6: the mask is not random.
    """
    torch.manual_seed(789)
    sa_v2 = SelfAttention_v2(d_in=3, d_out=2)
    causal_v2 = CausalAttention(3, 2, MAX_TOKENS, dropout=0.0)
    causal_v2.load_state_dict({**sa_v2.state_dict(), "mask": causal_v2.mask})
    torch.manual_seed(123)
    mha = MultiHeadAttentionWrapper(3, 2, MAX_TOKENS, dropout=0.0, num_heads=2)
    return {"3.3": [], "3.4": [sa_v2], "3.5": [causal_v2], "3.6": list(mha.heads)}


def _shortest(value: float) -> float:
    """The shortest decimal that is the same float32 as ``value``: 0.43, not 0.4300000072."""
    for digits in range(1, 10):
        candidate = float(f"{value:.{digits}g}")
        if struct.unpack("f", struct.pack("f", candidate))[0] == value:
            return candidate
    return value


def _weights(module: torch.nn.Module, exact: bool) -> dict[str, list[list[float]]]:
    """A head's weights as the book writes them, (d_in, d_out): ``nn.Linear``'s, transposed."""
    rows = {name: getattr(module, name).weight.T.tolist() for name in _PROJECTIONS}
    if exact:
        return rows
    return {name: [[_shortest(v) for v in row] for row in m] for name, m in rows.items()}


def heads(stage: str, exact: bool = False) -> list[dict[str, list[list[float]]]] | None:
    """What the JavaScript module takes for a stage's heads (None for 3.3, which has none)."""
    return [_weights(module, exact) for module in modules()[stage]] or None


def page_data() -> dict:
    """Everything the page starts from, for its JSON: tokens, embeddings, each stage's heads."""
    return {
        "tokens": TOKENS,
        "inputs": [[_shortest(v) for v in row] for row in INPUTS.tolist()],
        "extra": EXTRA,
        "max_tokens": MAX_TOKENS,
        "limit": LIMIT,
        "stages": {stage: heads(stage) for stage in STAGES},
    }


def matrices(stage: str) -> tuple[str, ...]:
    """The matrices that each head of ``stage`` shows."""
    return MATRICES if stage == "3.3" else PROJECTED + MATRICES


def _head(module: torch.nn.Module, x: Tensor, hide: bool) -> dict[str, Tensor]:
    """The queries, keys and values of one head on ``x``, its scores, its weights and the
    class's own context vectors."""
    queries, keys, values = (getattr(module, name)(x) for name in _PROJECTIONS)
    scores = queries @ keys.T  # (T, T), unscaled, as the book prints them
    if hide:
        scores = scores.masked_fill(causal_mask(len(x)), -torch.inf)
    _, weights = scaled_dot_product_attention(queries, keys, values, causal=hide)
    projected = {"queries": queries, "keys": keys, "values": values}
    return {**projected, "scores": scores, "weights": weights, "context": module(x)}


def reference(stage: str, inputs: list[list[float]], dtype: torch.dtype) -> dict:
    """What the package computes for ``stage`` on ``inputs``: the shape `attend` returns."""
    x = torch.tensor(inputs, dtype=dtype)
    with torch.no_grad():
        if stage == "3.3":
            scores = attention_scores(x)
            weights = attention_weights(scores)
            found = [{"scores": scores, "weights": weights, "context": context_vectors(weights, x)}]
        else:
            found = [
                _head(copy.deepcopy(module).to(dtype), x, causal(stage))
                for module in modules()[stage]
            ]
    return {"heads": found, "context": torch.cat([h["context"] for h in found], dim=-1)}


def package_results(cases: list[dict]) -> list[dict]:
    """The package's float32 results for each case (``stage``, ``inputs``), as JSON-ready
    lists, ``-inf`` as the string ``"-inf"``: for tests that cannot import torch. A case of
    the stage ``trained`` gives a ``sequence`` instead (`book.trained.package_result`)."""

    def plain(tensor: Tensor) -> list[list[float | str]]:
        return [
            [format_value(v) if v == float("-inf") else v for v in row] for row in tensor.tolist()
        ]

    from book import trained  # the trained stage's model: cached, or trained now

    results = []
    for case in cases:
        if case["stage"] == "trained":
            results.append(trained.package_result(case["sequence"]))
            continue
        found = reference(case["stage"], case["inputs"], torch.float32)
        results.append(
            {
                "heads": [
                    {m: plain(head[m]) for m in matrices(case["stage"])} for head in found["heads"]
                ],
                "context": plain(found["context"]),
            }
        )
    return results


def format_value(value: float) -> str:
    """A value as the page and torch show it: four decimals, ``-inf`` for a hidden score."""
    return "-inf" if value == float("-inf") else f"{value:.4f}"


def causal(stage: str) -> bool:
    """Whether a stage hides each token's future (3.5 and 3.6)."""
    return stage in ("3.5", "3.6")
