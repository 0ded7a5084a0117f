from functools import partial
from itertools import pairwise

import pytest

from graphmatch import metrics
from graphmatch.data.relation_formats import NEGATIVE_LABELS
from graphmatch.metrics import METRICS, macro_f1

# the relation task's negative labels (Task.negative_labels), which the engine gives these metrics
compute = partial(metrics.compute, negative=NEGATIVE_LABELS)
micro_f1, micro_precision, micro_recall, pr_auc, pr_auc_top1, relation_f1 = (
    partial(f, negative=NEGATIVE_LABELS) for f in (metrics.micro_f1, metrics.micro_precision, metrics.micro_recall,
                                                   metrics.pr_auc, metrics.pr_auc_top1, metrics.relation_f1))


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


# --------------------------------------------------------------- micro P/R/F1 and PR-AUC
ZH = [("位于", "位于", 0.9), ("位于", "无关系", 0.8), ("无关系", "创办", 0.7), ("创办", "创办", 0.6),
      ("无关系", "无关系", 0.95), ("无关系", "位于", 0.5)]


def _scored(triples):
    return [{"pred": p, "gold": g, "prob": q} for p, g, q in triples]


def test_micro_scores_leave_the_negative_label_out():
    rows = _scored(ZH)
    # predicted relations 3 (位于, 位于, 创办), gold relations 4, correct relations 2
    assert micro_precision(rows) == pytest.approx(100 * 2 / 3)
    assert micro_recall(rows) == pytest.approx(100 * 1 / 2)
    assert micro_f1(rows) == pytest.approx(100 * 4 / 7)  # 2PR/(P+R) = (2/3)/(7/6)
    # with no negative label every row counts, and micro-F1 is accuracy
    assert micro_f1(rows, negative=[]) == pytest.approx(100 * 3 / 6)
    # a wrong relation costs both precision and recall; nothing predicted → 0, not an error
    wrong = _scored([("创办", "位于", 1.0), ("NA", "NA", 1.0)])
    assert (micro_precision(wrong), micro_recall(wrong), micro_f1(wrong)) == (0.0, 0.0, 0.0)
    assert micro_precision(_scored([("NA", "位于", 1.0)])) == 0.0
    assert micro_recall(_scored([("位于", "NA", 1.0)])) == 0.0


def test_pr_auc_top1_ranks_the_predicted_relations():
    # ranked: 0.9 hit (R 1/4, P 1), 0.8 miss (1/4, 1/2), 0.6 hit (2/4, 2/3); four gold relations
    assert pr_auc_top1(_scored(ZH)) == pytest.approx(100 * (1 / 4) * (1 / 2 + 2 / 3) / 2)
    # the curve ends at (micro recall, micro precision); one point has no area
    assert pr_auc_top1(_scored([("位于", "位于", 0.9)])) == 0.0
    assert pr_auc_top1(_scored([("NA", "NA", 0.9)])) == 0.0


LABELS = ["无关系", "位于", "创办"]
PROBS = [("位于", [0.1, 0.7, 0.2]), ("无关系", [0.5, 0.4, 0.1]), ("创办", [0.3, 0.3, 0.4])]


def _prob_rows(with_mapping=True):
    rows = []
    for gold, p in PROBS:
        k = max(range(3), key=p.__getitem__)
        rows.append({"pred": LABELS[k], "gold": gold, "prob": p[k],
                     "probs": dict(zip(LABELS, p, strict=True)) if with_mapping else p})
    return rows


def test_pr_auc_ranks_every_row_and_relation():
    # pairs: .7 hit; .4 (miss, hit) tied → one point; .3, .2, .1 misses. Two gold relations:
    # (R 1/2, P 1), (1, 2/3), (1, 1/2), (1, 2/5), (1, 1/3) → area (1/2)(1 + 2/3)/2
    expected = 100 * 0.5 * (1 + 2 / 3) / 2
    assert pr_auc(_prob_rows()) == pytest.approx(expected)
    assert pr_auc(_prob_rows(with_mapping=False), labels=LABELS) == pytest.approx(expected)
    # the order of the rows does not matter, tied scores included
    assert pr_auc(_prob_rows()[::-1]) == pytest.approx(expected)
    # a perfect ranking has precision 1 until full recall
    perfect = [{"pred": "a", "gold": "a", "prob": 0.8, "probs": {"a": 0.8, "b": 0.1, "NA": 0.1}},
               {"pred": "b", "gold": "b", "prob": 0.6, "probs": {"a": 0.3, "b": 0.6, "NA": 0.1}}]
    assert pr_auc(perfect) == pytest.approx(100 * 0.5 * (1 + 1) / 2)
    with pytest.raises(ValueError, match="pr_auc needs every row's 'probs'.*row 0 has none"):
        pr_auc(_scored(ZH))
    with pytest.raises(ValueError, match="row 0: 'probs' is a list of 3; pr_auc then needs labels="):
        pr_auc(_prob_rows(with_mapping=False))


