"""Writing a resumable checkpoint: the engine's writer against Lightning's own, in one process.

A checkpoint with the parameter shapes of a model (e5-small by default: 118 M parameters, with
AdamW's two moments, 1.4 GB) is written ``--rounds`` times by each writer in turn (A B A B), into
``--out`` (default: a temporary folder), and each pair's time is reported with its ratio:

* **Lightning** ``TorchCheckpointIO.save_checkpoint``: serialises the whole checkpoint into an
  in-memory buffer, then copies the buffer into the file;
* **graphmatch** ``AtomicCheckpointIO.save_checkpoint``: ``torch.save`` straight into a temporary
  file, flushed to disk (``fsync``) and renamed (what every run writes).

Wall and process CPU seconds are both given (the flush to disk is wall time, not CPU), with the
process's peak memory after each writer's first round (``ru_maxrss`` only grows, so the writer run
first shows its own peak; run twice with ``--first`` swapped to see both).

    PYTHONPATH=. python benchmarks/bench_checkpoint_write.py --rounds 4
    PYTHONPATH=. python benchmarks/bench_checkpoint_write.py --params 1000000 --rounds 2   # a moment
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

#: e5-small (multilingual-e5-small, as graphmatch converts it): 197 tensors, the word table 250,002 x 384 most of it
E5_SMALL = 117_492_480


def checkpoint(params: int, tensors: int = 200) -> dict:
    """A Lightning-style checkpoint of ``params`` parameters in ``tensors`` tensors, with AdamW's
    ``exp_avg`` and ``exp_avg_sq`` for each."""
    sizes = [params // tensors] * tensors
    sizes[0] += params - sum(sizes)
    weights = {f"layer{i}.weight": torch.randn(n) for i, n in enumerate(sizes)}
    state = {i: {"step": torch.tensor(3.0), "exp_avg": torch.randn(n), "exp_avg_sq": torch.rand(n)}
             for i, n in enumerate(sizes)}
    return {"state_dict": weights, "optimizer_states": [{"state": state, "param_groups": [{"params": list(state)}]}],
            "global_step": 3, "epoch": 0}


def writers() -> dict:
    from lightning.pytorch.plugins.io import TorchCheckpointIO

    from graphmatch.engine.training.trainer import AtomicCheckpointIO

    return {"lightning": TorchCheckpointIO(), "graphmatch": AtomicCheckpointIO()}


def timed(write, ckpt: dict, path: Path) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    write(ckpt, path)
    return time.perf_counter() - wall, time.process_time() - cpu


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--params", type=int, default=E5_SMALL, help="parameters (default: e5-small's)")
    parser.add_argument("--rounds", type=int, default=4, help="pairs of writes")
    parser.add_argument("--first", choices=("lightning", "graphmatch"), default="lightning")
    parser.add_argument("--out", type=Path, help="folder to write into (default: a temporary one)")
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    ckpt = checkpoint(args.params)
    found = writers()
    order = [args.first, *(name for name in found if name != args.first)]
    with tempfile.TemporaryDirectory(dir=args.out) as folder:
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in order}
        peak: dict[str, float] = {}
        for _ in range(args.rounds):
            for name in order:
                path = Path(folder) / f"{name}.ckpt"
                times[name].append(timed(found[name].save_checkpoint, ckpt, path))
                peak.setdefault(name, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20)
                size = path.stat().st_size
                path.unlink()
        assert torch.equal(torch.load(_write_one(found["graphmatch"], ckpt, folder), weights_only=True)
                           ["state_dict"]["layer1.weight"], ckpt["state_dict"]["layer1.weight"])
    ratios = [a[0] / b[0] for a, b in zip(times["lightning"], times["graphmatch"], strict=True)]
    print(f"checkpoint of {args.params:,} parameters with AdamW's state: {size / 1e9:.2f} GB, {args.rounds} pairs, "
          f"load {os.getloadavg()[0]:.2f}")
    for name in order:
        walls, cpus = zip(*times[name], strict=True)
        print(f"  {name:10s} wall {' '.join(f'{w:.2f}' for w in walls)} s (median {statistics.median(walls):.2f}), "
              f"CPU median {statistics.median(cpus):.2f} s, peak memory after its first write {peak[name]:.2f} GB")
    print(f"  lightning / graphmatch, pair by pair: {' '.join(f'{r:.2f}x' for r in ratios)}")
    return {"size": size, "times": times, "ratios": ratios}


def _write_one(writer, ckpt: dict, folder: str) -> Path:
    path = Path(folder) / "check.ckpt"
    writer.save_checkpoint(ckpt, path)
    return path


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
