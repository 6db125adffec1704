"""Benchmark of the attention of today's LLMs beside chapter 3's: `nox -s bench`.

Part 1 times grouped-query and latent attention against `MultiHeadAttention` at one shape
(float32, evaluation mode): a whole forward pass, and one generation step (one new token
after a cache of the same length). Part 2 measures the cache each module keeps as the
context grows, filling it in chunks of real tokens and adding up its tensors' bytes.
Results are printed, saved as JSON and plotted (default folder: build/bench/).

    python benchmarks/todays_attention.py [--quick] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import torch
from torch import nn
from torch.utils import benchmark

from attention_mechanisms import (
    GroupedQueryAttention,
    MultiHeadAttention,
    MultiHeadAttentionWithSWA,
    MultiHeadLatentAttention,
)

ROOT = Path(__file__).resolve().parents[1]


def build(name: str, d: int, heads: int, context: int) -> nn.Module:
    """The modules compared, all with d_model d and `heads` query heads."""
    makers: dict[str, Callable[[], nn.Module]] = {
        "MultiHeadAttention": lambda: MultiHeadAttention(d, d, context, 0.0, heads),
        "multi-head cache (GQA, g = h)": lambda: GroupedQueryAttention(d, d, 0.0, heads, heads),
        "GroupedQueryAttention, g = h/4": lambda: GroupedQueryAttention(
            d, d, 0.0, heads, heads // 4
        ),
        "multi-query (GQA, g = 1)": lambda: GroupedQueryAttention(d, d, 0.0, heads, 1),
        "MultiHeadLatentAttention": lambda: MultiHeadLatentAttention(d, d, 0.0, heads),
        "MultiHeadAttentionWithSWA, w = 256": lambda: MultiHeadAttentionWithSWA(
            d, d, 0.0, heads, sliding_window_size=256
        ),
    }
    torch.manual_seed(0)
    return makers[name]().eval()


TIMED = ["MultiHeadAttention", "GroupedQueryAttention, g = h/4", "MultiHeadLatentAttention"]
CACHED = [name for name in TIMED if name != "MultiHeadAttention"] + [
    "multi-head cache (GQA, g = h)",
    "multi-query (GQA, g = 1)",
    "MultiHeadAttentionWithSWA, w = 256",
]


def calls(name: str, shape: dict) -> dict[str, Callable[[], object]]:
    """A whole forward pass and, for the classes with a cache, one generation step."""
    b, t, d, h = shape["batch"], shape["tokens"], shape["d_model"], shape["num_heads"]
    module = build(name, d, h, 2 * t)
    x = torch.randn(b, t, d)
    result: dict[str, Callable[[], object]] = {"forward_s": lambda: module(x)}
    if name != "MultiHeadAttention":
        with torch.no_grad():
            module(x, use_cache=True)
        cached = {k: v.clone() for k, v in module.named_buffers()}
        new_token = torch.randn(b, 1, d)

        def step() -> object:
            for key, value in cached.items():  # back to the same cache every call
                setattr(module, key, value)
            module.ptr_current_pos = t
            return module(new_token, use_cache=True)

        result["step_s"] = step
    return result


def times(shape: dict, rounds: int) -> dict[str, dict[str, list[float]]]:
    """Seconds per call, in interleaved rounds: each round times every module once."""
    timers: dict[str, dict[str, benchmark.Timer]] = {}
    for name in TIMED:
        timers[name] = {}
        for mode, fn in calls(name, shape).items():
            with torch.no_grad():
                fn()  # warm up
            timers[name][mode] = benchmark.Timer(
                stmt="with torch.no_grad(): fn()",
                globals={"fn": fn, "torch": torch},
                num_threads=torch.get_num_threads(),
            )
    results = {name: {mode: [] for mode in timers[name]} for name in TIMED}
    for _ in range(rounds):
        for name in TIMED:
            for mode, timer in timers[name].items():
                results[name][mode].append(timer.timeit(1).median)
    for name in TIMED:
        line = "   ".join(
            f"{mode[:-2]} {statistics.median(v) * 1e3:8.2f} ms" for mode, v in results[name].items()
        )
        print(f"  {name:<34} {line}", flush=True)
    return results


def cache_sizes(shape: dict, contexts: list[int], chunk: int) -> dict[str, list[int]]:
    """Bytes of each module's cache after `context` tokens, fed in chunks of real tokens."""
    d, h = shape["d_model"], shape["num_heads"]
    sizes: dict[str, list[int]] = {}
    for name in CACHED:
        module, sizes[name] = build(name, d, h, max(contexts)), []
        with torch.no_grad():
            for context in contexts:
                module.reset_cache()
                for _ in range(context // chunk):
                    module(torch.randn(1, chunk, d), use_cache=True)
                sizes[name].append(sum(buffer.nbytes for buffer in module.buffers()))
        mib = ", ".join(f"{c}: {s / 2**20:.2f}" for c, s in zip(contexts, sizes[name], strict=True))
        print(f"  {name:<34} MiB at {mib}", flush=True)
    return sizes


def ratio(results: dict, a: str, b: str, mode: str) -> float:
    """Median over rounds of time(a) / time(b), each pair measured in the same round."""
    pairs = zip(results[a][mode], results[b][mode], strict=True)
    return statistics.median(x / y for x, y in pairs)


def report_ratios(results: dict, sizes: dict) -> list[tuple[str, float]]:
    gqa, mla, mha = "GroupedQueryAttention, g = h/4", "MultiHeadLatentAttention", TIMED[0]
    full = "multi-head cache (GQA, g = h)"
    return [
        (
            "GroupedQueryAttention / MultiHeadAttention, forward",
            ratio(results, gqa, mha, "forward_s"),
        ),
        (
            "MultiHeadLatentAttention / MultiHeadAttention, forward",
            ratio(results, mla, mha, "forward_s"),
        ),
        (
            "MultiHeadLatentAttention / GroupedQueryAttention, one step",
            ratio(results, mla, gqa, "step_s"),
        ),
        *(
            (f"cache of {name} / multi-head cache", sizes[name][-1] / sizes[full][-1])
            for name in CACHED
            if name != full
        ),
    ]


def plot(contexts: list[int], sizes: dict, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5), layout="constrained")
    for name, values in sizes.items():
        ax.plot(contexts, [v / 2**20 for v in values], marker="o", label=name)
    ax.set(xscale="log", yscale="log", xlabel="tokens in the context", ylabel="cache, MiB")
    ax.set_title("Cache of one layer, batch 1, float32")
    ax.legend()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small shapes, for a smoke test")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "bench")
    args = parser.parse_args(argv)
    if args.quick:
        shape = {"batch": 2, "tokens": 256, "d_model": 256, "num_heads": 8}
        contexts, chunk, rounds = [256, 512, 1024], 128, 5
    else:
        shape = {"batch": 8, "tokens": 1024, "d_model": 768, "num_heads": 12}
        contexts, chunk, rounds = [512, 1024, 2048, 4096], 256, 9
    start = time.perf_counter()
    print(
        f"machine: {platform.machine()}, {torch.get_num_threads()} torch threads, "
        f"torch {torch.__version__}\n\n[cpu] batch {shape['batch']}, {shape['tokens']} tokens, "
        f"d_model {shape['d_model']}, {shape['num_heads']} heads, float32"
    )
    results = times(shape, rounds)
    print(f"\n[cpu] cache of one layer after each context, filled {chunk} tokens at a time")
    sizes = cache_sizes(shape, contexts, chunk)
    checks = report_ratios(results, sizes)
    print(f"\nratios (one run; times: median over {rounds} rounds; caches at {contexts[-1]}):")
    for label, value in checks:
        print(f"  {label:<66} {value:8.3f}")
    args.out.mkdir(parents=True, exist_ok=True)
    report = {"shape": shape, "times": results, "contexts": contexts, "cache_bytes": sizes}
    report["ratios"] = dict(checks)
    (args.out / "todays_attention.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
    plot(contexts, sizes, args.out / "todays_attention.png")
    print(f"\nsaved {args.out / 'todays_attention.json'} and {args.out / 'todays_attention.png'}")
    print(f"({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