def _reference_area(pairs, n_gold):
    """The curve point by point from its definition (every distinct threshold), then trapezoids."""
    points = []
    for theta in sorted({s for s, _ in pairs}, reverse=True):
        kept = [hit for s, hit in pairs if s >= theta]
        points.append((sum(kept) / n_gold, sum(kept) / len(kept)))
    return 100 * sum((r1 - r0) * (p0 + p1) / 2 for (r0, p0), (r1, p1) in pairwise(points))


def _corpus():
    """60 rows over NA and three relations, probabilities rounded so that some tie."""
    labels = ["NA", "a", "b", "c"]
    rows = []
    for i in range(60):
        w = [1 + (i * 7 + 3 * k * k + i * k) % 9 for k in range(4)]
        p = [round(x / sum(w), 2) for x in w]
        k = max(range(4), key=p.__getitem__)
        rows.append({"pred": labels[k], "gold": labels[(i * 5 + i // 7) % 4], "prob": p[k],
                     "probs": dict(zip(labels, p, strict=True))})
    return rows


def test_pr_auc_against_its_definition_and_scikit_learn():
    rows = _corpus()
    n_gold = sum(r["gold"] != "NA" for r in rows)
    pairs = [(r["probs"][x], r["gold"] == x) for r in rows for x in "abc"]
    top1 = [(r["prob"], r["pred"] == r["gold"]) for r in rows if r["pred"] != "NA"]
    assert pr_auc(rows, negative=["NA"]) == pytest.approx(_reference_area(pairs, n_gold))
    assert pr_auc_top1(rows, negative=["NA"]) == pytest.approx(_reference_area(top1, n_gold))
    # scikit-learn 1.9.1 (not a dependency), measured once: auc(recall, precision) of
    # precision_recall_curve less its added first point (recall 0, precision 1), recall rescaled
    # to all gold relations; precision_recall_fscore_support(average="micro", labels=a, b, c)
    assert pr_auc(rows, negative=["NA"]) == pytest.approx(SKLEARN["pr_auc"])
    assert pr_auc_top1(rows, negative=["NA"]) == pytest.approx(SKLEARN["pr_auc_top1"])
    for name in ("micro_precision", "micro_recall", "micro_f1"):
        assert METRICS[name](rows, negative=["NA"]) == pytest.approx(SKLEARN[name])


SKLEARN = {"pr_auc": 22.8862296557081, "pr_auc_top1": 2.277664196268848, "micro_precision": 100 * 3 / 13,
           "micro_recall": 100 * 6 / 43, "micro_f1": 17.391304347826086}


def test_compute_knows_the_new_metrics():
    rows = _prob_rows()
    names = ["micro_precision", "micro_recall", "micro_f1", "pr_auc", "pr_auc_top1"]
    out = compute([(n, {"negative": ["无关系"]}) for n in names], rows)
    assert set(out) == set(names)
    assert out["micro_f1"] == pytest.approx(micro_f1(rows, negative=["无关系"]))
    # the default negative labels include 无关系
    assert compute(names, rows) == out


def test_compute_gives_the_tasks_negative_labels_to_the_metrics_that_take_them():
    """The engine passes ``Task.negative_labels()``; a metric's own ``negative`` option wins, and
    without either no label is left out."""
    rows = _rows([("x", "x"), ("y", "y"), ("y", "x")])
    assert sorted(metrics.TAKES_NEGATIVE) == ["micro_f1", "micro_precision", "micro_recall", "pr_auc", "pr_auc_top1",
                                              "relation_f1"]
    given = metrics.compute(["relation_f1", "micro_f1", "accuracy"], rows, negative=["y"])
    assert given == metrics.compute([("relation_f1", {"negative": ["y"]}), ("micro_f1", {"negative": ["y"]}),
                                     "accuracy"], rows)
    assert given["relation_f1"] == pytest.approx(100 * 2 / 3)  # x alone: P 1, R 1/2
    assert metrics.compute([("relation_f1", {"negative": []})], rows, negative=["y"])["relation_f1"] == \
        pytest.approx(macro_f1(rows))
    assert metrics.compute(["relation_f1"], rows)["relation_f1"] == pytest.approx(macro_f1(rows))
