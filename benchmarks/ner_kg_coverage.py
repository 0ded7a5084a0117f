"""How much of a NER set's gold entities K-BERT's knowledge names: the Medical KG's matches against
the medical NER tags, without training.

    python benchmarks/ner_kg_coverage.py --data-dir "$GRAPHMATCH_DATA" --split test
    python benchmarks/ner_kg_coverage.py --data-dir "$GRAPHMATCH_DATA" --recipe kbert/medical_ner_e5_medical_selected

Every sentence is built as the recipe builds it (``kbert/medical_ner_e5_medical``: the same
K-Query, the same cut). A branch hangs a category (疾病, 症状, 部位, 治疗, 检查) on a span of the
sentence; read as a tag on that span (Disease, Symptom, BodyPart, Cure, Examine), the KG is a
tagger of its own, scored against the gold spans exactly as NER is (typed, exact boundaries):

* **recall**: gold entities whose span the KG names with their type (and with any type);
* **precision**: KG spans that are gold entities of that type;
* per type, the gold entities and the share the KG names.

What a model can gain from a branch is bounded by how often it names a gold entity it would
otherwise miss; a KG that names few gold entities, or names them with the wrong type, has little to
add. Markdown on stdout.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from graphmatch.data.kbert import source_file  # noqa: E402
from graphmatch.engine import resolve  # noqa: E402
from graphmatch.io.text_files import iter_lines  # noqa: E402

#: the Medical KG's categories as the medical NER set's entity types
CATEGORY_TYPES = {"疾病": "Disease", "症状": "Symptom", "部位": "BodyPart", "治疗": "Cure", "检查": "Examine"}
Span = tuple[int, int, str]


def gold_spans(tags: list[str]) -> set[Span]:
    """BIO tags → ``(start, end, type)`` with ``end`` exclusive (an ``I-`` without its ``B-`` opens one)."""
    spans, start, kind = set(), None, None
    for i, tag in enumerate([*tags, "O"]):
        if start is not None and not (tag.startswith("I-") and tag[2:] == kind):
            spans.add((start, i, kind))
            start = None
        if tag.startswith("B-") or (tag.startswith("I-") and start is None):
            start, kind = i, tag[2:]
    return spans


def kg_spans(data) -> set[Span]:
    """The spans a K-BERT tree's branches name, typed by their category (``keep_text`` graphs)."""
    if "text" not in data["entity"]:
        return set()
    words = data["entity", "on", "word"].edge_index[1].tolist()
    spans = data["word"].span.tolist()
    return {(spans[w][0], spans[w][1], CATEGORY_TYPES.get(text, text))
            for w, text in zip(words, data["entity"].text, strict=True)}


def coverage(task, sentences: list[tuple[str, list[str]]]) -> dict:
    """The module docstring's figures over ``(text, tags)`` pairs."""
    gold_n = kg_n = typed = untyped = 0
    by_type, named_by_type = Counter(), Counter()
    with_branch = 0
    for text, tags in sentences:
        gold = gold_spans(tags)
        kg = kg_spans(task.encode(text, keep_text=True))
        with_branch += bool(kg)
        gold_n, kg_n = gold_n + len(gold), kg_n + len(kg)
        hits = gold & kg
        typed += len(hits)
        untyped += len({g[:2] for g in gold} & {k[:2] for k in kg})
        by_type.update(g[2] for g in gold)
        named_by_type.update(h[2] for h in hits)
    precision, recall = typed / max(kg_n, 1), typed / max(gold_n, 1)
    return {"sentences": len(sentences), "with_branch": with_branch, "gold": gold_n, "kg": kg_n,
            "typed": typed, "untyped": untyped, "precision": 100 * precision, "recall": 100 * recall,
            "f1": 200 * precision * recall / max(precision + recall, 1e-12),
            "by_type": {t: (n, 100 * named_by_type[t] / n) for t, n in by_type.most_common()}}


def report(split: str, f: dict) -> str:
    lines = [f"{split}: {f['sentences']:,} sentences, {f['with_branch']:,} with a branch; {f['gold']:,} gold entities, "
             f"{f['kg']:,} spans named by the KG", "",
             "| KG read as a tagger | precision | recall (typed) | recall (span, any type) | F1 |",
             "|---|---:|---:|---:|---:|",
             f"| {split} | {f['precision']:.1f} | {f['recall']:.1f} | {100 * f['untyped'] / max(f['gold'], 1):.1f} | "
             f"{f['f1']:.1f} |", "", "| type | gold entities | named by the KG with this type |", "|---|---:|---:|"]
    lines += [f"| {t} | {n:,} | {share:.1f} % |" for t, (n, share) in f["by_type"].items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--recipe", default="kbert/medical_ner_e5_medical")
    p.add_argument("--split", default="test", choices=("train", "dev", "test"))
    p.add_argument("--limit", type=int, help="only the first N sentences")
    p.add_argument("--data-dir", help="data root (default: the recipe's)")
    args = p.parse_args(argv)
    from graphmatch.tasks.kbert import KBertTask

    sets = [f"data.root={args.data_dir}"] if args.data_dir else []
    try:
        task = KBertTask(resolve(args.recipe, sets))
        lines = iter(iter_lines(source_file(task.data.dataset, args.split, args.data_dir)))
        header = next(lines).split("\t")
        text_col, label_col = header.index("text_a"), header.index("label")
        sentences = []
        for line in lines:
            if line.strip():
                cols = line.split("\t")
                sentences.append(("".join(cols[text_col].split(" ")), cols[label_col].split(" ")))
            if args.limit and len(sentences) >= args.limit:
                break
    except (ValueError, OSError) as err:
        print(f"ner_kg_coverage.py: error: {err}", file=sys.stderr)
        return 2
    task.set_extra_state({"labels": sorted({t for _, tags in sentences for t in tags}), "kind": "ner"})
    print(report(args.split, coverage(task, sentences)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
