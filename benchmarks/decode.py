"""Generation speed with each variant's cache, as the context grows: `nox -s bench`.

One layer of each variant at a small size (d = 512, 8 heads, float32, batch 1, evaluation
mode) reads a prompt of `context` tokens into its cache, in chunks of 1,024; then each
decoding step feeds one new token with `use_cache=True`. A step is timed from the same
cache every time (its buffers are put back before each call), as the median of several
calls (torch.utils.benchmark), and reported as tokens per second.

    python benchmarks/decode.py [--quick] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

import torch
from torch import nn
from torch.utils import benchmark

from attention_mechanisms import (
    GatedDeltaNet,
    GroupedQueryAttention,
    MultiHeadAttentionWithSWA,
    MultiHeadLatentAttention,
)

ROOT = Path(__file__).resolve().parents[1]
D, HEADS = 512, 8
VARIANTS: dict[str, Callable[[], nn.Module]] = {
    "multi-head (GQA, g = h)": lambda: GroupedQueryAttention(D, D, 0.0, HEADS, HEADS),
    "grouped-query, g = 2": lambda: GroupedQueryAttention(D, D, 0.0, HEADS, 2),
    "sliding window, w = 1,024": lambda: MultiHeadAttentionWithSWA(
        D, D, 0.0, HEADS, sliding_window_size=1024
    ),
    "latent, plain": lambda: MultiHeadLatentAttention(D, D, 0.0, HEADS),
    "latent, absorbed": lambda: MultiHeadLatentAttention(D, D, 0.0, HEADS, absorb=True),
    "Gated DeltaNet": lambda: GatedDeltaNet(D, D, 0.0, HEADS, chunk_size=64),
}


@torch.no_grad()
def step_timer(name: str, context: int) -> benchmark.Timer:
    """A timer for one decoding step after `context` tokens of prompt."""
    torch.manual_seed(0)
    module = VARIANTS[name]().eval()
    prompt = torch.randn(1, context, D)
    for start in range(0, context, 1024):
        module(prompt[:, start : start + 1024], use_cache=True)
    cached = {key: value.clone() for key, value in module.named_buffers() if value is not None}
    position = module.ptr_current_pos
    token = torch.randn(1, 1, D)

    def step() -> None:
        for key, value in cached.items():  # back to the cache after the prompt
            setattr(module, key, value)
        module.ptr_current_pos = position
        module(token, use_cache=True)

    step()  # warm up
    return benchmark.Timer(stmt="step()", globals={"step": step})


def measure(contexts: list[int], min_run_time: float) -> dict[str, list[float]]:
    results: dict[str, list[float]] = {}
    print(f"{'tokens per second':<28}" + "".join(f"{c:>10,}" for c in contexts))
    for name in VARIANTS:
        rates = []
        for context in contexts:
            with torch.no_grad():
                seconds = step_timer(name, context).blocked_autorange(min_run_time=min_run_time)
            rates.append(1 / seconds.median)
        results[name] = rates
        print(f"{name:<28}" + "".join(f"{rate:>10,.0f}" for rate in rates), flush=True)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="contexts up to 2,048 only")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "bench")
    args = parser.parse_args(argv)
    contexts = [1024, 2048] if args.quick else [1024, 2048, 4096, 8192, 16384]
    print(f"One layer, d = {D}, {HEADS} heads, float32, {torch.get_num_threads()} threads")
    results = measure(contexts, min_run_time=0.2 if args.quick else 1.0)
    longest = contexts[-1]
    for name in VARIANTS:
        ratio = results[name][-1] / results["multi-head (GQA, g = h)"][-1]
        print(f"at {longest:,} tokens, {name}: {ratio:.1f}x the multi-head cache's speed")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "decode.json").write_text(json.dumps({"contexts": contexts, "results": results}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
