"""The playground page's numbers: its starting point, and its arithmetic checked in Node.

The page (``docs/en/chapter-3/playground.md``) computes attention in the browser with one
small JavaScript module, ``docs/overrides/assets/javascripts/attention.js``. Everything it
starts from comes from the package, here: the book's six tokens, and for each stage the
weights that the book's seed for that section gives its class (`page_data`).

`verify` runs that module in Node on the default input and on random ones, beside the
package's own functions and classes on the same input, and reports every difference beyond
float32 rounding with its stage and input. `check_defaults` holds the default view to what
the chapters print for the same stage. `python -m book check` runs both; so does the build.
"""

from __future__ import annotations

import copy
import json
import random
import re
import struct
import subprocess
from collections.abc import Callable
from functools import cache
from pathlib import Path

import nbformat
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
from book import ROOT, BookError, expectations, source
from book.executor import execute
from book.typeset import node_executable

MODULE = ROOT / "docs" / "overrides" / "assets" / "javascripts" / "attention.js"
TOKENS = ["Your", "journey", "starts", "with", "one", "step"]  # the book's sentence
# Values for tokens 7 and 8, when the reader adds them (the book has six).
EXTRA = [[0.30, 0.70, 0.20], [0.60, 0.10, 0.40]]
MAX_TOKENS = 8
STAGES = ("3.3", "3.4", "3.5", "3.6")
MATRICES = ("scores", "weights", "context")
_PROJECTIONS = ("W_query", "W_key", "W_value")
# Where a chapter prints a stage's matrix for the book's input: (stage, matrix) -> chapter.
PRINTED = {
    ("3.3", "scores"): "chapter-3/02-simple-self-attention.py",
    ("3.3", "weights"): "chapter-3/02-simple-self-attention.py",
    ("3.3", "context"): "chapter-3/02-simple-self-attention.py",
    ("3.4", "weights"): "chapter-3/04-causal-attention.py",  # 3.5.1 starts from them
    ("3.4", "context"): "chapter-3/03-trainable-self-attention.py",
    ("3.5", "scores"): "chapter-3/04-causal-attention.py",
    ("3.5", "weights"): "chapter-3/04-causal-attention.py",
    ("3.6", "context"): "chapter-3/05-multi-head-attention.py",
}
# torch.testing.assert_close's tolerances: float32's for the page's own numbers, which the
# package computes in float32; float64's for the same weights as exact doubles.
TOLERANCE = {torch.float32: (1.3e-6, 1e-5), torch.float64: (1e-7, 1e-7)}
_PRINTED_NUMBER = re.compile(r"-?inf|-?\d+\.\d+")  # what torch prints of a float tensor
_RUN = """
const attention = require(process.argv[1]);
const cases = JSON.parse(require("fs").readFileSync(0, "utf8"));
const results = cases.map((c) => attention.attend(c.stage, c.inputs, c.heads));
// JSON has no -Infinity or NaN: they travel as strings, which Python's float() reads.
const text = (k, v) => (typeof v === "number" && !isFinite(v) ? String(v) : v);
process.stdout.write(JSON.stringify(results, text));
"""


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
        "stages": {stage: heads(stage) for stage in STAGES},
    }


def _head(module: torch.nn.Module, x: Tensor, hide: bool) -> dict[str, Tensor]:
    """Scores, weights and the class's own context vectors for one head on ``x``."""
    queries, keys, values = (getattr(module, name)(x) for name in _PROJECTIONS)
    scores = queries @ keys.T  # (T, T), unscaled, as the book prints them
    if hide:
        scores = scores.masked_fill(causal_mask(len(x)), -torch.inf)
    _, weights = scaled_dot_product_attention(queries, keys, values, causal=hide)
    return {"scores": scores, "weights": weights, "context": module(x)}


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


def run_node(cases: list[dict], module: Path = MODULE) -> list[dict]:
    """`attend` of the JavaScript ``module`` for each case (stage, inputs, heads), in Node."""
    try:
        done = subprocess.run(
            [node_executable(), "-e", _RUN, str(module.resolve())],
            input=json.dumps(cases),
            capture_output=True,
            text=True,
            encoding="utf-8",
        )
    except FileNotFoundError:
        raise BookError("node was not found: install the docs dependency group") from None
    if done.returncode:
        raise BookError(f"{module.name} failed in Node:\n{done.stderr.strip()}")
    return json.loads(done.stdout)


