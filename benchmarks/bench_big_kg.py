"""A knowledge graph of CN-DBpedia's size against HowNet's: load time and peak memory from text
and from the cache, and the per-sentence K-Query cost (issue 45, item 4).

Every measurement runs in a fresh ``python`` process, so that its peak RSS (``os.wait4``'s
``ru_maxrss`` of that child alone) is the load's and the query's, not this script's:

* *text*: ``KnowledgeGraph.from_spo`` with an empty cache (parse, ids, CSR values, the subjects'
  trie, written to the cache);
* *cache*: the same call again, which reads the arrays memory-mapped;
* *trie query*, *words query*: after a load from the cache, ``--sentences`` ChnSentiCorp test
  sentences one at a time, as ``predict`` meets them: the trie's longest subject at every offset,
  taken greedily left to right, and the values of each match (``kg.values``); or the jieba words
  of the sentence (segmented before the clock starts: the same for both graphs) that are subjects,
  and their values. The graph's memo of looked-up subjects starts empty.

Load times are wall seconds inside the child (the interpreter's start and imports excluded),
beside the CPU seconds of the whole child (start-up included: on a shared machine the wall
time follows the load, the CPU time much less). Run::

    python benchmarks/make_big_kg.py --triples 5000000 --out big.spo
    PYTHONPATH=. python benchmarks/bench_big_kg.py --kg big.spo
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, sys, time
import numpy as np
from graphmatch.knowledge import KnowledgeGraph

job, kg_path, sentences_file = sys.argv[1], sys.argv[2], sys.argv[3]
start = time.perf_counter()
kg = KnowledgeGraph.from_spo(kg_path)
out = {"load_s": time.perf_counter() - start, "from_cache": kg.from_cache, "subjects": len(kg)}
if job != "load":
    sentences = json.load(open(sentences_file, encoding="utf-8"))
    trie = kg.flat_trie()
    hits = 0
    start = time.perf_counter()
    if job == "trie":
        for text in sentences["texts"]:
            codes = np.fromiter(map(ord, text), dtype=np.int64, count=len(text))
            length, word = trie.longest(codes, np.full(len(codes), len(codes), dtype=np.int64))
            reached = 0
            for i, n, w in zip(length.nonzero()[0].tolist(), length[length > 0].tolist(),
                               word[length > 0].tolist()):  # greedy, left to right
                if i >= reached:
                    hits += len(kg.values(trie.words[w]))
                    reached = i + n
    else:
        for words in sentences["words"]:
            for word in words:
                if word in kg:
                    hits += len(kg.values(word))
    out.update(query_us=(time.perf_counter() - start) / len(sentences["texts"]) * 1e6, values=hits)
print(json.dumps(out))
"""


def run_child(job: str, kg: str, sentences: Path, env: dict[str, str]) -> dict:
    """One job in a fresh process: its JSON line and its own peak RSS (GB)."""
    proc = subprocess.Popen([sys.executable, "-c", CHILD, job, kg, str(sentences)], env=env,
                            stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{job} on {kg} failed with exit code {proc.returncode}")
    result = json.loads(out.strip().splitlines()[-1])
    result["peak_gb"] = usage.ru_maxrss / 1e6  # KiB on Linux
    result["cpu_s"] = usage.ru_utime + usage.ru_stime  # the whole process, start-up included
    return result


def sentences_file(data: Path, count: int, folder: Path) -> Path:
    """The first ``count`` ChnSentiCorp test sentences and their jieba words, as JSON."""
    from graphmatch.text.segmenters import get_segmenter

    lines = (data / "kbert/datasets/chnsenticorp/test.tsv").read_text(encoding="utf-8").splitlines()[1:]
    texts = [line.split("\t", 1)[1] for line in lines[:count]]
    segment = get_segmenter("jieba").segment
    path = folder / "sentences.json"
    path.write_text(json.dumps({"texts": texts, "words": [[w.word for w in segment(t)] for t in texts]},
                               ensure_ascii=False), encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kg", required=True, help="the big .spo file (benchmarks/make_big_kg.py)")
    parser.add_argument("--sentences", type=int, default=1200, help="ChnSentiCorp test sentences (default all 1,200)")
    parser.add_argument("--data-dir", default=os.environ.get("GRAPHMATCH_DATA", "../shared/data"))
    args = parser.parse_args(argv)
    data = Path(args.data_dir)
    hownet = str(data / "kbert/kgs/HowNet.spo")
    with tempfile.TemporaryDirectory(prefix="bench_big_kg_") as tmp:
        env = {**os.environ, "GRAPHMATCH_CACHE": tmp, "OMP_NUM_THREADS": "1"}  # an empty cache
        sentences = sentences_file(data, args.sentences, Path(tmp))
        rows = []
        for name, path in (("HowNet", hownet), (Path(args.kg).name, args.kg)):
            text, cached = run_child("load", path, sentences, env), run_child("load", path, sentences, env)
            assert not text["from_cache"] and cached["from_cache"]
            trie, words = run_child("trie", path, sentences, env), run_child("words", path, sentences, env)
            rows.append((name, text, cached, trie, words))
    print("| KG | subjects | from text: wall s (process CPU s) / peak GB | from the cache: wall s (process CPU s) / "
          "peak GB | trie query: µs a sentence (peak GB) | words query: µs a sentence (peak GB) |\n"
          "|---|---|---|---|---|---|")
    for name, text, cached, trie, words in rows:
        print(f"| {name} | {text['subjects']:,} | {text['load_s']:.1f} ({text['cpu_s']:.1f}) / {text['peak_gb']:.2f} | "
              f"{cached['load_s']:.2f} ({cached['cpu_s']:.1f}) / {cached['peak_gb']:.2f} | "
              f"{trie['query_us']:.0f} ({trie['peak_gb']:.2f}) | {words['query_us']:.0f} ({words['peak_gb']:.2f}) |")
    base, big = rows[0], rows[1]
    ratio = [big[k]["query_us"] / base[k]["query_us"] for k in (3, 4)]
    print(f"\n{args.sentences} sentences; big / HowNet per sentence: trie {ratio[0]:.2f}×, words {ratio[1]:.2f}×")


if __name__ == "__main__":
    main()
