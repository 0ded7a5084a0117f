"""``benchmarks/ner_kg_coverage.py``: BIO tags read as spans, the Medical KG's branches read as typed
spans of the sentence, and the KG scored as a tagger against the gold spans."""

from __future__ import annotations

import pytest
from benchmark_scripts import load

from graphmatch.engine import resolve


def test_gold_spans():
    spans = load("ner_kg_coverage").gold_spans
    assert spans(["O", "B-Symptom", "I-Symptom", "O", "B-BodyPart"]) == {(1, 3, "Symptom"), (4, 5, "BodyPart")}
    assert spans(["I-Cure", "I-Cure", "B-Cure"]) == {(0, 2, "Cure"), (2, 3, "Cure")}  # a lone I- opens one
    assert spans(["B-Symptom", "I-BodyPart"]) == {(0, 1, "Symptom"), (1, 2, "BodyPart")}
    assert spans(["O"]) == set()


def test_the_kg_scored_as_a_tagger(shared_data, tmp_path):
    from graphmatch.tasks.kbert import KBertTask

    bench = load("ner_kg_coverage")
    task = KBertTask(resolve("kbert/medical_ner_medical_quick", [f"data.root={shared_data}",
                                                                 f"data.cache_dir={tmp_path}"]))
    task.set_extra_state({"labels": ["O", "B-Symptom", "I-Symptom"], "kind": "ner"})
    text = "患者眼睛发红三天"  # 眼睛发红 is a 症状 (symptom) of the Medical KG
    assert bench.kg_spans(task.encode(text, keep_text=True)) == {(2, 6, "Symptom")}
    right = ["O", "O", "B-Symptom", "I-Symptom", "I-Symptom", "I-Symptom", "O", "O"]
    wrong_type = ["O", "O", "B-BodyPart", "I-BodyPart", "I-BodyPart", "I-BodyPart", "O", "O"]
    missed = ["B-Symptom", "I-Symptom", "O", "O", "O", "O", "O", "O"]
    f = bench.coverage(task, [(text, right), (text, wrong_type), (text, missed), ("好", ["O"])])
    assert (f["gold"], f["kg"], f["typed"], f["untyped"], f["with_branch"]) == (3, 3, 1, 2, 3)
    assert f["precision"] == pytest.approx(100 / 3) and f["recall"] == pytest.approx(100 / 3)
    assert f["by_type"] == {"Symptom": (2, 50.0), "BodyPart": (1, 0.0)}
    assert "| test | 33.3 | 33.3 | 66.7 | 33.3 |" in bench.report("test", f)
