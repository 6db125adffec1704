"""Benchmark of causal multi-head attention implementations: `nox -s bench`.

Part 1 times a whole attention module at GPT-2 small's shape (float32), forward and
forward+backward, for every implementation below. Part 2 times the attention step alone
(no projections) as the sequence grows, and measures its peak memory in a fresh process.
Results are printed, saved as JSON and plotted (default folder: build/bench/).

    python benchmarks/attention.py [--quick] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch
import torch.nn.functional as F  # noqa: N812 (PyTorch's own convention)
from torch import Tensor, nn
from torch.utils import benchmark

from attention_mechanisms import (
    FusedMultiHeadAttention,
    MultiHeadAttention,
    MultiHeadAttentionWrapper,
    causal_mask,
    tiled_attention,
)

ROOT = Path(__file__).resolve().parents[1]


# --------------------------------------------------------------------------- variants
# Each is the same causal multi-head attention; only the way it is computed differs.


class CombinedQKV(nn.Module):
    """The textbook computation, but with one QKV projection instead of three."""

    def __init__(self, d: int, context_length: int, num_heads: int) -> None:
        super().__init__()
        self.num_heads, self.head_dim = num_heads, d // num_heads
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.out_proj = nn.Linear(d, d)
        self.register_buffer("mask", causal_mask(context_length))

    def forward(self, x: Tensor) -> Tensor:
        b, t, d = x.shape
        qkv = self.qkv(x).view(b, t, 3, self.num_heads, self.head_dim)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)  # each (b, h, t, d_head)
        scores = (q @ k.transpose(-2, -1)).masked_fill(self.mask[:t, :t], -math.inf)
        weights = torch.softmax(scores / self.head_dim**0.5, dim=-1)
        return self.out_proj((weights @ v).transpose(1, 2).reshape(b, t, d))


class EinsumAttention(nn.Module):
    """Projections and both attention products written as einsums."""

    def __init__(self, d: int, context_length: int, num_heads: int) -> None:
        super().__init__()
        self.num_heads, self.head_dim = num_heads, d // num_heads
        self.w_qkv = nn.Parameter(torch.randn(3, num_heads, d, self.head_dim) / d**0.5)
        self.out_proj = nn.Linear(d, d)
        self.register_buffer("mask", causal_mask(context_length))

    def forward(self, x: Tensor) -> Tensor:
        b, t, d = x.shape
        q, k, v = torch.einsum("btd,jhde->jbhte", x, self.w_qkv)  # (3, b, h, t, d_head)
        scores = torch.einsum("bhqe,bhke->bhqk", q, k).masked_fill(self.mask[:t, :t], -math.inf)
        weights = torch.softmax(scores / self.head_dim**0.5, dim=-1)
        context = torch.einsum("bhqk,bhke->bqhe", weights, v)  # (b, t, h, d_head)
        return self.out_proj(context.reshape(b, t, d))


class SDPAWithMask(FusedMultiHeadAttention):
    """The fused module, but handing SDPA an explicit boolean mask instead of is_causal."""

    def forward(self, x: Tensor, kv_cache: None = None) -> Tensor:
        b, t, _ = x.shape
        qkv = self.qkv(x).view(b, t, 3, self.num_heads, self.head_dim)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)
        keep = ~causal_mask(t, device=x.device)
        context = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
        return self.out_proj(context.transpose(1, 2).reshape(b, t, self.d_out))


class TorchMHA(nn.Module):
    """torch.nn.MultiheadAttention with a causal mask and need_weights=False."""

    def __init__(self, d: int, context_length: int, num_heads: int) -> None:
        super().__init__()
        self.mha = nn.MultiheadAttention(d, num_heads, bias=True, batch_first=True)
        self.register_buffer("mask", causal_mask(context_length))

    def forward(self, x: Tensor) -> Tensor:
        t = x.shape[1]
        return self.mha(x, x, x, attn_mask=self.mask[:t, :t], need_weights=False)[0]


class Tiled(FusedMultiHeadAttention):
    """The fused module's projections around tiled_attention (pure PyTorch, block by block)."""

    def forward(self, x: Tensor, kv_cache: None = None) -> Tensor:
        b, t, _ = x.shape
        qkv = self.qkv(x).view(b, t, 3, self.num_heads, self.head_dim)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)
        context = tiled_attention(q, k, v, causal=True, block_size=256)
        return self.out_proj(context.transpose(1, 2).reshape(b, t, self.d_out))


