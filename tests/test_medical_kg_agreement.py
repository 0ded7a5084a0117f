"""``benchmarks/medical_kg_agreement.py``: recall of the gold entities the KG matches and of those
unseen in training, from a run's predictions."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from graphmatch.knowledge import KnowledgeGraph

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "medical_kg_agreement.py"


def _script():
    spec = importlib.util.spec_from_file_location("medical_kg_agreement", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_recall_by_kg_match_and_by_training_entities(tmp_path):
    m = _script()
    kg_file = tmp_path / "kg.spo"
    kg_file.write_text("头痛\t类别\t症状\n", encoding="utf-8")
    kg = KnowledgeGraph.from_spo(kg_file)
    train = ["头 痛 了\tB-Symptom I-Symptom O"]
    test = ["头 痛 发 热\tB-Symptom I-Symptom B-Symptom I-Symptom"]
    assert m.entity_texts(train) == {"头痛"}
    predictions = tmp_path / "predictions_test.jsonl"
    # the tagger finds 头痛 (matched by the KG, seen in training) and misses 发热 (neither)
    row = {"gold": ["B-Symptom", "I-Symptom", "B-Symptom", "I-Symptom"], "pred": ["B-Symptom", "I-Symptom", "O", "O"]}
    predictions.write_text(json.dumps(row) + "\n", encoding="utf-8")
    recall = dict(zip(m.GROUPS, m.recall_by_match(kg, test, predictions, m.entity_texts(train)), strict=True))
    assert recall == {"matched": 100.0, "other": 0.0, "unseen": 0.0, "seen": 100.0}
