"""The playground's trained model: the one that "What attention learns" trains, for the page.

`model` is the model that the chapter trained in its one execution: its training cell marks
it ``export="model losses"``, and the executor saves both (`plain`) beside the executed
notebook, in ``.cache/book/``, so the build and the tests train it once, with the chapter,
and again only when the chapter executes again (`exported`). `export` is what the page downloads:
every tensor of its ``state_dict`` (the masks aside), in order, as one little-endian float32
file, and `manifest` says where each tensor is in it. The page's JavaScript
(``induction.js``) is held to the package by `book.playground_check`.
"""

from __future__ import annotations

import array
import shutil
import sys
from functools import cache

import torch

from attention_mechanisms.induction import SYMBOLS, AttentionOnlyTransformer
from book import paths
from book.executor import execute, exports_path

CHAPTER = "learned/what-attention-learns.py"  # the chapter that trains it, in docs/en/

FILE = "induction-model.bin"  # under the site's assets/
START = "^"  # how the page writes the start token, as `spell` does
# The sequence the page starts from: a copy of seven tokens, twice.
DEFAULT = "Kq7Zbx3" * 2


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
    """What the chapter's export cell saves of ``value`` (`book.executor`): a model as its
    sizes and weights (its class is the chapter's own copy, so the object is not saved),
    anything else (the losses) as it is."""
    if isinstance(value, torch.nn.Module):
        return {"config": _config(value), "state": value.state_dict()}
    return value


@cache
def exported() -> dict:
    """What the chapter's training cell exported, by name: ``model`` (`plain`), ``losses``.

    Executing the chapter (or finding it cached) gives them: nothing trains it again. A
    cached execution from before the chapter exported them is executed again.
    """
    chapter = paths.english() / CHAPTER
    notebook, _ = execute(chapter)
    if not exports_path(notebook).is_file():
        shutil.rmtree(notebook.parent)
        notebook, _ = execute(chapter)
    saved: dict = torch.load(exports_path(notebook), weights_only=True)
    return saved


@cache
def model() -> AttentionOnlyTransformer:
    """The model that the chapter trained in its one execution (`exported`)."""
    saved = exported()["model"]
    found = AttentionOnlyTransformer(**saved["config"])
    found.load_state_dict(saved["state"])
    return found.eval()


def forget() -> None:
    """Forget what `exported` read: each build (each rebuild of ``mkdocs serve`` too) reads
    the chapter's execution once, and a chapter executed again is read again."""
    exported.cache_clear()
    model.cache_clear()


def export() -> bytes:
    """Every tensor of `manifest`, flattened in row order, as little-endian float32."""
    values = array.array("f", torch.cat([t.flatten() for t in _tensors(model()).values()]).tolist())
    if sys.byteorder != "little":
        values.byteswap()
    return values.tobytes()


def manifest() -> dict:
    """What the page needs besides the weights file: the model's sizes, its symbols, and
    where each tensor is in `export` (offsets and lengths in numbers, not bytes)."""
    tensors, offset = [], 0
    for name, tensor in _tensors(model()).items():
        tensors.append({"name": name, "shape": list(tensor.shape), "offset": offset})
        offset += tensor.numel()
    return {
        "config": _config(model()),
        "symbols": SYMBOLS,
        "start": START,
        "default": DEFAULT,
        "file": FILE,
        "size": offset * 4,
        "tensors": tensors,
    }


def package_result(sequence: str) -> dict:
    """What the page must show for a typed ``sequence``, computed by the package in float32:
    every head's weights (layer, head, row, column; row and column 0 are the start token) and
    the three most likely next tokens."""
    from attention_mechanisms.interpret import attention_patterns

    found = model()
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