def floor(x: Tensor, w_qkv: Tensor, w_out: Tensor, b_out: Tensor, num_heads: int) -> Tensor:
    """The least any implementation must do: two projections around one bare SDPA call."""
    b, t, d = x.shape
    q, k, v = F.linear(x, w_qkv).view(b, t, 3, num_heads, d // num_heads).permute(2, 0, 3, 1, 4)
    context = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    return F.linear(context.transpose(1, 2).reshape(b, t, d), w_out, b_out)


def build(name: str, d: int, context_length: int, num_heads: int) -> Callable[[Tensor], Tensor]:
    if name == "wrapper":
        return MultiHeadAttentionWrapper(d, d // num_heads, context_length, 0.0, num_heads)
    if name == "MultiHeadAttention":
        return MultiHeadAttention(d, d, context_length, 0.0, num_heads)
    if name == "combined QKV":
        return CombinedQKV(d, context_length, num_heads)
    if name == "einsum":
        return EinsumAttention(d, context_length, num_heads)
    if name == "FusedMultiHeadAttention":
        return FusedMultiHeadAttention(d, d, context_length, 0.0, num_heads)
    if name == "SDPA, explicit mask":
        return SDPAWithMask(d, d, context_length, 0.0, num_heads)
    if name == "nn.MultiheadAttention":
        return TorchMHA(d, context_length, num_heads)
    if name == "tiled (pure PyTorch)":
        return Tiled(d, d, context_length, 0.0, num_heads)
    if name == "floor (inline SDPA)":
        # The very weights of the fused module (same seed): the values affect the speed too.
        same = FusedMultiHeadAttention(d, d, context_length, 0.0, num_heads)
        w_qkv, w_out, b_out = same.qkv.weight, same.out_proj.weight, same.out_proj.bias
        return lambda x: floor(x, w_qkv, w_out, b_out, num_heads)
    raise ValueError(f"unknown implementation {name!r}")


IMPLEMENTATIONS = [
    "wrapper",
    "MultiHeadAttention",
    "combined QKV",
    "einsum",
    "FusedMultiHeadAttention",
    "SDPA, explicit mask",
    "nn.MultiheadAttention",
    "tiled (pure PyTorch)",
    "floor (inline SDPA)",
]


# --------------------------------------------------------------------------- measuring


def time_call(fn: Callable[[], object], min_run_time: float) -> float:
    """Median seconds per call, by torch.utils.benchmark."""
    fn()  # warm up: first calls allocate and pick kernels
    timer = benchmark.Timer(stmt="fn()", globals={"fn": fn}, num_threads=torch.get_num_threads())
    return timer.blocked_autorange(min_run_time=min_run_time).median


def module_times(shape: dict, device: str, rounds: int) -> dict[str, dict[str, list[float]]]:
    """Seconds per call of every implementation, in interleaved rounds.

    Each round times one call of every implementation in turn, so a slow spell of the
    machine hits all of them alike; ratios are then taken round by round (see ``ratios``).
    """
    b, t, d, h = shape["batch"], shape["tokens"], shape["d_model"], shape["num_heads"]
    calls: dict[str, dict[str, Callable[[], None]]] = {}
    for name in IMPLEMENTATIONS:
        torch.manual_seed(0)
        module = build(name, d, t, h)
        if isinstance(module, nn.Module):
            module = module.to(device).eval()
        x = torch.randn(b, t, d, device=device)
        x_grad = x.clone().requires_grad_(True)

        def forward(module=module, x=x) -> None:
            with torch.no_grad():
                module(x)

        def forward_backward(module=module, x=x_grad) -> None:
            module(x).sum().backward()

        calls[name] = {"forward_s": forward, "forward_backward_s": forward_backward}
    results = {name: {"forward_s": [], "forward_backward_s": []} for name in IMPLEMENTATIONS}
    for mode in ("forward_s", "forward_backward_s"):
        timers = {}
        for name in IMPLEMENTATIONS:
            calls[name][mode]()  # warm up
            timers[name] = benchmark.Timer(
                stmt="fn()", globals={"fn": calls[name][mode]}, num_threads=torch.get_num_threads()
            )
        for _ in range(rounds):
            for name in IMPLEMENTATIONS:
                results[name][mode].append(timers[name].timeit(1).median)
    for name in IMPLEMENTATIONS:
        forward = statistics.median(results[name]["forward_s"])
        both = statistics.median(results[name]["forward_backward_s"])
        print(
            f"  {name:<26} forward {forward * 1e3:9.1f} ms   forward+backward {both * 1e3:9.1f} ms",
            flush=True,
        )
    return results


def attention_step(name: str, q: Tensor, k: Tensor, v: Tensor) -> Tensor:
    """Only the attention step (no projections): textbook, fused or tiled."""
    if name == "textbook":
        t = q.shape[-2]
        scores = (q @ k.transpose(-2, -1)).masked_fill(causal_mask(t, device=q.device), -math.inf)
        return torch.softmax(scores / q.shape[-1] ** 0.5, dim=-1) @ v
    if name == "fused":
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    if name == "tiled":
        return tiled_attention(q, k, v, causal=True, block_size=256)
    raise ValueError(name)


def _status_bytes(field: str) -> int:
    """A memory figure of this process from /proc/self/status (Linux), in bytes."""
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith(field + ":"))
    return int(line.split()[1]) * 1024  # reported in kB


def memory_probe(name: str, tokens: int, heads: int, head_dim: int) -> int:
    """Peak resident memory added by one attention step (run in a fresh process).

    The kernel's high-water mark (VmHWM) is reset just before the step, so the peak is the
    step's own; getrusage's ru_maxrss cannot be used, as it survives fork and exec.
    """
    with torch.no_grad():
        # Warm up on a tiny input: the first call loads kernels and starts threads.
        attention_step(name, *torch.randn(3, 1, heads, 16, head_dim).unbind(0))
        q, k, v = torch.randn(3, 1, heads, tokens, head_dim).unbind(0)
        baseline = _status_bytes("VmRSS")
        with open("/proc/self/clear_refs", "w") as clear_refs:
            clear_refs.write("5")  # reset the peak RSS to the current RSS
        attention_step(name, q, k, v)
        peak = _status_bytes("VmHWM")
    return max(0, peak - baseline)


def scaling(token_counts: list[int], heads: int, head_dim: int, min_run_time: float) -> dict:
    results: dict[str, dict[str, list[float]]] = {}
    for name in ("textbook", "fused", "tiled"):
        results[name] = {"tokens": token_counts, "time_s": [], "peak_bytes": []}
        for tokens in token_counts:
            q, k, v = torch.randn(3, 1, heads, tokens, head_dim).unbind(0)
            seconds = time_call(
                lambda q=q, k=k, v=v, n=name: attention_step(n, q, k, v), min_run_time
            )
            probe = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--memory-probe",
                    name,
                    str(tokens),
                    str(heads),
                    str(head_dim),
                ],
                check=True,
                capture_output=True,
                text=True,
            )
            peak = int(probe.stdout.strip())
            results[name]["time_s"].append(seconds)
            results[name]["peak_bytes"].append(peak)
            print(
                f"  {name:<9} T={tokens:>5}  {seconds * 1e3:9.2f} ms  "
                f"peak +{peak / 2**20:8.1f} MiB",
                flush=True,
            )
    return results


