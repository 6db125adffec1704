"""The playground's trained model: the one that "What attention learns" trains, for the page.

`model` is the model that the chapter trained in its one execution: its training cell marks
it ``export="model losses"``, and the executor saves both (`plain`) beside the executed
notebook, in ``.cache/book/``, so the build and the tests train it once, with the chapter,
and again only when the chapter executes again. `export` is what the page downloads:
every tensor of its ``state_dict`` (the masks aside), in order, as one little-endian float32
file, and `manifest` says where each tensor is in it. The page's JavaScript
(``induction.js``) is held to the package by `book.playground_check`.
"""

from __future__ import annotations

import array
import sys
from functools import cache
from pathlib import Path

import torch

from attention_mechanisms.induction import ROPE_BASE, AttentionOnlyTransformer
from attention_mechanisms.interpret import attention_patterns
from attention_mechanisms.repeats import SYMBOLS
from book.build import Build
from book.execute import executed, exports_path

CHAPTER = "learned/what-attention-learns.py"  # the chapter that trains it, in docs/en/

FILE = "induction-model.bin"  # under the site's assets/
START = "^"  # how the page writes the start token, as `spell` does
# The sequence the page starts from: a run of seven tokens, a gap of three, the run again.
DEFAULT = "Kq7Zbx3" + "mNw" + "Kq7Zbx3"


def _config(model: torch.nn.Module) -> dict[str, int]:
    first = model.blocks[0]
    return {
        "vocab_size": model.vocab_size,
        "context_length": model.context_length,
        "d_model": model.tok_emb.embedding_dim,
        "num_heads": first.num_heads,
        "num_layers": len(model.blocks),
    }


def _tensors(model: AttentionOnlyTransformer) -> dict[str, torch.Tensor]:
    """The state_dict without the causal masks, which the page builds itself."""
    return {k: v for k, v in model.state_dict().items() if not k.endswith(".mask")}


def plain(value: object) -> object:
    """What the chapter's export cell saves of ``value`` (`book.execute`): a model as its
    sizes and weights (its class is the chapter's own copy, so the object is not saved),
    anything else (the losses) as it is."""
    if isinstance(value, torch.nn.Module):
        return {"config": _config(value), "state": value.state_dict()}
    return value


def exported(build: Build) -> dict:
    """What the chapter's training cell exported, by name: ``model`` (`plain`), ``losses``."""
    return _load(exports_path(executed(build, build.english / CHAPTER)))


@cache
def _load(path: Path) -> dict:
    saved: dict = torch.load(path, weights_only=True)  # one file per execution: read once
    return saved


def model(build: Build) -> AttentionOnlyTransformer:
    """The model that the chapter trained in its one execution (`exported`)."""
    return _model(exports_path(executed(build, build.english / CHAPTER)))


@cache
def _model(path: Path) -> AttentionOnlyTransformer:
    saved = _load(path)["model"]
    found = AttentionOnlyTransformer(**saved["config"])
    found.load_state_dict(saved["state"])
    return found.eval()


def export(build: Build) -> bytes:
    """Every tensor of `manifest`, flattened in row order, as little-endian float32."""
    tensors = _tensors(model(build)).values()
    values = array.array("f", torch.cat([t.flatten() for t in tensors]).tolist())
    if sys.byteorder != "little":
        values.byteswap()
    return values.tobytes()


def manifest(build: Build) -> dict:
    """What the page needs besides the weights file: the model's sizes, its symbols, and
    where each tensor is in `export` (offsets and lengths in numbers, not bytes)."""
    tensors, offset = [], 0
    for name, tensor in _tensors(model(build)).items():
        tensors.append({"name": name, "shape": list(tensor.shape), "offset": offset})
        offset += tensor.numel()
    return {
        "config": {**_config(model(build)), "rope_base": ROPE_BASE},
        "symbols": SYMBOLS,
        "start": START,
        "default": DEFAULT,
        "file": FILE,
        "size": offset * 4,
        "tensors": tensors,
    }


def package_result(build: Build, sequence: str) -> dict:
    """What the page must show for a typed ``sequence``, computed by the package in float32:
    every head's weights (layer, head, row, column; row and column 0 are the start token) and
    the three most likely next tokens."""

    found = model(build)
    ids = torch.tensor([[found.vocab_size, *(SYMBOLS.index(c) for c in sequence)]])
    with torch.no_grad():
        probabilities = torch.softmax(found(ids)[0, -1], dim=-1)
    best = probabilities.topk(3)
    return {
        "weights": [p[0].tolist() for p in attention_patterns(found, ids)],
        "predicted": [
            {"token": SYMBOLS[i], "probability": p}
            for p, i in zip(best.values.tolist(), best.indices.tolist(), strict=True)
        ],
    }
