"""The playground's JavaScript held to the package, and its default view to the chapters.

`verify` runs ``attention.js`` in Node (`run_node`) on the default input and on random ones,
beside the package's own functions and classes on the same input (`book.playground.
reference`), and reports every difference beyond float32 rounding with its stage and input.
`check_defaults` holds the default view, as the page shows it and as the package computes
it, to what the chapters print for the same stage. `verify_trained` runs ``induction.js``,
the trained stage's model, beside the package's on random sequences. `python -m book check`
runs all three; ``python -m book site`` runs both verifications before it builds anything.
"""

from __future__ import annotations

import base64
import copy
import json
import random
import re
import subprocess
from pathlib import Path

import nbformat
import torch
from torch import Tensor

from attention_mechanisms.induction import ROPE_BASE
from attention_mechanisms.interpret import attention_patterns
from book import BookError, expectations, trained
from book.build import Build
from book.execute import executed
from book.playground import (
    LIMIT,
    MAX_TOKENS,
    MODULE,
    STAGES,
    format_value,
    heads,
    page_data,
    reference,
)
from book.typeset import node_executable

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


def run_node(cases: list[dict], module: Path) -> list[dict]:
    """`attend` of the JavaScript ``module`` for each case (stage, inputs, heads), in Node."""
    return _node(_RUN, module, cases)


