"""Cold start of the ``graphmatch`` command: wall time and peak memory of one-line commands.

Each case runs ``python -m graphmatch.cli.main ...`` (what the ``graphmatch`` script runs) in a
fresh process, ``--runs`` times, with its input on stdin, and reports the median wall time and
its median CPU time and the median peak resident memory of that process (``os.wait4``'s
``ru_maxrss``). One more run under ``python -X importtime`` gives the import-time breakdown, which
depends less on other work on the machine; the load average before and after is printed with the
figures, since a shared machine slows everything down.

    PYTHONPATH=. python benchmarks/bench_startup.py --data-dir ../shared/data --runs 5
    PYTHONPATH=. python benchmarks/bench_startup.py --data-dir ../shared/data --repo OLD_CHECKOUT

Two cases need more than a sentence: ``train`` refusing a recipe with an unknown key (exit 2,
expected) and ``predict RUN "text"`` (a K-BERT quick run trained for a few steps into ``--work``
when ``--run`` is not given). ``python -c "import torch"`` and ``"import lightning"`` run beside
them, so that a command's figures read against what loading torch and Lightning alone costs.

``--repo`` measures another checkout (e.g. an older commit, for a before/after comparison); the
commands run in it (``python -m`` puts the working folder first on ``sys.path``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

#: case -> (command-line arguments after ``graphmatch``, stdin); ``RUN`` stands for the trained run,
#: a first argument ``-c`` runs ``python -c CODE`` instead of the command
CASES: dict[str, tuple[list[str], str]] = {
    "inspect kbert --kg hownet (one sentence)": (["inspect", "kbert", "--kg", "hownet", "-"], "我在北京吃苹果\n"),
    "inspect let (one pair, lattice of 3 segmenters, HowNet senses)": (
        ["inspect", "let", "-"], "南京市长江大桥\t长江大桥在南京\n"),
    "graphmatch --help": (["--help"], ""),
    "a recipe with an unknown key, refused (exit 2)": (
        ["train", "kbert/chnsenticorp_hownet_quick", "--set", "train.epoch=2"], ""),
    "predict one text with a K-BERT quick run": (["predict", "RUN", "这家酒店的服务很好，房间也干净"], ""),
    "python -c 'import torch' (for comparison)": (["-c", "import torch"], ""),
    "python -c 'import lightning' (for comparison)": (["-c", "import lightning"], ""),
}
#: exit statuses a case may end with (a refused recipe exits 2)
EXPECTED = {"a recipe with an unknown key, refused (exit 2)": 2}
#: modules whose cumulative import time is reported (when imported at all)
MODULES = ("torch", "torch_geometric", "torch._dynamo", "torch_geometric.datasets", "transformers", "lightning",
           "graphmatch.graphs.kbert", "graphmatch.graphs.let", "graphmatch.knowledge", "jieba", "thulac", "pkuseg")


def command(argv: list[str]) -> list[str]:
    """The process a case runs: ``python -m graphmatch.cli.main ARGV``, or ``python -c CODE``."""
    return [sys.executable, *argv] if argv[:1] == ["-c"] else [sys.executable, "-m", "graphmatch.cli.main", *argv]


def warm_up(argv: list[str], stdin: str, env: dict[str, str], expected: int = 0) -> None:
    """One run, unmeasured: fills the file cache and the processed-data caches."""
    proc = subprocess.run(command(argv), input=stdin.encode(), env=env, cwd=env["PYTHONPATH"], capture_output=True)
    if proc.returncode != expected:
        raise SystemExit(f"graphmatch {' '.join(argv)} failed:\n{proc.stderr.decode(errors='replace')[-2000:]}")


#: runs the command given in its arguments and prints [wall s, CPU s, peak RSS MiB, exit status, stderr]:
#: a measuring process per run, so that wait4 reports this command's peak alone
_MEASURE = (
    "import json, os, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "p = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n"
    "p.stdin.write(sys.stdin.buffer.read()); p.stdin.close(); err = p.stderr.read()\n"
    "_, status, usage = os.wait4(p.pid, 0)\n"
    "print(json.dumps([time.perf_counter() - t, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, status,\n"
    "                  err.decode()[-2000:]]))\n"
)


def measure(argv: list[str], stdin: str, env: dict[str, str], runs: int,
            expected: int = 0) -> tuple[float, float, float]:
    """Median wall seconds, CPU seconds (user + system) and peak RSS (MiB) over ``runs`` fresh
    processes. On an idle machine the wall time is about the CPU time; on a loaded one the CPU
    time is the steadier figure."""
    walls, cpus, peaks = [], [], []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", _MEASURE, *command(argv)],
                             input=stdin.encode(), env=env, cwd=env["PYTHONPATH"], capture_output=True,
                             check=True).stdout
        wall, cpu, peak, status, err = json.loads(out)
        if os.waitstatus_to_exitcode(status) != expected:
            raise SystemExit(f"graphmatch {' '.join(argv)} failed:\n{err}")
        walls.append(wall)
        cpus.append(cpu)
        peaks.append(peak)
    return statistics.median(walls), statistics.median(cpus), statistics.median(peaks)


def import_times(argv: list[str], stdin: str, env: dict[str, str]) -> dict[str, float]:
    """Cumulative import seconds of :data:`MODULES` in one run under ``-X importtime``."""
    proc = subprocess.run([sys.executable, "-X", "importtime", *command(argv)[1:]],
                          input=stdin.encode(), env=env, cwd=env["PYTHONPATH"], capture_output=True)
    found: dict[str, float] = {}
    total = 0.0
    for line in proc.stderr.decode(errors="replace").splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if not m:
            continue
        cumulative, depth, name = int(m.group(2)) / 1e6, len(m.group(3)), m.group(4)
        if depth <= 1:
            total += cumulative
        if name in MODULES:
            found[name] = max(found.get(name, 0.0), cumulative)
    found["(all imports)"] = total
    return found


def trained_run(work: Path, env: dict[str, str]) -> Path:
    """A K-BERT quick run of a few optimiser steps (start-up does not depend on its accuracy)."""
    out = work / "kbert_quick"
    if not (out / "COMPLETE").is_file():
        subprocess.run([sys.executable, "-m", "graphmatch.cli.main", "train", "kbert/chnsenticorp_hownet_quick",
                        "--out", str(out), "--set", "data.limit.train=64", "data.limit.dev=32", "data.limit.test=32",
                        "train.max_steps=2", "train.epochs=1", "train.progress=false"],
                       env=env, cwd=env["PYTHONPATH"], check=True, stdout=subprocess.DEVNULL)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", required=True, help="data root (HowNet, the BERT vocabulary)")
    parser.add_argument("--runs", type=int, default=5, help="processes per case; the median is reported")
    parser.add_argument("--repo", default=str(Path(__file__).resolve().parents[1]),
                        help="the checkout to measure (default: this one)")
    parser.add_argument("--cases", nargs="+", choices=range(len(CASES)), type=int, default=list(range(len(CASES))),
                        help="case numbers to run (default: all)")
    parser.add_argument("--run", help="the run folder predict uses (default: a K-BERT quick run trained into --work)")
    parser.add_argument("--work", default="bench_startup_work", help="where that run is trained (kept for reuse)")
    args = parser.parse_args()
    repo = str(Path(args.repo).resolve())
    env = {**os.environ, "PYTHONPATH": repo, "GRAPHMATCH_DATA": str(Path(args.data_dir).resolve())}
    names = list(CASES)
    run = args.run
    if run is None and any("RUN" in CASES[names[k]][0] for k in args.cases):
        run = str(trained_run(Path(args.work).resolve(), env))
    cases = {name: ([run if a == "RUN" else a for a in argv], stdin) for name, (argv, stdin) in CASES.items()}
    print(f"checkout {repo}; python {sys.version.split()[0]}; {os.cpu_count()} CPUs; "
          f"load average before {os.getloadavg()[0]:.2f}")
    print("\n| command | wall (median) | CPU user+sys (median) | peak RSS (median) |\n|---|---|---|---|")
    for k in args.cases:
        argv, stdin = cases[names[k]]
        warm_up(argv, stdin, env, EXPECTED.get(names[k], 0))
        wall, cpu, peak = measure(argv, stdin, env, args.runs, EXPECTED.get(names[k], 0))
        shown = f"python {' '.join(argv)}" if argv[:1] == ["-c"] else f"graphmatch {' '.join(argv)}"
        print(f"| `{shown}` ({names[k]}) | {wall:.2f} s | {cpu:.2f} s | {peak:.0f} MiB |", flush=True)
    print(f"\nload average after {os.getloadavg()[0]:.2f}")
    print("\nImport time (cumulative seconds, one run under -X importtime; '-' = not imported):\n")
    print("| command | " + " | ".join(MODULES) + " | all imports |\n|---|" + "---|" * (len(MODULES) + 1))
    for k in args.cases:
        argv, stdin = cases[names[k]]
        times = import_times(argv, stdin, env)
        cells = [f"{times[m]:.2f}" if m in times else "-" for m in MODULES]
        print(f"| `{' '.join(argv)}` | " + " | ".join(cells) + f" | {times['(all imports)']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