# --------------------------------------------------------------------------- report


def _ratio(modules: dict, a: str, b: str, mode: str = "forward_s") -> float:
    """Median over rounds of time(a) / time(b), each pair measured back to back."""
    pairs = zip(modules[a][mode], modules[b][mode], strict=True)
    return statistics.median(x / y for x, y in pairs)


def ratios(modules: dict, steps: dict) -> list[tuple[str, float, str | None, bool | None]]:
    """Each ratio with its target and whether it is met; None for a ratio shown for information.

    textbook / fused has no target: it measures the textbook class and the machine (how
    fast the kernel hands out pages for its score tensors), not the fused module.
    """
    fused_floor = _ratio(modules, "FusedMultiHeadAttention", "floor (inline SDPA)")
    fused_torch = _ratio(modules, "FusedMultiHeadAttention", "nn.MultiheadAttention")
    textbook_fused = _ratio(modules, "MultiHeadAttention", "FusedMultiHeadAttention")
    mem = dict(zip(steps["fused"]["tokens"], steps["fused"]["peak_bytes"], strict=True))
    mem_textbook = dict(
        zip(steps["textbook"]["tokens"], steps["textbook"]["peak_bytes"], strict=True)
    )
    largest = max(mem)
    growth = mem[largest] / max(mem[largest // 2], 1)
    share = mem[largest] / mem_textbook[largest]
    return [
        ("FusedMultiHeadAttention / floor, forward", fused_floor, "<= 1.05", fused_floor <= 1.05),
        (
            "FusedMultiHeadAttention / nn.MultiheadAttention, forward",
            fused_torch,
            "<= 0.9",
            fused_torch <= 0.9,
        ),
        ("MultiHeadAttention / FusedMultiHeadAttention, forward", textbook_fused, None, None),
        (
            f"fused step peak memory, {largest} / {largest // 2} tokens",
            growth,
            "<= 2 (linear or better)",
            growth <= 2.2,
        ),
        (
            f"fused / textbook step peak memory at {largest} tokens",
            share,
            "<= 1/20 = 0.05",
            share <= 0.05,
        ),
    ]


def plot(modules: dict, steps: dict, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, middle, right) = plt.subplots(1, 3, figsize=(16, 4.5), layout="constrained")
    names = list(modules)
    y = range(len(names))
    median_ms = {
        mode: [statistics.median(modules[n][mode]) * 1e3 for n in names]
        for mode in ("forward_s", "forward_backward_s")
    }
    left.barh([i + 0.2 for i in y], median_ms["forward_s"], 0.4, label="forward")
    left.barh(
        [i - 0.2 for i in y], median_ms["forward_backward_s"], 0.4, label="forward + backward"
    )
    left.set_yticks(list(y), names)
    left.invert_yaxis()
    left.set_xlabel("milliseconds (lower is better)")
    left.set_title("Whole module, GPT-2 small shape")
    left.legend()
    for name, result in steps.items():
        middle.plot(result["tokens"], [s * 1e3 for s in result["time_s"]], marker="o", label=name)
        right.plot(
            result["tokens"], [b / 2**20 for b in result["peak_bytes"]], marker="o", label=name
        )
    for axis, label in ((middle, "milliseconds"), (right, "peak extra memory, MiB")):
        axis.set_xscale("log", base=2)
        axis.set_yscale("log")
        axis.set_xticks(next(iter(steps.values()))["tokens"])
        axis.xaxis.set_major_formatter("{x:.0f}")
        axis.minorticks_off()
        axis.set_xlabel("tokens")
        axis.set_ylabel(label)
        axis.legend()
    middle.set_title("Attention step alone: time")
    right.set_title("Attention step alone: memory")
    fig.savefig(out, dpi=110)
    plt.close(fig)


def machine() -> dict:
    return {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "cuda": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small shapes, for a smoke test")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "bench")
    parser.add_argument(
        "--memory-probe", nargs=4, metavar=("NAME", "T", "H", "D"), help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)
    if args.memory_probe:
        name, tokens, heads, head_dim = args.memory_probe
        print(memory_probe(name, int(tokens), int(heads), int(head_dim)))
        return 0

    if args.quick:
        shape = {"batch": 2, "tokens": 256, "d_model": 256, "num_heads": 4}
        token_counts, min_run_time, rounds = [128, 256, 512], 0.2, 5
    else:
        shape = {"batch": 8, "tokens": 1024, "d_model": 768, "num_heads": 12}
        token_counts, min_run_time, rounds = [256, 512, 1024, 2048, 4096], 1.0, 9
    start = time.perf_counter()
    info = machine()
    print(
        f"machine: {info['processor']}, {info['cpu_count']} CPUs, {info['torch_threads']} "
        f"torch threads, torch {info['torch']}, Python {info['python']}"
    )
    report: dict = {"machine": info, "shape": shape, "dtype": "float32", "devices": {}}
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    if len(devices) == 1:
        print("CUDA: not available on this machine; measuring on the CPU only")
    for device in devices:
        print(
            f"\n[{device}] whole module, batch {shape['batch']}, {shape['tokens']} tokens, "
            f"d_model {shape['d_model']}, {shape['num_heads']} heads, float32"
        )
        report["devices"][device] = {"modules": module_times(shape, device, rounds)}
    head_dim = shape["d_model"] // shape["num_heads"]
    print(f"\n[cpu] attention step alone, batch 1, {shape['num_heads']} heads of {head_dim}")
    steps = scaling(token_counts, shape["num_heads"], head_dim, min_run_time)
    report["steps"] = steps

    print(f"\nratios (one run; median over {rounds} rounds of back-to-back calls):")
    checks = ratios(report["devices"]["cpu"]["modules"], steps)
    report["ratios"] = [
        {"ratio": label, "value": value, "target": target, "met": met}
        for label, value, target, met in checks
    ]
    for label, value, target, met in checks:
        verdict = (
            "information"
            if target is None
            else f"target {target:<16} " + ("met" if met else "NOT met")
        )
        print(f"  {label:<58} {value:8.3f}   {verdict}")

    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "attention.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
    plot(report["devices"]["cpu"]["modules"], steps, args.out / "attention.png")
    print(f"\nsaved {args.out / 'attention.json'} and {args.out / 'attention.png'}")
    print(f"({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
