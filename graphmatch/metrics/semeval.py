"""The official SemEval-2010 Task 8 score, ported from the organisers' perl scorer.

The official figure of ``semeval2010_task8_scorer-v1.2.pl`` is the *(9+1)-way evaluation with
directionality taken into account: macro-averaged F1*. Labels are reduced to their relation
(``Cause-Effect(e1,e2)`` → ``Cause-Effect``); a prediction counts as correct only when relation
and direction both match. For every relation :math:`r` of the key other than ``Other``:

.. math::
    P_r = 100\\,\\frac{c_r}{p_r + w_r}, \\qquad
    R_r = 100\\,\\frac{c_r}{a_r}, \\qquad
    F_r = \\frac{2 P_r R_r}{P_r + R_r}, \\qquad
    \\text{score} = \\frac{1}{|\\mathcal{R}|} \\sum_{r \\in \\mathcal{R}} F_r

with :math:`c_r` the exactly right predictions of :math:`r`, :math:`p_r` the predictions of
:math:`r` that are not wrong-direction predictions of a gold :math:`r`, :math:`w_r` those
wrong-direction predictions, :math:`a_r` the key's count of :math:`r` (skipped ids included) and
:math:`\\mathcal{R}` the relations present in the key except ``Other``. As in the scorer, a
skipped id counts against recall only, :math:`P_r = 0` when :math:`p_r = 0`, and
:math:`F_r = 0` when :math:`P_r + R_r = 0`. The arithmetic follows the perl code operation by
operation, so the float is the scorer's to the last bit and prints identically with ``%.2f``.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Sequence

from graphmatch.data.relation_formats import SEMEVAL_LABELS as LABELS

_VALID = frozenset(LABELS)
_OTHER = "_Other"  # the scorer renames Other so that it sorts first
_LINE = re.compile(r"([0-9]+)\t([^\r\n]+)\r?\n")
_DIRECTION = re.compile(r"\(e[12],e[12]\)$")


def _scorer_label(label: str, where: str) -> str:
    if label not in _VALID:
        raise ValueError(f"{where}: unknown SemEval-2010 Task 8 label {label!r}; valid labels: {', '.join(LABELS)}")
    return _OTHER if label == "Other" else label


def _relation(label: str) -> str:
    return _DIRECTION.sub("", label)


def semeval_scores(pred_labels: Sequence[str | None], gold_labels: Sequence[str]) -> dict[str, object]:
    """Per-relation and macro P/R/F1 (percent) of the official (9+1)-way directional evaluation.

    Args:
        pred_labels: one predicted label per gold label; ``None`` marks a skipped example.
        gold_labels: the key's labels.

    Returns:
        ``{"official": macro F1, "macro_p": ..., "macro_r": ..., "relations": {rel: (P, R, F1)}}``.
    """
    if len(pred_labels) != len(gold_labels):
        raise ValueError(f"{len(pred_labels)} predictions for {len(gold_labels)} gold labels")
    gold = [_scorer_label(g, f"gold label {i}") for i, g in enumerate(gold_labels)]
    proposed = [None if p is None else _scorer_label(p, f"prediction {i}") for i, p in enumerate(pred_labels)]
    if all(p is None for p in proposed):
        raise ValueError("no predictions to score (the official scorer fails on an empty answer file)")

    answer_count = Counter(_relation(g) for g in gold)
    correct: Counter[str] = Counter()
    proposed_count: Counter[str] = Counter()
    wrong_dir: Counter[str] = Counter()
    for p, g in zip(proposed, gold, strict=True):
        if p is None:
            continue
        p_rel, g_rel = _relation(p), _relation(g)
        if p == g:
            correct[g_rel] += 1
            proposed_count[p_rel] += 1
        elif p_rel == g_rel:
            wrong_dir[g_rel] += 1
        else:
            proposed_count[p_rel] += 1

    relations: dict[str, tuple[float, float, float]] = {}
    macro_p = macro_r = macro_f1 = 0
    for rel in sorted(answer_count):
        c, n_prop, n_ans = correct[rel], proposed_count[rel], answer_count[rel]
        p_ = 0 if n_prop == 0 else 100.0 * c / (n_prop + wrong_dir[rel])
        r_ = 0 if n_ans == 0 else 100.0 * c / n_ans
        f_ = 0 if p_ + r_ == 0 else 2 * p_ * r_ / (p_ + r_)
        relations["Other" if rel == _OTHER else rel] = (float(p_), float(r_), float(f_))
        if rel != _OTHER:
            macro_p += p_
            macro_r += r_
            macro_f1 += f_
    n_rel = len(answer_count) - (1 if _OTHER in answer_count else 0)
    if n_rel == 0:
        raise ValueError("the gold labels hold no relation other than Other; the macro average is undefined")
    return {
        "official": macro_f1 / n_rel,
        "macro_p": macro_p / n_rel,
        "macro_r": macro_r / n_rel,
        "relations": relations,
    }


def semeval_official_score(pred_labels: Sequence[str | None], gold_labels: Sequence[str]) -> float:
    """The official SemEval-2010 Task 8 figure (percent), as the perl scorer prints it.

    Args:
        pred_labels: predicted label names (``None`` = skipped), aligned with ``gold_labels``.
        gold_labels: gold label names, e.g. ``"Component-Whole(e2,e1)"`` or ``"Other"``.
    """
    return float(semeval_scores(pred_labels, gold_labels)["official"])


def read_answer_file(path: str | os.PathLike) -> dict[str, str]:
    """Read an ``ID<TAB>LABEL`` file with the scorer's rules (every line, the last included,
    ends in a newline; no repeated ids; only the 19 labels). Ids are kept as strings."""
    answers: dict[str, str] = {}
    with open(path, "rb") as f:
        text = f.read().decode("utf-8", errors="replace")
    # lines end at "\n" only, as perl reads them
    for line_no, line in enumerate(re.findall(r"[^\n]*\n|[^\n]+$", text), 1):
        m = _LINE.fullmatch(line)
        if m is None:
            raise ValueError(
                f"{path}:{line_no}: bad line {line!r}; the official scorer wants 'ID<TAB>LABEL' "
                "and a newline at the end of every line"
            )
        sent_id, label = m.groups()
        _scorer_label(label, f"{path}:{line_no}")
        if sent_id in answers:
            raise ValueError(f"{path}:{line_no}: id {sent_id} is already defined")
        answers[sent_id] = label
    return answers


def score_files(proposed_path: str | os.PathLike, key_path: str | os.PathLike) -> float:
    """Official score of a proposed answer file against a key file (``perl SCORER PROPOSED KEY``).

    The proposed file may cover a subset of the key's ids (the rest count as skipped); an id
    absent from the key is an error, as in the scorer.
    """
    proposed = read_answer_file(proposed_path)
    key = read_answer_file(key_path)
    unknown = [i for i in proposed if i not in key]
    if unknown:
        raise ValueError(f"{proposed_path} contains ids missing from the key {key_path}: {', '.join(unknown[:5])}")
    if not proposed:
        raise ValueError(f"{proposed_path} holds no predictions")
    ids = list(key)
    return semeval_official_score([proposed.get(i) for i in ids], [key[i] for i in ids])
