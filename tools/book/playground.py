"""The playground page's numbers, from the package.

The page (``docs/en/chapter-3/playground.md``) computes attention in the browser with one
small JavaScript module, `MODULE`. Everything it starts from comes from the package, here:
the book's six tokens, and for each stage the weights that the book's seed for that section
gives its class (`page_data`). `reference` is what the package computes for a stage on any
input: the context vectors from the classes, the weights from the package's
``scaled_dot_product_attention``, the scores as the book computes them (``queries @ keys.T``,
hidden with ``causal_mask``). `book.playground_check` holds the JavaScript to it.

A page asks for the playground with one line of its own, `MARKER`; the hook puts `widget`
in its place: a JSON script with what the page starts from and the interface's words
(``extra.playground`` in the language's config); the default example at every stage as
static tables, what a reader without JavaScript sees (``playground.js`` replaces them with
the live widget); the trained stage's manifest (`book.trained.manifest`), whose weights the
page downloads from ``assets/``; and the scripts and the stylesheet. `book.playground_check`
holds the JavaScript to the package; ``python -m book playground-cases`` answers the browser
tests' cases with it (`book.cli`).
"""

from __future__ import annotations

import copy
import html
import json
import struct
from functools import cache
from pathlib import Path

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

MODULE = Path("docs/overrides/assets/javascripts/attention.js")  # in the checkout

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


def format_value(value: float) -> str:
    """A value as the page and torch show it: four decimals, ``-inf`` for a hidden score."""
    return "-inf" if value == float("-inf") else f"{value:.4f}"


def causal(stage: str) -> bool:
    """Whether a stage hides each token's future (3.5 and 3.6)."""
    return stage in ("3.5", "3.6")


MARKER = '<div class="attention-playground"></div>'
ASSETS = (
    ("stylesheets/playground.css", '<link rel="stylesheet" href="{}">'),
    # In this order: each uses those above it (playground.js, all of them).
    *(
        (f"javascripts/{name}.js", '<script src="{}" defer></script>')
        for name in (
            "dom",
            "numbers",
            "attention",
            "induction",
            "trained",
            "tables",
            "explain",
            "fields",
            "playground",
        )
    ),
)


def _table(
    caption: str,
    values: list[list[str]],
    rows: list[str],
    columns: list[str],
    causal: bool = False,
    axes: tuple[str, str] | None = None,
) -> str:
    """A matrix as ``tables.js`` draws it: ``axes``, the words for queries and keys, name
    the rows and the columns of scores and weights."""
    corner, keys = axes or ("", None)
    head = "".join(f'<th scope="col">{html.escape(c)}</th>' for c in [corner, *columns])
    head = f"<tr>{head}</tr>"
    if keys is not None:
        span = f'<th scope="colgroup" colspan="{len(columns)}">{html.escape(keys)}</th>'
        head = f'<tr class="playground-axis"><td></td>{span}</tr>{head}'

    body = "".join(
        f'<tr><th scope="row">{html.escape(label)}</th>'
        + "".join(
            ('<td class="is-hidden">' if causal and j > i else "<td>") + f"{v}</td>"
            for j, v in enumerate(row)
        )
        + "</tr>"
        for i, (label, row) in enumerate(zip(rows, values, strict=True))
    )
    return (
        f'<div class="playground-box"><table><caption>{html.escape(caption)}</caption>'
        f"<thead>{head}</thead><tbody>{body}</tbody></table></div>"
    )


def _stage(stage: str, words: dict[str, str]) -> str:
    """The default example at ``stage``, as the package computes it, in static tables."""
    tokens = TOKENS
    result = reference(stage, page_data()["inputs"], torch.float32)
    many = len(result["heads"]) > 1
    parts = [f'<p class="playground-stage-title">{html.escape(words[f"stage_{stage}"])}</p>']
    axes = (words["axis_queries"], words["axis_keys"])
    for number, found in enumerate(result["heads"], start=1):
        head = words["head"].format(n=number)
        for matrix in matrices(stage)[:-1]:  # the context vectors: after the heads
            caption = words["head_matrix"].format(head=head, matrix=words[matrix])
            values = [[format_value(v) for v in row] for row in found[matrix].tolist()]
            square = matrix in ("scores", "weights")
            columns = tokens if square else [str(d) for d in range(1, len(values[0]) + 1)]
            hide = square and causal(stage)
            parts.append(
                _table(
                    caption if many else words[matrix],
                    values,
                    tokens,
                    columns,
                    hide,
                    axes if square else None,
                )
            )
    width = result["context"].shape[-1]
    columns = [str(d) for d in range(1, width + 1)]
    caption = words["joined"] if many else words["context"]
    context = [[format_value(v) for v in row] for row in result["context"].tolist()]
    parts.append(_table(caption, context, tokens, columns))
    return f'<div class="playground-stage">{"".join(parts)}</div>'


def widget(words: dict[str, str], assets: str, manifest: dict) -> str:
    """The playground's markup; ``assets`` is the URL of the site's ``assets/`` folder from
    the page (``../../assets/``), ``manifest`` the trained model's (`book.trained.manifest`)."""
    data = {**page_data(), "trained": manifest, "words": words}
    # "<" escaped: the JSON sits in a script element, which "</script>" would end.
    payload = json.dumps(data, ensure_ascii=False).replace("<", "\\u003c")
    links = "\n".join(markup.format(html.escape(assets + path)) for path, markup in ASSETS)
    stages = "".join(_stage(stage, words) for stage in STAGES)
    return (
        f'<div class="attention-playground" data-playground data-assets="{html.escape(assets)}">\n'
        f'<script type="application/json" class="playground-data">{payload}</script>\n'
        # Left out of the search index: a reader searches for words, not for these numbers.
        # A section, not a div: Material's search stops excluding at the first inner </div>.
        f'<section class="playground-static" data-search-exclude>'
        f"<p>{html.escape(words['no_script'])}</p>{stages}"
        f"<p>{html.escape(words['no_script_trained'])}</p></section>\n"
        f"</div>\n{links}\n"
    )
