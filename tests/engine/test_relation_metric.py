import pytest

from graphmatch.engine.metrics import compute, macro_f1, relation_f1


def _rows(pairs):
    return [{"pred": p, "gold": g, "prob": 1.0} for p, g in pairs]


def test_relation_f1_leaves_the_negative_label_out():
    rows = _rows([("位于", "位于"), ("位于", "无关系"), ("无关系", "创办"), ("创办", "创办"), ("无关系", "无关系")])
    # 位于: P 1/2, R 1/1 -> 2/3; 创办: P 1/1, R 1/2 -> 2/3; 无关系 is not averaged
    assert relation_f1(rows) == pytest.approx(100 * 2 / 3)
    assert macro_f1(rows) == pytest.approx(100 * (2 / 3 + 2 / 3 + 1 / 2) / 3)
    assert relation_f1(rows, negative=[]) == pytest.approx(macro_f1(rows))
    # directions are distinct labels; the default negatives cover common corpora's names
    directed = _rows([("A(e1,e2)", "A(e2,e1)"), ("A(e2,e1)", "A(e2,e1)"), ("no_relation", "no_relation")])
    assert relation_f1(directed) == pytest.approx(100 * (0 + 2 / 3) / 2)
    assert relation_f1(_rows([("NA", "NA")])) == 0.0


def test_compute_passes_metric_options():
    rows = _rows([("x", "x"), ("y", "z"), ("z", "z")])
    out = compute([("relation_f1", {"negative": ["y"]}), "accuracy"], rows)
    assert set(out) == {"relation_f1", "accuracy"}
    assert out["relation_f1"] == pytest.approx(100 * (1 + 2 / 3) / 2)
    assert out["accuracy"] == pytest.approx(200 / 3)
    assert compute([("relation_f1", {})], _rows([("x", None)])) == {}
    with pytest.raises(KeyError, match="unknown metric"):
        compute([("f2", {})], rows)
