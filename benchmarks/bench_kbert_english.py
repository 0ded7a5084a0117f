"""English K-BERT over word pieces: knowledge coverage on SemEval-2010 Task 8 and SST-2, and tree
building speed against the Chinese builder, measured side by side in one run.

* **coverage**: :func:`graphmatch.graphs.kbert.collated_coverage` of the corpus builder
  (WordNet graph ``kg: wordnet``, MiniLM's word pieces, ``max_length`` 256): the share of
  sentences with at least one branch and branches per sentence, after the cut. SemEval's
  sentences are read with :func:`graphmatch.data.relation_formats.read_semeval_file` (entity
  markers stripped); for them also the share of entity mentions that lie inside a matched word.
  Each language's graph on the other language's text shows what the wrong-language warning
  (:meth:`~graphmatch.graphs.kbert.Coverage.warning`) sees.
* **speed**: :class:`~graphmatch.graphs.kbert.TreeCorpusBuilder` on the first ``--n``
  sentences of SST-2 train and of SemEval train (WordNet, word pieces) and of ChnSentiCorp train
  (HowNet, Google's Chinese characters); they take turns for ``--rounds`` rounds. *cold* is the first round of
  a fresh builder (its memos and K-Query trie filled then), *warm* the median of the others.
  Each round is timed in wall-clock and in CPU time (``time.process_time``, all threads); the
  ratio is the English builder's warm time per sentence over the Chinese builder's, the same
  clock, the same run (the figure of the English-trees goal, ≤ 1.5×).

Run (prints Markdown tables)::

    PYTHONPATH=. python benchmarks/bench_kbert_english.py --data-dir ../shared/data
    PYTHONPATH=. python benchmarks/bench_kbert_english.py --speed-only --rounds 9   # the speed table only
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np

from graphmatch.data.relation_formats import read_semeval_file
from graphmatch.graphs.kbert import SentenceTreeBuilder, TreeCorpusBuilder, TreeOptions, collated_coverage
from graphmatch.knowledge import KnowledgeGraph
from graphmatch.pretrained import resolve_pretrained
from graphmatch.text import CharTokenizer, WordPieceTokenizer


def read_column(path: Path, column: str) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    index = lines[0].split("\t").index(column)
    return [line.split("\t")[index] for line in lines[1:] if line.strip()]


def mention_coverage(builder: SentenceTreeBuilder, examples) -> float:
    """The share of entity mentions (e1, e2) inside a word that got a branch."""
    data, slices = TreeCorpusBuilder(builder)([ex.sentence.text for ex in examples])
    spans, ptr = data["word"].span.numpy(), slices["word"]["span"].numpy()
    hit = 0
    for i, ex in enumerate(examples):
        words = spans[ptr[i]:ptr[i + 1]]
        for start, end in (ex.sentence.e1, ex.sentence.e2):
            hit += bool(((words[:, 0] < end) & (words[:, 1] > start)).any())
    return hit / (2 * len(examples))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", type=Path, default=Path(os.environ.get("GRAPHMATCH_DATA", "data")))
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--max-length", type=int, default=256)
    parser.add_argument("--speed-only", action="store_true", help="skip the coverage tables")
    args = parser.parse_args()
    root = args.data_dir
    wordnet, hownet = KnowledgeGraph.load("wordnet"), KnowledgeGraph.load("hownet", root)
    pieces = WordPieceTokenizer.from_pretrained(resolve_pretrained("minilm").path)
    chars = CharTokenizer(root / "kbert/vocab/google_vocab.txt")
    semeval = read_semeval_file(root / "semeval2010_task8/TRAIN_FILE.TXT")
    sst2 = read_column(root / "sst2/train.tsv", "sentence")
    chnsenticorp = read_column(root / "kbert/datasets/chnsenticorp/train.tsv", "text_a")

    def english(kg=wordnet):
        return SentenceTreeBuilder(kg, pieces, TreeOptions(max_length=args.max_length))

    def chinese(kg=hownet):
        return SentenceTreeBuilder(kg, chars, TreeOptions(max_length=args.max_length))

    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, one process; "
          f"max_length {args.max_length}\n")
    if not args.speed_only:
        coverage_tables(english, chinese, wordnet, hownet, semeval, sst2, chnsenticorp)
    speed_table(args, english, chinese, semeval, sst2, chnsenticorp)


def coverage_tables(english, chinese, wordnet, hownet, semeval, sst2, chnsenticorp) -> None:
    print("| corpus | sentences | knowledge | tokenizer | with ≥ 1 branch | branches per sentence | tokens matched |")
    print("|---|---|---|---|---|---|---|")
    rows = [("SemEval-2010 Task 8 train", [ex.sentence.text for ex in semeval], "wordnet", english),
            ("SST-2 train", sst2, "wordnet", english),
            ("ChnSentiCorp train", chnsenticorp, "hownet", chinese),
            ("SST-2 train", sst2, "hownet (wrong language)", lambda: chinese(hownet)),
            ("ChnSentiCorp train", chnsenticorp, "wordnet (wrong language)", lambda: english(wordnet))]
    warnings = []
    for name, texts, kg_name, make in rows:
        builder = make()
        coverage = collated_coverage(TreeCorpusBuilder(builder)(texts)[1])
        tokenizer = "MiniLM word pieces" if builder.finder.tokenization == "wordpiece" else "Google Chinese characters"
        print(f"| {name} | {coverage.inputs:,} | {kg_name} | {tokenizer} | {100 * coverage.share:.1f} % | "
              f"{coverage.per_input:.2f} | {100 * coverage.token_share:.1f} % |")
        warnings.append(coverage.warning(kg_name.split()[0]))
    print("\nwarnings:", [w for w in warnings if w])
    mentions = mention_coverage(english(), semeval)
    print(f"\nSemEval entity mentions inside a word with a branch: {100 * mentions:.1f} %\n")


def speed_table(args, english, chinese, semeval, sst2, chnsenticorp) -> None:

    runs = {"English (SST-2, WordNet, word pieces)": (english(), sst2[:args.n]),
            "English (SemEval, WordNet, word pieces)": (english(), [ex.sentence.text for ex in semeval[:args.n]]),
            "Chinese (ChnSentiCorp, HowNet, characters)": (chinese(), chnsenticorp[:args.n])}
    chinese_name = "Chinese (ChnSentiCorp, HowNet, characters)"
    runs = {"English (SST-2, WordNet, word pieces)": (english(), sst2[:args.n]),
            "English (SemEval, WordNet, word pieces)": (english(), [ex.sentence.text for ex in semeval[:args.n]]),
            chinese_name: (chinese(), chnsenticorp[:args.n])}
    clocks = {"wall": time.perf_counter, "cpu": time.process_time}
    times = {clock: {name: [] for name in runs} for clock in clocks}
    tokens: dict[str, float] = {}
    for _ in range(args.rounds):
        for name, (builder, texts) in runs.items():
            started = {clock: read() for clock, read in clocks.items()}
            data, _ = TreeCorpusBuilder(builder)(texts)
            for clock, read in clocks.items():
                times[clock][name].append(read() - started[clock])
            tokens[name] = data["token"].num_nodes / len(texts)

    def warm(seconds: list[float]) -> float:
        return statistics.median(seconds[1:]) if len(seconds) > 1 else seconds[0]

    print(f"| builder ({args.n:,} sentences) | tokens per tree | cold sentences/s | warm sentences/s | warm tokens/s "
          "| warm µs per sentence, wall / CPU | × the Chinese builder per sentence, wall / CPU |")
    print("|---|---|---|---|---|---|---|")
    for name in runs:
        wall, cpu = warm(times["wall"][name]), warm(times["cpu"][name])
        ratio = [warm(times[c][name]) / warm(times[c][chinese_name]) for c in clocks]
        print(f"| {name} | {tokens[name]:.1f} | {args.n / times['wall'][name][0]:,.0f} | {args.n / wall:,.0f} | "
              f"{args.n * tokens[name] / wall:,.0f} | {1e6 * wall / args.n:.1f} / {1e6 * cpu / args.n:.1f} | "
              f"{ratio[0]:.2f} / {ratio[1]:.2f} |")
    for clock in clocks:
        print(f"\nrounds ({clock} s):", {k: np.round(v, 3).tolist() for k, v in times[clock].items()})

if __name__ == "__main__":
    main()
