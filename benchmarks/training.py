"""Benchmark of training on a busy machine: `nox -s bench`.

Times ``train_induction()`` at its defaults (the chapter "What attention learns") twice in
one run: on a quiet machine, then while two other processes each keep a core busy
(``python -c 'while True: pass'``), as on a shared CI runner or a laptop that builds while
it does other work. Training chooses its own threads (one, `TRAINING_THREADS`), so the
loaded time should grow in proportion to the share of a core it gets, not many times over.
For comparison, the same steps on the process's default number of threads are timed
under the same load (``--threads-too``; slow where threads wait on each other).

    python benchmarks/training.py [--quick] [--threads-too] [--out DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import torch

from attention_mechanisms import induction

ROOT = Path(__file__).resolve().parents[1]
LOAD = 2  # busy processes beside the training, as in issue 44's measurement


@contextlib.contextmanager
def busy(count: int) -> Iterator[None]:
    """``count`` processes that each keep a core busy, until the block ends."""
    spin = [sys.executable, "-c", "while True: pass"]
    processes = [subprocess.Popen(spin) for _ in range(count)]
    try:
        time.sleep(0.5)  # let them start spinning
        yield
    finally:
        for process in processes:
            process.kill()
            process.wait()


def timed(steps: int | None, threads: int | None = None) -> float:
    """Seconds for ``train_induction`` (its default steps unless ``steps``); with ``threads``,
    on that many threads instead of its own choice."""
    kwargs = {} if steps is None else {"steps": steps}
    patch = (
        mock.patch.object(induction, "TRAINING_THREADS", threads)
        if threads is not None
        else contextlib.nullcontext()
    )
    with patch:
        start = time.perf_counter()
        induction.train_induction(**kwargs)
        return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="500 steps, for a smoke test")
    parser.add_argument(
        "--threads-too",
        action="store_true",
        help="also time the default number of torch threads under load (can take many minutes)",
    )
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "bench")
    args = parser.parse_args(argv)
    steps = 500 if args.quick else None
    label = "500 steps" if args.quick else "its defaults"
    print(
        f"train_induction() at {label}; {os.cpu_count()} cores, {platform.machine()}, "
        f"torch {torch.__version__}, {induction.TRAINING_THREADS} training thread(s)"
    )
    results = {"quiet_s": timed(steps)}
    print(f"  quiet:                      {results['quiet_s']:7.1f} s", flush=True)
    with busy(LOAD):
        results["loaded_s"] = timed(steps)
        print(f"  {LOAD} busy processes beside it: {results['loaded_s']:7.1f} s", flush=True)
        if args.threads_too:
            default = torch.get_num_threads()
            results[f"loaded_{default}_threads_s"] = timed(steps, default)
            print(
                f"  the same, on {default} threads:  "
                f"{results[f'loaded_{default}_threads_s']:7.1f} s"
            )
    print(f"  loaded / quiet: {results['loaded_s'] / results['quiet_s']:.2f}")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "training.json").write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
