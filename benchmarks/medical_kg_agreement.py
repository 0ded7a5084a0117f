"""How far the Medical KG's categories agree with the medical NER set's gold entities: of the
entities K-Query matches (greedy longest match, as the tree builder does), how many are exactly a
gold entity, and how many of those the KG gives the gold type (疾病 Disease, 症状 Symptom, 部位
BodyPart, 治疗 Cure, 检查 Examine). No training. With ``--runs``, also what the trained taggers
do with them: test recall of the gold entities the KG matches and of the others, and of the gold
entities whose text is never a gold entity of the training slice (unseen) and of the seen ones,
per arm, from each seed's ``predictions_test.jsonl`` (the run folders of a ``benchmarks/results.py``
medical NER comparison).

    python benchmarks/medical_kg_agreement.py --train-limit 1500 --runs runs/results/e5_medical_ner
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from graphmatch.data.kbert import source_file  # noqa: E402
from graphmatch.io.text_files import iter_lines  # noqa: E402
from graphmatch.knowledge import KnowledgeGraph, resolve_kg  # noqa: E402
from graphmatch.metrics.ner import bio_spans  # noqa: E402

TYPES = {"疾病": "Disease", "症状": "Symptom", "部位": "BodyPart", "治疗": "Cure", "检查": "Examine"}


def gold_entity(tags: list[str], start: int, end: int) -> str | None:
    """The type of the gold entity that is exactly ``[start, end)``, else None."""
    first = tags[start]
    if not first.startswith("B-"):
        return None
    kind = first[2:]
    inside = all(t == "I-" + kind for t in tags[start + 1:end])
    closed = end == len(tags) or not tags[end].startswith("I-")
    return kind if inside and closed else None


def agreement(kg: KnowledgeGraph, lines: list[str]) -> Counter:
    counts: Counter = Counter()
    for line in lines:
        chars, tags = (field.split(" ") for field in line.split("\t"))
        counts["gold entities"] += sum(t.startswith("B-") for t in tags)
        for span in kg.longest_matches("".join(chars)):
            kind = gold_entity(tags, span.start, span.end)
            counts["matches"] += 1
            counts["exactly a gold entity"] += kind is not None
            counts["of the gold type"] += kind is not None and TYPES.get(kg.values(span.word, 1, False)[0]) == kind
    return counts


def entities(tags: list[str]) -> set[tuple[int, int, str]]:
    """``(start, end, type)`` of every entity of a BIO sequence, read as the NER metric reads them
    (conlleval: a stray ``I-X`` starts an entity, :func:`graphmatch.metrics.ner.bio_spans`)."""
    return {(start, end, kind) for kind, start, end in bio_spans(tags)}


def entity_texts(lines: list[str]) -> set[str]:
    """The texts of the gold entities of ``lines`` (``chars\ttags``)."""
    out = set()
    for line in lines:
        chars, tags = (field.split(" ") for field in line.split("\t"))
        out |= {"".join(chars[start:end]) for start, end, _ in entities(tags)}
    return out


#: the groups of gold entities whose recall :func:`recall_by_match` reports
GROUPS = ("matched", "other", "unseen", "seen")


def recall_by_match(kg: KnowledgeGraph, lines: list[str], predictions: Path,
                    seen: set[str]) -> tuple[float, ...]:
    """Test recall of the gold entities the KG matches exactly and of the others, then of those whose
    text is not in ``seen`` (the training slice's entity texts) and of those that are."""
    hit, total = Counter(), Counter()
    rows = [json.loads(line) for line in predictions.read_text(encoding="utf-8").splitlines()]
    for line, row in zip(lines, rows, strict=True):
        chars = line.split("\t")[0].split(" ")
        matched = {(m.start, m.end) for m in kg.longest_matches("".join(chars))}
        predicted = entities(row["pred"])
        for entity in entities(row["gold"]):
            for group in ("matched" if entity[:2] in matched else "other",
                          "seen" if "".join(chars[entity[0]:entity[1]]) in seen else "unseen"):
                total[group] += 1
                hit[group] += entity in predicted
    return tuple(100 * hit[g] / max(total[g], 1) for g in GROUPS)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--train-limit", type=int, default=1500, help="training sentences read (the recipes' budget)")
    p.add_argument("--data-dir")
    p.add_argument("--runs", type=Path, help="the comparison's folder: <arm>/seed-<n>/predictions_test.jsonl")
    args = p.parse_args(argv)
    kg = KnowledgeGraph.from_spo(resolve_kg("medical", args.data_dir))
    print("| split | gold entities | KG matches | exactly a gold entity | of the gold type |")
    print("|---|---|---|---|---|")
    splits = {split: [line for line in list(iter_lines(source_file("medical_ner", split, args.data_dir)))[1:]
                      if line.strip()] for split in ("train", "dev", "test")}
    splits["train"] = splits["train"][:args.train_limit]
    for split, lines in splits.items():
        c = agreement(kg, lines)
        m = c["matches"]
        print(f"| {split} | {c['gold entities']:,} | {m:,} | {c['exactly a gold entity']:,} "
              f"({100 * c['exactly a gold entity'] / m:.0f} %) | {c['of the gold type']:,} "
              f"({100 * c['of the gold type'] / m:.0f} %) |")
    if args.runs is None:
        return 0
    seen = entity_texts(splits["train"])
    unseen = len(entity_texts(splits["test"]) - seen)
    print(f"\n{unseen:,} distinct test entity texts are not a gold entity of the first {args.train_limit:,} "
          "training sentences.")
    print("\n| arm | test recall: KG matches | the others | unseen in training | seen |\n|---|---|---|---|---|")
    for arm in sorted(p for p in args.runs.iterdir() if p.is_dir()):
        files = sorted(arm.glob("seed-*/predictions_test.jsonl"))
        found = [recall_by_match(kg, splits["test"], f, seen) for f in files]
        if found:
            cols = [statistics.mean(x) for x in zip(*found, strict=True)]
            spread = [statistics.stdev(x) if len(x) > 1 else 0.0 for x in zip(*found, strict=True)]
            label = arm.name.replace("_", " ")
            print(f"| {label} | " + " | ".join(f"{c:.2f} ± {d:.2f}" for c, d in zip(cols, spread, strict=True)) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