def _node(script: str, module: Path, payload: object) -> list[dict]:
    """What ``script`` prints as JSON, run in Node with ``module``'s path and ``payload``."""
    try:
        done = subprocess.run(
            [node_executable(), "-e", script, str(module.resolve())],
            input=json.dumps(payload),
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
        pairs += [(f"head {h} {m}", mine[m], theirs[m]) for m in theirs]  # q, k, v from 3.4
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


def verify(build: Build, count: int = 50, seed: int = 0, module: Path = MODULE) -> list[str]:
    """Every difference between the JavaScript module and the package, stage and input named.

    Per stage: the default input and ``count`` random inputs of 2 to 8 tokens with values
    that the page takes (within `LIMIT`), against the package in float32 with the page's
    weights; the same inputs and ``count`` more within 20, against float64 with the exact
    weights.
    """
    rng = random.Random(seed)
    default = page_data()["inputs"]
    cases: list[tuple[str, list[list[float]], torch.dtype]] = []
    for stage in STAGES:
        typed = [default, *(random_inputs(rng, LIMIT) for _ in range(count))]
        wide = [random_inputs(rng, 20.0) for _ in range(count)]
        cases += [(stage, x, torch.float32) for x in typed]
        cases += [(stage, x, torch.float64) for x in typed + wide]
    results = run_node(
        [
            {"stage": s, "inputs": x, "heads": heads(s, exact=dtype == torch.float64)}
            for s, x, dtype in cases
        ],
        build.root / module,
    )
    problems = []
    for (stage, x, dtype), found in zip(cases, results, strict=True):
        for problem in _differences(found, reference(stage, x, dtype), dtype):
            problems.append(f"playground stage {stage}, input {json.dumps(x)}: {problem}")
    return problems


def stated_runs(build: Build, uri: str) -> list[list[str]]:
    """The numbers of each ``# Out:`` block of an English chapter (which ``book check``
    holds to what the chapter prints)."""
    chapter = build.chapter(build.english / uri)
    texts = ["\n".join(cell.expected) for cell in chapter.code if cell.expected is not None]
    return [_PRINTED_NUMBER.findall(text) for text in texts]


def printed_runs(executed: Path) -> list[list[str]]:
    """The numbers of each output of an executed English chapter, as printed."""
    notebook = nbformat.read(executed, as_version=4)
    texts = [expectations.output_text(cell) for cell in notebook["cells"]]
    return [_PRINTED_NUMBER.findall(text) for text in texts]


def check_defaults(build: Build) -> list[str]:
    """Each matrix in `PRINTED`, for the book's input, as the page shows it (the JavaScript,
    to four decimals) and as the package computes it, must be a run of numbers that its
    chapter prints, in order, as torch prints them."""
    runs = {
        uri: printed_runs(executed(build, build.english / uri)) for uri in set(PRINTED.values())
    }
    default = page_data()["inputs"]
    cases = [{"stage": s, "inputs": default, "heads": heads(s)} for s in STAGES]
    views = dict(zip(STAGES, run_node(cases, build.root / MODULE), strict=True))
    problems = []
    for (stage, matrix), uri in PRINTED.items():
        package = reference(stage, default, torch.float32)
        for who, result in (("page", views[stage]), ("package", package)):
            values = result["context"] if matrix == "context" else result["heads"][0][matrix]
            rows = values.tolist() if isinstance(values, Tensor) else values
            ours = [format_value(float(v)) for row in rows for v in row]
            if not any(_contains(run, ours) for run in runs[uri]):
                problems.append(
                    f"playground stage {stage}: the {who}'s default {matrix} "
                    f"({' '.join(ours[:4])} ...) is printed by no output of "
                    + build.shown(build.english / uri)
                )
    return problems


def _contains(run: list[str], part: list[str]) -> bool:
    return any(run[i : i + len(part)] == part for i in range(len(run) - len(part) + 1))


_RUN_TRAINED = """
const induction = require(process.argv[1]);
const input = JSON.parse(require("fs").readFileSync(0, "utf8"));
const blob = Buffer.from(input.weights, "base64");
const numbers = new Float32Array(blob.buffer, blob.byteOffset, blob.length / 4);
const tensors = {};
input.manifest.tensors.forEach(function (t) {
  const size = t.shape.reduce(function (a, b) { return a * b; }, 1);
  tensors[t.name] = { shape: t.shape, data: numbers.subarray(t.offset, t.offset + size) };
});
const model = { config: input.manifest.config, tensors: tensors };
const results = input.sequences.map(function (ids) { return induction.forward(model, ids); });
process.stdout.write(JSON.stringify(results));
"""


def random_sequences(rng: random.Random, count: int, config: dict[str, int]) -> list[list[int]]:
    """``count`` sequences as the page makes them: the start token, then 1 to
    ``context_length - 1`` tokens, half of them a random copy repeated."""
    sequences = []
    for _ in range(count):
        length = rng.randint(1, config["context_length"] - 1)
        tokens = [rng.randrange(config["vocab_size"]) for _ in range(length)]
        if rng.random() < 0.5:
            tokens = (tokens[: (length + 1) // 2] * 2)[:length]
        sequences.append([config["vocab_size"], *tokens])
    return sequences


TRAINED_SEQUENCES = 60


def verify_trained(build: Build, count: int = TRAINED_SEQUENCES, seed: int = 0) -> list[str]:
    """Every difference between ``induction.js`` and the package on the trained model.

    ``count`` random sequences (`random_sequences`) go through the JavaScript forward pass
    in Node, with the weights the page downloads, and through the package's model in float64
    on the same float32 weights: every head's weights and every logit must agree within
    float64's tolerance, far inside float32 rounding. (The package's own float32 run differs
    from both by its rounding, which grows with the depth of the model: comparing with it
    would test float32, not the JavaScript.)
    """
    manifest = trained.manifest(build)
    sequences = random_sequences(random.Random(seed), count, manifest["config"])
    payload = {
        "manifest": manifest,
        "weights": base64.b64encode(trained.export(build)).decode("ascii"),
        "sequences": sequences,
    }
    found = _node(_RUN_TRAINED, build.root / MODULE.with_name("induction.js"), payload)
    model = copy.deepcopy(trained.model(build)).to(torch.float64)
    for block in model.blocks:  # the rotations' angles in float64 too, as the JavaScript's
        # (the package turns by float32 speeds, as the book's code does)
        exponents = torch.arange(0, block.head_dim, 2, dtype=torch.float64) / block.head_dim
        positions = torch.arange(block.context_length, dtype=torch.float64)[:, None]
        angles = positions * ROPE_BASE**-exponents  # (context_length, head_dim / 2)
        angles = torch.cat([angles, angles], dim=1)  # (context_length, head_dim)
        block.cos, block.sin = angles.cos(), angles.sin()
    rtol, atol = TOLERANCE[torch.float64]
    problems = []
    for ids, js in zip(sequences, found, strict=True):
        for name, ours in _trained_reference(model, ids).items():
            kind, _, layer = name.partition(" ")
            theirs = torch.tensor(js[kind], dtype=torch.float64)
            theirs = theirs[int(layer)] if layer else theirs
            if theirs.shape != ours.shape or not torch.allclose(theirs, ours, rtol=rtol, atol=atol):
                problems.append(
                    f"trained model, {name}, sequence {ids}: the JavaScript differs from the "
                    "package (float64)"
                )
    return problems


def _trained_reference(model: torch.nn.Module, ids: list[int]) -> dict[str, Tensor]:
    """The package's logits and each layer's weights, as ``induction.js`` returns them."""

    batch = torch.tensor([ids])
    with torch.no_grad():
        logits = model(batch)[0]  # (T, V)
    patterns = attention_patterns(model, batch)
    return {"logits": logits, **{f"weights {i}": p[0] for i, p in enumerate(patterns)}}
