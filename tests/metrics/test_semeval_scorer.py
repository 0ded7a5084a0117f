"""The Python port of the official SemEval-2010 Task 8 scorer gives the perl scorer's figure."""

from __future__ import annotations

import random
import re
import subprocess
from pathlib import Path

import pytest

from graphmatch.cli.main import main
from graphmatch.data.relation_formats import SEMEVAL_LABELS as LABELS
from graphmatch.metrics.semeval import score_files, semeval_official_score, semeval_scores

OFFICIAL = re.compile(r"macro-averaged F1 = ([0-9.]+)%")


@pytest.fixture(scope="module")
def scorer_dir(shared_data: Path) -> Path:
    return shared_data / "semeval2010_task8" / "scorer"


def perl_score(perl: str, scorer_dir: Path, proposed: Path, key: Path) -> str:
    out = subprocess.run(
        [perl, str(scorer_dir / "semeval2010_task8_scorer-v1.2.pl"), str(proposed), str(key)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return OFFICIAL.findall(out)[-1]


@pytest.fixture(scope="module")
def test_key(shared_data: Path) -> dict[str, str]:
    """The directional key of the 2,717 test sentences: id before the TAB, label on the next line."""
    lines = (shared_data / "semeval2010_task8" / "TEST_FILE_FULL.TXT").read_text(encoding="utf-8").splitlines()
    key = {}
    for i, line in enumerate(lines):
        m = re.match(r"^(\d+)\t", line)
        if m:
            key[m.group(1)] = lines[i + 1].strip()
    assert len(key) == 2717
    return key


def write(path: Path, answers: dict[str, str]) -> Path:
    path.write_text("".join(f"{i}\t{label}\n" for i, label in answers.items()), encoding="utf-8")
    return path


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_organisers_examples(perl: str, scorer_dir: Path, k: int) -> None:
    proposed, key = scorer_dir / f"proposed_answer{k}.txt", scorer_dir / f"answer_key{k}.txt"
    assert f"{score_files(proposed, key):.2f}" == perl_score(perl, scorer_dir, proposed, key)


def test_example_figures_are_the_published_ones(scorer_dir: Path) -> None:
    # result_scores1.txt, shipped with the scorer, ends with 64.09
    published = OFFICIAL.findall((scorer_dir / "result_scores1.txt").read_text())[-1]
    assert f"{score_files(scorer_dir / 'proposed_answer1.txt', scorer_dir / 'answer_key1.txt'):.2f}" == published


def perturbed(key: dict[str, str], rng: random.Random, p_wrong: float, p_flip: float, p_skip: float) -> dict[str, str]:
    out = {}
    for i, gold in key.items():
        r = rng.random()
        if r < p_skip:
            continue
        if r < p_skip + p_flip and gold != "Other":  # right relation, wrong direction
            out[i] = gold.replace("(e1,e2)", "(x)").replace("(e2,e1)", "(e1,e2)").replace("(x)", "(e2,e1)")
        elif r < p_skip + p_flip + p_wrong:
            out[i] = rng.choice(LABELS)
        else:
            out[i] = gold
    ids = list(out)
    rng.shuffle(ids)  # the scorer does not care about order
    return {i: out[i] for i in ids}


@pytest.mark.parametrize(
    "seed,p_wrong,p_flip,p_skip",
    [(0, 0.2, 0.05, 0.0), (1, 0.5, 0.1, 0.0), (2, 0.9, 0.0, 0.0), (3, 0.3, 0.1, 0.2), (4, 0.05, 0.3, 0.05)],
)
def test_random_predictions_on_the_test_key(
    perl: str, tmp_path: Path, scorer_dir: Path, test_key: dict[str, str],
    seed: int, p_wrong: float, p_flip: float, p_skip: float,
) -> None:
    proposed = perturbed(test_key, random.Random(seed), p_wrong, p_flip, p_skip)
    ppath, kpath = write(tmp_path / "proposed.txt", proposed), write(tmp_path / "key.txt", test_key)
    expected = perl_score(perl, scorer_dir, ppath, kpath)
    assert f"{score_files(ppath, kpath):.2f}" == expected
    ids = list(test_key)
    in_memory = semeval_official_score([proposed.get(i) for i in ids], [test_key[i] for i in ids])
    assert f"{in_memory:.2f}" == expected


def test_small_key_with_missing_relations_and_labels_absent_from_key(
    perl: str, tmp_path: Path, scorer_dir: Path
) -> None:
    key = {"1": "Cause-Effect(e1,e2)", "2": "Other", "3": "Message-Topic(e2,e1)", "4": "Cause-Effect(e2,e1)"}
    proposed = {"1": "Cause-Effect(e2,e1)", "2": "Product-Producer(e1,e2)", "4": "Cause-Effect(e2,e1)"}
    ppath, kpath = write(tmp_path / "p.txt", proposed), write(tmp_path / "k.txt", key)
    assert f"{score_files(ppath, kpath):.2f}" == perl_score(perl, scorer_dir, ppath, kpath)


def test_scores_by_hand() -> None:
    gold = ["Cause-Effect(e1,e2)", "Cause-Effect(e1,e2)", "Other", "Message-Topic(e1,e2)"]
    # one right, one wrong direction (counts as a wrong Cause-Effect prediction), Other right, skipped
    pred = ["Cause-Effect(e1,e2)", "Cause-Effect(e2,e1)", "Other", None]
    scores = semeval_scores(pred, gold)
    # Cause-Effect: P = 1/2, R = 1/2 → F1 50; Message-Topic: 0 → macro over the two relations
    assert scores["relations"]["Cause-Effect"] == pytest.approx((50.0, 50.0, 50.0))
    assert scores["official"] == pytest.approx(25.0)
    assert semeval_official_score(gold, gold) == pytest.approx(100.0)


def test_bad_input_is_reported(tmp_path: Path) -> None:
    key = write(tmp_path / "k.txt", {"1": "Other", "2": "Cause-Effect(e1,e2)"})
    with pytest.raises(ValueError, match="unknown SemEval-2010 Task 8 label 'Cause-Efect"):
        score_files(write(tmp_path / "p.txt", {"1": "Cause-Efect(e1,e2)"}), key)
    (tmp_path / "nonl.txt").write_text("1\tOther\n2\tOther")  # the scorer wants a final newline
    with pytest.raises(ValueError, match="nonl.txt:2"):
        score_files(tmp_path / "nonl.txt", key)
    (tmp_path / "dup.txt").write_text("1\tOther\n1\tOther\n")
    with pytest.raises(ValueError, match="id 1 is already defined"):
        score_files(tmp_path / "dup.txt", key)
    with pytest.raises(ValueError, match="missing from the key"):
        score_files(write(tmp_path / "p3.txt", {"7": "Other"}), key)
    with pytest.raises(ValueError, match="no relation other than Other"):
        semeval_official_score(["Other"], ["Other"])
    with pytest.raises(ValueError, match="2 predictions for 1 gold"):
        semeval_official_score(["Other", "Other"], ["Other"])


def test_cli_prints_the_official_figure(scorer_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["score", "semeval2010", str(scorer_dir / "proposed_answer1.txt"), str(scorer_dir / "answer_key1.txt")])
        == 0
    )
    assert capsys.readouterr().out.strip() == "64.09"
    assert (
        main(["score", "semeval2010", str(scorer_dir / "proposed_answer4.txt"), str(scorer_dir / "answer_key1.txt")])
        == 2
    )
    assert "Message-Topc" in capsys.readouterr().err
