"""Cold start of the ``graphmatch`` command: wall time and peak memory of one-line commands.

Each case runs ``python -m graphmatch.cli.main ...`` (what the ``graphmatch`` script runs) in a
fresh process, ``--runs`` times, with its input on stdin, and reports the median wall time and
its median CPU time and the median peak resident memory of that process (``os.wait4``'s
``ru_maxrss``). One more run under ``python -X importtime`` gives the import-time breakdown, which
depends less on other work on the machine; the load average before and after is printed with the
figures, since a shared machine slows everything down.

    PYTHONPATH=. python benchmarks/bench_startup.py --data-dir ../shared/data --runs 5
    PYTHONPATH=. python benchmarks/bench_startup.py --data-dir ../shared/data --repo OLD_CHECKOUT

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

#: case -> (command-line arguments after ``graphmatch``, stdin)
CASES: dict[str, tuple[list[str], str]] = {
    "inspect kbert --kg hownet (one sentence)": (["inspect", "kbert", "--kg", "hownet", "-"], "我在北京吃苹果\n"),
    "inspect let (one pair, lattice of 3 segmenters, HowNet senses)": (
        ["inspect", "let", "-"], "南京市长江大桥\t长江大桥在南京\n"),
    "graphmatch --help": (["--help"], ""),
}
#: modules whose cumulative import time is reported (when imported at all)
MODULES = ("torch", "torch_geometric", "torch._dynamo", "torch_geometric.datasets", "transformers", "lightning",
           "graphmatch.graphs.kbert", "graphmatch.graphs.let", "graphmatch.knowledge", "jieba", "thulac", "pkuseg")


def warm_up(argv: list[str], stdin: str, env: dict[str, str]) -> None:
    """One run, unmeasured: fills the file cache and the processed-data caches."""
    proc = subprocess.run([sys.executable, "-m", "graphmatch.cli.main", *argv], input=stdin.encode(), env=env,
                          cwd=env["PYTHONPATH"], capture_output=True)
    if proc.returncode:
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


def measure(argv: list[str], stdin: str, env: dict[str, str], runs: int) -> tuple[float, float, float]:
    """Median wall seconds, CPU seconds (user + system) and peak RSS (MiB) over ``runs`` fresh
    processes. On an idle machine the wall time is about the CPU time; on a loaded one the CPU
    time is the steadier figure."""
    walls, cpus, peaks = [], [], []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", _MEASURE, sys.executable, "-m", "graphmatch.cli.main", *argv],
                             input=stdin.encode(), env=env, cwd=env["PYTHONPATH"], capture_output=True,
                             check=True).stdout
        wall, cpu, peak, status, err = json.loads(out)
        if status:
            raise SystemExit(f"graphmatch {' '.join(argv)} failed:\n{err}")
        walls.append(wall)
        cpus.append(cpu)
        peaks.append(peak)
    return statistics.median(walls), statistics.median(cpus), statistics.median(peaks)


def import_times(argv: list[str], stdin: str, env: dict[str, str]) -> dict[str, float]:
    """Cumulative import seconds of :data:`MODULES` in one run under ``-X importtime``."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "graphmatch.cli.main", *argv],
                          input=stdin.encode(), env=env, cwd=env["PYTHONPATH"], capture_output=True, check=True)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", required=True, help="data root (HowNet, the BERT vocabulary)")
    parser.add_argument("--runs", type=int, default=5, help="processes per case; the median is reported")
    parser.add_argument("--repo", default=str(Path(__file__).resolve().parents[1]),
                        help="the checkout to measure (default: this one)")
    parser.add_argument("--cases", nargs="+", choices=range(len(CASES)), type=int, default=list(range(len(CASES))),
                        help="case numbers to run (default: all)")
    args = parser.parse_args()
    repo = str(Path(args.repo).resolve())
    env = {**os.environ, "PYTHONPATH": repo, "GRAPHMATCH_DATA": str(Path(args.data_dir).resolve())}
    names = list(CASES)
    print(f"checkout {repo}; python {sys.version.split()[0]}; {os.cpu_count()} CPUs; "
          f"load average before {os.getloadavg()[0]:.2f}")
    print("\n| command | wall (median) | CPU user+sys (median) | peak RSS (median) |\n|---|---|---|---|")
    for k in args.cases:
        argv, stdin = CASES[names[k]]
        warm_up(argv, stdin, env)
        wall, cpu, peak = measure(argv, stdin, env, args.runs)
        print(f"| `graphmatch {' '.join(argv)}` ({names[k]}) | {wall:.2f} s | {cpu:.2f} s | {peak:.0f} MiB |",
              flush=True)
    print(f"\nload average after {os.getloadavg()[0]:.2f}")
    print("\nImport time (cumulative seconds, one run under -X importtime; '-' = not imported):\n")
    print("| command | " + " | ".join(MODULES) + " | all imports |\n|---|" + "---|" * (len(MODULES) + 1))
    for k in args.cases:
        argv, stdin = CASES[names[k]]
        times = import_times(argv, stdin, env)
        cells = [f"{times[m]:.2f}" if m in times else "-" for m in MODULES]
        print(f"| `{' '.join(argv)}` | " + " | ".join(cells) + f" | {times['(all imports)']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
