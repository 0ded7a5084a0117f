"""Metrics over decode rows, against hand-computed values."""

from __future__ import annotations

import pytest

from graphmatch.metrics import accuracy, bio_spans, compute, f1, macro_f1, ner_f1, semeval2010


def rows(pred: list, gold: list, **extra: list) -> list[dict]:
    out = [{"pred": p, "gold": g, "prob": 0.9} for p, g in zip(pred, gold, strict=True)]
    for key, values in extra.items():
        for r, v in zip(out, values, strict=True):
            r[key] = v
    return out


def test_accuracy_and_positive_f1() -> None:
    r = rows(["1", "1", "0", "0", "1"], ["1", "0", "0", "1", "1"])
    assert accuracy(r) == pytest.approx(60.0)
    # TP = 2, FP = 1, FN = 1 → P = R = 2/3
    assert f1(r) == pytest.approx(100 * 2 / 3)
    # the other class as positive: TP = 1, FP = 1, FN = 1
    assert f1(r, positive="0") == pytest.approx(50.0)
    assert f1(rows(["0", "0"], ["0", "0"])) == 0.0  # no positive at all


def test_macro_f1_counts_every_class() -> None:
    r = rows(["a", "a", "b", "c"], ["a", "b", "b", "b"])
    # a: P 1/2 R 1 → 2/3; b: P 1 R 1/3 → 1/2; c: predicted, never gold → 0
    assert macro_f1(r) == pytest.approx(100 * (2 / 3 + 1 / 2 + 0) / 3)


def test_accuracy_of_tags_and_unlabelled_rows() -> None:
    r = rows([["B-X", "O"], ["O"]], [["B-X", "I-X"], ["O"]])
    assert accuracy(r) == pytest.approx(100 * 2 / 3)
    assert compute(["accuracy"], rows(["1"], [None])) == {}
    with pytest.raises(ValueError, match="no labelled rows"):
        accuracy(rows(["1"], [None]))


def test_bio_spans_follow_conlleval() -> None:
    assert bio_spans(["B-PER", "I-PER", "O", "B-LOC"]) == {("PER", 0, 2), ("LOC", 3, 4)}
    # an I- without a B- starts a span; a type change starts a new one; B- after B- splits
    assert bio_spans(["I-PER", "I-PER", "I-LOC", "B-LOC", "B-LOC", "I-LOC"]) == {
        ("PER", 0, 2),
        ("LOC", 2, 3),
        ("LOC", 3, 4),
        ("LOC", 4, 6),
    }
    assert bio_spans(["O", "O"]) == set()
    assert bio_spans(["B-X"]) == {("X", 0, 1)}


def test_ner_f1_is_span_level() -> None:
    gold = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG", "I-ORG", "I-ORG"]]
    pred = [["B-PER", "I-PER", "O", "O"], ["B-ORG", "I-ORG", "O"]]
    # gold spans 3, predicted 2, exact matches 1 (PER); the ORG boundary is wrong
    p, r = 1 / 2, 1 / 3
    assert ner_f1(rows(pred, gold)) == pytest.approx(100 * 2 * p * r / (p + r))
    assert ner_f1(rows(gold, gold)) == pytest.approx(100.0)
    with pytest.raises(ValueError, match="row 0: 1 predicted tags for 2 gold"):
        ner_f1(rows([["O"]], [["O", "O"]]))


def test_semeval2010_metric_and_compute() -> None:
    r = rows(["Cause-Effect(e1,e2)", "Other"], ["Cause-Effect(e1,e2)", "Other"])
    assert semeval2010(r) == pytest.approx(100.0)
    out = compute(["accuracy", "semeval2010"], r)
    assert out == {"accuracy": 100.0, "semeval2010": 100.0}
    with pytest.raises(KeyError, match="unknown metric"):
        compute(["bleu"], r)


def test_macro_f1_does_not_depend_on_the_hash_seed():
    """The per-class sum runs in sorted order: with set order (which changes with the hash seed of
    the process) the last digit of a macro-F1 differed between two runs of the same predictions."""
    import subprocess
    import sys

    code = ("from graphmatch.metrics import macro_f1, relation_f1\n"
            "import random\n"
            "rnd = random.Random(0)\n"
            "labels = [f'relation-{i}' for i in range(40)] + ['Other']\n"
            "rows = [{'pred': rnd.choice(labels), 'gold': rnd.choice(labels)} for i in range(3000)]\n"
            "print(repr(macro_f1(rows)), repr(relation_f1(rows)))\n")
    outputs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                              env={**__import__("os").environ, "PYTHONHASHSEED": str(seed)}).stdout
               for seed in range(6)}
    assert len(outputs) == 1, outputs