def _differences(found: dict, expected: dict, dtype: torch.dtype) -> list[str]:
    rtol, atol = TOLERANCE[dtype]
    problems = []
    if len(found["heads"]) != len(expected["heads"]):
        return [f"{len(found['heads'])} head(s), not {len(expected['heads'])}"]
    pairs = [("", found["context"], expected["context"])]
    for h, (mine, theirs) in enumerate(zip(found["heads"], expected["heads"], strict=True)):
        pairs += [(f"head {h} {m}", mine[m], theirs[m]) for m in MATRICES]
    for name, mine, theirs in pairs:
        js = torch.tensor(
            [[float(v) for v in row] for row in mine], dtype=torch.float64
        )  # "-Infinity" and "NaN" arrive as strings
        ours = theirs.to(torch.float64)
        if js.shape != ours.shape:
            problems.append(
                f"{name or 'context'}: shape {tuple(js.shape)}, not {tuple(ours.shape)}"
            )
            continue
        bad = ~torch.isclose(js, ours, rtol=rtol, atol=atol)
        for i, j in bad.nonzero().tolist()[:3]:
            problems.append(
                f"{name or 'context'}[{i}][{j}] is {js[i, j].item():.9g} in JavaScript, "
                f"{ours[i, j].item():.9g} in the package ({str(dtype).removeprefix('torch.')})"
            )
    return problems


def random_inputs(rng: random.Random, spread: float) -> list[list[float]]:
    """2 to `MAX_TOKENS` tokens of three values in [-spread, spread], two decimals each."""
    count = rng.randint(2, MAX_TOKENS)
    return [[round(rng.uniform(-spread, spread), 2) for _ in range(3)] for _ in range(count)]


def verify(count: int = 50, seed: int = 0, module: Path = MODULE) -> list[str]:
    """Every difference between the JavaScript module and the package, stage and input named.

    Per stage: the default input and ``count`` random inputs of 2 to 8 tokens with values a
    reader types (within 2), against the package in float32 with the page's weights; the
    same inputs and ``count`` more within 20, against float64 with the exact weights.
    """
    rng = random.Random(seed)
    default = page_data()["inputs"]
    cases: list[tuple[str, list[list[float]], torch.dtype]] = []
    for stage in STAGES:
        typed = [default, *(random_inputs(rng, 2.0) for _ in range(count))]
        wide = [random_inputs(rng, 20.0) for _ in range(count)]
        cases += [(stage, x, torch.float32) for x in typed]
        cases += [(stage, x, torch.float64) for x in typed + wide]
    results = run_node(
        [
            {"stage": s, "inputs": x, "heads": heads(s, exact=dtype == torch.float64)}
            for s, x, dtype in cases
        ],
        module,
    )
    problems = []
    for (stage, x, dtype), found in zip(cases, results, strict=True):
        for problem in _differences(found, reference(stage, x, dtype), dtype):
            problems.append(f"playground stage {stage}, input {json.dumps(x)}: {problem}")
    return problems


def package_results(cases: list[dict]) -> list[dict]:
    """The package's float32 results for each case (``stage``, ``inputs``), as JSON-ready
    lists, ``-inf`` as the string ``"-inf"``: for tests that cannot import torch."""

    def plain(tensor: Tensor) -> list[list[float | str]]:
        return [
            [format_value(v) if v == float("-inf") else v for v in row] for row in tensor.tolist()
        ]

    results = []
    for case in cases:
        found = reference(case["stage"], case["inputs"], torch.float32)
        results.append(
            {
                "heads": [{m: plain(head[m]) for m in MATRICES} for head in found["heads"]],
                "context": plain(found["context"]),
            }
        )
    return results


def stated_runs(uri: str) -> list[list[str]]:
    """The numbers of each ``# Out:`` block of an English chapter (which ``book check``
    holds to what the chapter prints)."""
    chapter = source.read(ROOT / "docs" / "en" / uri)
    texts = ["\n".join(cell.expected) for cell in chapter.code if cell.expected is not None]
    return [_PRINTED_NUMBER.findall(text) for text in texts]


def _printed_runs(uri: str) -> list[list[str]]:
    """The numbers of each output of an executed English chapter, as printed."""
    notebook = nbformat.read(execute(ROOT / "docs" / "en" / uri)[0], as_version=4)
    texts = [expectations.output_text(cell) for cell in notebook["cells"]]
    return [_PRINTED_NUMBER.findall(text) for text in texts]


def format_value(value: float) -> str:
    """A value as the page and torch show it: four decimals, ``-inf`` for a hidden score."""
    return "-inf" if value == float("-inf") else f"{value:.4f}"


def causal(stage: str) -> bool:
    """Whether a stage hides each token's future (3.5 and 3.6)."""
    return stage in ("3.5", "3.6")


def check_defaults(printed: Callable[[str], list[list[str]]] | None = None) -> list[str]:
    """Each matrix in `PRINTED`, for the book's input, must be a run of numbers that its
    chapter prints, in order, to the four decimals that torch prints."""
    printed = printed or _printed_runs
    problems = []
    for (stage, matrix), uri in PRINTED.items():
        result = reference(stage, page_data()["inputs"], torch.float32)
        values = result["context"] if matrix == "context" else result["heads"][0][matrix]
        ours = [format_value(v) for row in values.tolist() for v in row]
        if not any(_contains(run, ours) for run in printed(uri)):
            problems.append(
                f"playground stage {stage}: its default {matrix} ({' '.join(ours[:4])} ...) "
                f"is printed by no output of docs/en/{uri}"
            )
    return problems


def _contains(run: list[str], part: list[str]) -> bool:
    return any(run[i : i + len(part)] == part for i in range(len(run) - len(part) + 1))
