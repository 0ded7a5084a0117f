"""Throughput of ``graphmatch predict RUN --input FILE`` against a bare forward loop, fp32 and int8.

For each model (the MiniLM relation classifier, ``relation/semeval_minilm_entity_start``, and the
K-BERT quick model, ``kbert/chnsenticorp_hownet_quick``) a run is trained for ``--steps``
optimiser steps (enough for throughput, not for accuracy: say so with the figures), then:

* **command**: ``python -m graphmatch.cli.main predict RUN --input LINES --output OUT`` in a fresh
  process on ``--lines`` input lines (the test split cycled), start-up, reading, encoding,
  batching and writing included; wall time;
* **bare loop**: the same model (:class:`graphmatch.engine.inference.predictor.Predictor`) over the same
  length-sorted batches, already encoded and collated, ``model(batch)`` only, in this process;

both in fp32 (``--precision 32-true``: a run's ``auto`` would mean bf16 on a CPU with bf16
units), and the ratio ``bare time / command time`` (1.0 = the command costs nothing beyond the forward
passes). With ``--in-process`` the command is ``graphmatch.cli.main.main([...])`` called in this
process after one warm-up call, so interpreter start-up and imports do not count; what remains is
reading the run folder, reading, encoding, batching, the forward passes and writing.
``--quantize int8`` runs both the same way. The int8 rows also give the share of inputs
whose label differs from fp32 and the accuracy of both on the gold labels of the lines. Every
process runs on ``--threads`` threads (``OMP_NUM_THREADS``, ``torch.set_num_threads``).

    PYTHONPATH=. python benchmarks/bench_predict.py --data-dir ../shared/data --threads 1
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path

MODELS = {
    "MiniLM relation (entity start)": ("relation/semeval_minilm_entity_start", []),
    "K-BERT quick (HowNet)": ("kbert/chnsenticorp_hownet_quick", []),
}


def _env(threads: int) -> dict[str, str]:
    return {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads),
            "PYTHONPATH": os.environ.get("PYTHONPATH", ".")}


def _cli(args: list[str], threads: int) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "graphmatch.cli.main", *args], check=True, env=_env(threads),
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def _in_process(args: list[str], threads: int) -> float:
    """Seconds of one ``graphmatch`` command called in this process (its stdout dropped)."""
    import contextlib
    import io

    from graphmatch.cli.main import main as cli_main

    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        if cli_main(args) != 0:
            raise SystemExit(f"graphmatch {' '.join(args)} failed")
    return time.perf_counter() - start


def train(recipe: str, out: Path, data_dir: Path, steps: int, threads: int) -> Path:
    if not (out / "best.ckpt").is_file():
        _cli(["train", recipe, "--out", str(out), "--set", f"data.root={data_dir}", "data.limit.train=512",
              "data.limit.dev=64", "data.limit.test=64", f"train.max_steps={steps}", "train.epochs=1",
              f"train.threads={threads}", "train.progress=false"], threads)
    return out


def relation_lines(data_dir: Path, n: int) -> tuple[list[str], list[str]]:
    from graphmatch.data.relation_formats import read_semeval_file

    path = data_dir / "semeval2010_task8" / "TEST_FILE_FULL.TXT"
    raw = path.read_text(encoding="utf-8").splitlines()
    examples = read_semeval_file(path)
    lines = [raw[e.line - 1].strip() for e in examples]  # ID<TAB>"marked sentence", as in the file
    golds = [e.label for e in examples]
    return _cycle(lines, n), _cycle(golds, n)


def kbert_lines(data_dir: Path, n: int) -> tuple[list[str], list[str]]:
    rows = (data_dir / "kbert" / "datasets" / "chnsenticorp" / "test.tsv").read_text(encoding="utf-8").splitlines()
    pairs = [r.split("\t", 1) for r in rows[1:] if "\t" in r]
    return _cycle([t.replace("\t", " ") for _, t in pairs], n), _cycle([label for label, _ in pairs], n)


def _cycle(items: list[str], n: int) -> list[str]:
    return list(itertools.islice(itertools.cycle(items), n))


def bare_loop(run: Path, lines: list[str], quantize: str | None, batch_size: int) -> tuple[float, float]:
    """Seconds of the forward passes alone over the predictor's batches, and of encoding them."""
    import torch

    from graphmatch.engine.inference.predictor import Predictor

    predictor = Predictor.from_run(run, batch_size=batch_size, quantize=quantize, precision="32-true")
    start = time.perf_counter()
    graphs, _ = predictor.encode([tuple(predictor.task.input_fields(line.split("\t"))) for line in lines])
    batches = predictor.batches(graphs)
    encode = time.perf_counter() - start
    with torch.inference_mode():
        predictor.model(batches[0][1])  # warm-up
        start = time.perf_counter()
        for _, batch in batches:
            predictor.model(batch)
    return time.perf_counter() - start, encode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--work", type=Path, default=Path("/tmp/bench_predict"))
    parser.add_argument("--lines", type=int, default=10_000)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--only", choices=["relation", "kbert"])
    parser.add_argument("--in-process", action="store_true",
                        help="call the predict command in this process after a warm-up (start-up not counted)")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    args.work.mkdir(parents=True, exist_ok=True)
    results = []
    for name, (recipe, _) in MODELS.items():
        kind = recipe.split("/")[0]
        if args.only and args.only != kind:
            continue
        run = train(recipe, args.work / kind, args.data_dir, args.steps, args.threads)
        lines, golds = (relation_lines if kind == "relation" else kbert_lines)(args.data_dir, args.lines)
        inputs = args.work / f"{kind}_lines.tsv"
        inputs.write_text("\n".join(lines) + "\n", encoding="utf-8")
        labels = {}
        command_of = _in_process if args.in_process else _cli
        for quantize in (None, "int8"):
            out = args.work / f"{kind}_{quantize or 'fp32'}.jsonl"
            predict = ["predict", str(run), "--input", str(inputs), "--output", str(out), "--no-progress",
                       "--batch-size", str(args.batch_size), "--precision", "32-true",
                       *(["--quantize", quantize] if quantize else [])]
            if args.in_process:  # warm-up: imports and first touches, then the timed call
                _in_process(predict, args.threads)
            command = command_of(predict, args.threads)
            bare, encode = bare_loop(run, lines, quantize, args.batch_size)
            rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
            labels[quantize] = [r["label"] for r in rows]
            accuracy = 100 * sum(p == g for p, g in zip(labels[quantize], golds, strict=True)) / len(golds)
            result = {"model": name, "precision": quantize or "fp32", "lines": len(lines),
                      "command_s": round(command, 2), "command_lines_per_s": round(len(lines) / command, 1),
                      "bare_s": round(bare, 2), "bare_lines_per_s": round(len(lines) / bare, 1),
                      "encode_s": round(encode, 2), "ratio": round(bare / command, 3),
                      "accuracy": round(accuracy, 2)}
            if quantize:
                fp32 = next(r for r in results if r["model"] == name and r["precision"] == "fp32")
                result["speedup_command"] = round(fp32["command_s"] / command, 2)
                result["speedup_bare"] = round(fp32["bare_s"] / bare, 2)
                result["labels_changed_pct"] = round(100 * sum(
                    a != b for a, b in zip(labels[None], labels[quantize], strict=True)) / len(lines), 2)
            results.append(result)
            print(json.dumps(result, ensure_ascii=False), flush=True)
    out = args.work / f"results_{args.only or 'all'}_{args.lines}{'_in_process' if args.in_process else ''}.json"
    out.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
