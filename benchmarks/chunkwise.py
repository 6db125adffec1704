"""Gated DeltaNet trained token by token against chunk by chunk: `nox -s bench`.

Forward and backward of one `GatedDeltaNet` layer over a sequence (default 1,024 tokens,
d = 768, 12 heads, float32, batch 1), with the bonus code's token-by-token loop and with
`chunk_size`, for the per-feature update gate of the book's bonus code and the per-head
gate of the paper. Each variant's time is the median of several calls
(torch.utils.benchmark); its peak memory is measured in a fresh process: the resident
memory's high-water mark (VmHWM, Linux), reset just before one forward and backward.

    python benchmarks/chunkwise.py [--quick] [--tokens N] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import torch
from torch.utils import benchmark

from attention_mechanisms import GatedDeltaNet

ROOT = Path(__file__).resolve().parents[1]
# name -> (chunk_size, beta_per_head)
VARIANTS: dict[str, tuple[int | None, bool]] = {
    "loop, beta per feature": (None, False),
    "chunks of 16, beta per feature": (16, False),
    "chunks of 64, beta per feature": (64, False),
    "loop, beta per head": (None, True),
    "chunks of 64, beta per head": (64, True),
}
PAIRS = [  # (loop, chunked): the ratios reported
    ("loop, beta per feature", "chunks of 16, beta per feature"),
    ("loop, beta per feature", "chunks of 64, beta per feature"),
    ("loop, beta per head", "chunks of 64, beta per head"),
]


def layer(name: str, d: int, heads: int) -> GatedDeltaNet:
    chunk_size, per_head = VARIANTS[name]
    torch.manual_seed(0)
    return GatedDeltaNet(d, d, 0.0, heads, chunk_size=chunk_size, beta_per_head=per_head)


def train_step(module: GatedDeltaNet, x: torch.Tensor) -> None:
    """One forward and backward, the gradients dropped afterwards."""
    module(x).square().mean().backward()
    module.zero_grad(set_to_none=True)
    x.grad = None


def _status_bytes(field: str) -> int:
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith(field + ":"))
    return int(line.split()[1]) * 1024  # reported in kB


def memory_probe(name: str, tokens: int, d: int, heads: int) -> int:
    """Peak resident memory added by one forward and backward (run in a fresh process)."""
    module = layer(name, d, heads)
    train_step(module, torch.randn(1, 8, d, requires_grad=True))  # warm up: kernels, threads
    x = torch.randn(1, tokens, d, requires_grad=True)
    baseline = _status_bytes("VmRSS")
    with open("/proc/self/clear_refs", "w") as clear_refs:
        clear_refs.write("5")  # reset the peak RSS to the current RSS
    train_step(module, x)
    return max(0, _status_bytes("VmHWM") - baseline)


def measure(tokens: int, d: int, heads: int, min_run_time: float) -> dict[str, dict[str, float]]:
    results = {}
    for name in VARIANTS:
        module = layer(name, d, heads)
        x = torch.randn(1, tokens, d, requires_grad=True)
        train_step(module, x)  # warm up
        timer = benchmark.Timer(
            stmt="step(m, x)", globals={"step": train_step, "m": module, "x": x}
        )
        seconds = timer.blocked_autorange(min_run_time=min_run_time).median
        probe = [sys.executable, __file__, "--memory-probe", name, str(tokens), str(d), str(heads)]
        peak = int(subprocess.run(probe, capture_output=True, text=True, check=True).stdout)
        results[name] = {"seconds": seconds, "peak_bytes": peak}
        print(f"{name:<32} {seconds * 1e3:9.1f} ms   peak +{peak / 2**20:7.1f} MiB", flush=True)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="256 tokens, d = 256")
    parser.add_argument("--tokens", type=int, default=1024)
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "bench")
    parser.add_argument("--memory-probe", nargs=4, metavar=("NAME", "T", "D", "H"))
    args = parser.parse_args(argv)
    if args.memory_probe:
        name, tokens, d, heads = args.memory_probe
        print(memory_probe(name, int(tokens), int(d), int(heads)))
        return 0
    tokens, d, heads = (256, 256, 4) if args.quick else (args.tokens, 768, 12)
    print(f"GatedDeltaNet, forward and backward: {tokens} tokens, d = {d}, {heads} heads")
    results = measure(tokens, d, heads, min_run_time=0.5 if args.quick else 2.0)
    for loop, chunked in PAIRS:
        faster = results[loop]["seconds"] / results[chunked]["seconds"]
        lighter = results[chunked]["peak_bytes"] / max(1, results[loop]["peak_bytes"])
        print(f"{chunked}: {faster:.1f}x faster, {lighter:.2f} of the loop's peak memory")
    args.out.mkdir(parents=True, exist_ok=True)
    shape = {"tokens": tokens, "d": d, "heads": heads, "threads": torch.get_num_threads()}
    (args.out / "chunkwise.json").write_text(json.dumps({"shape": shape, "results": results}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
