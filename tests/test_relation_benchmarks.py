"""The plain relation baselines and the equal-budget comparison script in ``benchmarks/``."""

import argparse
import dataclasses
import json
import sys
from pathlib import Path

import pytest
import torch
from benchmark_scripts import load

from graphmatch.tasks.recipes.resolve import resolve

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "datasets" / "samples" / "relation"


@pytest.mark.parametrize("model", ["att_blstm", "entity_attention"])
def test_baseline_trains_selects_on_dev_and_scores_test_once(tmp_path, model):
    base = load("baseline_relation")
    base.main([model, "--epochs", "3", "--seed", "1", "--train-file", str(SAMPLES / "train.txt"),
               "--test-file", str(SAMPLES / "test.txt"), "--dev-size", "8", "--out", str(tmp_path)])
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    history = json.loads((tmp_path / "history.json").read_text())
    assert [h["epoch"] for h in history] == [1, 2, 3] and metrics["epochs"] == 3
    assert history[-1]["train_loss"] < history[0]["train_loss"]
    best = max(history, key=lambda h: h["dev"]["semeval2010"])  # first best epoch on dev
    assert metrics["best_epoch"] == best["epoch"] and metrics["dev"] == best["dev"]
    assert set(metrics["test"]) == {"semeval2010", "accuracy"}


def test_baseline_models_ignore_padding():
    base = load("baseline_relation")
    torch.manual_seed(0)
    examples = base.read_semeval_file(SAMPLES / "train.txt")[:3]
    stoi = {t: i + 2 for i, t in enumerate({t for ex in examples for t in base.marked(ex).tokens})}
    items = base.encode(examples, stoi)
    for model in (base.AttBLSTM(len(stoi) + 2, 19, embedding_dim=8, hidden_size=6),
                  base.EntityAttentionBiLSTM(len(stoi) + 2, 19, embedding_dim=8, hidden_size=6, positions=101,
                                             position_dim=4, heads=2, attention_size=5)):
        model.eval()
        together = model(**base.collate(items))
        for k, item in enumerate(items):
            assert torch.allclose(together[k], model(**base.collate([item]))[0], atol=1e-5)


HERE = "c0ffee" + "1" * 34  # the commit these tests pretend to be checked out at
OTHER = "4a24c11" + "0" * 33


@pytest.fixture(autouse=True)
def at_commit(monkeypatch):
    """The scripts see the checkout at ``HERE`` with a clean tree."""
    import graphmatch.engine.runs.provenance as prov

    monkeypatch.setattr(prov, "git_state", lambda where=None: {"commit": HERE, "dirty": False})


def _made_by(commit: str | None = HERE, dirty: bool = False) -> dict:
    if commit is None:
        return {}
    return {"provenance": {"graphmatch": "0.1.0", "commit": commit, "dirty": dirty, "python": "3.12.0",
                           "torch": "2.13.0", "caches": {}}}


def _fake_run(folder: Path, seed: int, test: float, dev: float, commit: str | None = HERE) -> None:
    folder.mkdir(parents=True)
    (folder / "metrics.json").write_text(json.dumps({
        "seed": seed, "epochs": 17, "best_epoch": 12, "time_s": 700.0,
        "dev": {"semeval2010": dev}, "test": {"semeval2010": test}, **_made_by(commit),
    }))
    (folder / "COMPLETE").write_text("done\n")


def test_budget_table_from_run_folders(tmp_path):
    budget = load("relation_budget")
    for seed, (a, b, c) in zip((42, 43, 44), [(74.0, 72.0, 75.0), (75.0, 73.0, 76.0), (76.0, 72.5, 75.5)], strict=True):
        _fake_run(tmp_path / "ours-att_blstm" / f"seed-{seed}", seed, a, a - 1)
        _fake_run(tmp_path / "baseline-att_blstm" / f"seed-{seed}", seed, b, b - 1)
        _fake_run(tmp_path / "ours-entity_attention" / f"seed-{seed}", seed, c, c - 1)
    table = budget.collect(tmp_path)
    ours = table["att_blstm"]["ours"]
    assert ours["seeds"] == [42, 43, 44] and ours["test"] == pytest.approx((75.0, 1.0))
    assert table["att_blstm"]["baseline"]["test"] == pytest.approx((72.5, 0.5))
    assert "baseline" not in table["entity_attention"]
    cmp = budget.compare(ours, table["att_blstm"]["baseline"])
    assert cmp["delta"] == pytest.approx(2.5) and cmp["exceeds_spread"]  # 2.5 > 1.0 + 0.5
    assert not budget.compare(table["entity_attention"]["ours"], ours)["exceeds_spread"]  # 0.5 < 0.5 + 1.0
    text = budget.markdown(table)
    assert "| att_blstm | ours | 42, 43, 44 | 17 | 75.00 ± 1.00 | 74.00 ± 1.00 |" in text
    assert "| att_blstm: ours − baseline | +2.50 | 1.50 | yes |" in text
    assert "| ours: entity_attention − att_blstm | +0.50 | 1.50 | no |" in text
    assert text.endswith(f"\nRuns made by graphmatch 0.1.0, commit {HERE[:12]}, python 3.12.0, torch 2.13.0.\n")
    doc = tmp_path / "results.md"
    doc.write_text("# R\n<!-- results:relation_budget -->\nold\n<!-- /results:relation_budget -->\nkept\n")
    budget.write_block(doc, text)
    assert doc.read_text() == f"# R\n<!-- results:relation_budget -->\n{text}<!-- /results:relation_budget -->\nkept\n"
    doc.write_text("no block")
    with pytest.raises(SystemExit, match="no <!-- results:relation_budget --> block"):
        budget.write_block(doc, text)


def _fake_seeds(folder, recipe: str, tests: list[float], commit: str | None = HERE, dirty: bool = False,
                metric: str = "accuracy") -> None:
    """A finished multi-seed run folder's aggregate, as the engine writes it."""
    folder.mkdir(parents=True)
    mean = sum(tests) / len(tests)
    std = (sum((t - mean) ** 2 for t in tests) / (len(tests) - 1)) ** 0.5 if len(tests) > 1 else 0.0
    stat = {"mean": mean, "std": std, "values": tests}
    (folder / "metrics.json").write_text(json.dumps({
        "recipe": recipe, "seeds": [42, 43, 44][: len(tests)], "time_s": 10.0 * len(tests),
        "dev": {metric: stat}, "test": {metric: stat}, **_made_by(commit, dirty),
    }))
    (folder / "COMPLETE").write_text("done\n")


def test_results_tables_replace_their_blocks(tmp_path):
    results = load("results")
    comp = next(c for c in results.COMPARISONS if c.name == "kbert_hownet")
    doc = tmp_path / "results.md"
    doc.write_text("intro\n<!-- results:kbert_hownet -->\nstale\n<!-- /results:kbert_hownet -->\nend\n")
    assert results.table(tmp_path, comp) is None  # no run folders yet
    assert results.write_doc(tmp_path, [comp], doc) == [] and "stale" in doc.read_text()
    _fake_seeds(results.run_dir(tmp_path, comp, comp.arms[0]), "a", [85.0, 86.0, 87.0])
    _fake_seeds(results.run_dir(tmp_path, comp, comp.arms[1]), "b", [84.0, 84.5, 85.0])
    assert results.write_doc(tmp_path, [comp], doc) == ["kbert_hownet"]
    text = doc.read_text()
    assert text.startswith("intro\n<!-- results:kbert_hownet -->\n")
    assert text.endswith("<!-- /results:kbert_hownet -->\nend\n")
    assert "stale" not in text and "| with HowNet | `kbert/chnsenticorp_hownet_quick` | 42, 43, 44 |" in text
    assert "86.00 ± 1.00" in text and "84.50 ± 0.50" in text and "85.00, 86.00, 87.00" in text
    # 86.0 - 84.5 = 1.5 > 1.0 + 0.5 is false: equal to the spread is not beyond it
    assert "+1.50 test accuracy, which does not exceed the spread (sum of the two standard deviations, 1.50)" in text
    assert "| 30 (all seeds) |" in text  # no seed folders: the total
    assert f"Runs made by graphmatch 0.1.0, commit {HERE[:12]}, python 3.12.0, torch 2.13.0.\n<!-- /" in text
    # a single seed on one side: no verdict about the spread
    _fake_seeds(results.run_dir(tmp_path / "one", comp, comp.arms[0]), "a", [85.0, 86.0])
    _fake_seeds(results.run_dir(tmp_path / "one", comp, comp.arms[1]), "b", [80.0])
    assert "one side has a single seed, so there is no spread" in results.table(tmp_path / "one", comp)


@pytest.mark.parametrize("model", ["att_blstm", "entity_attention"])
def test_budget_commands_are_valid(tmp_path, model):
    budget = load("relation_budget")
    args = argparse.Namespace(epochs=17, threads=1, data_dir="DATA", out=tmp_path)
    ours = budget.command("ours", model, 43, tmp_path / "run", args)
    sets = ours[ours.index("--set") + 1:]
    config = resolve(ours[ours.index("train") + 1], sets)
    assert (config["train"]["epochs"], config["train"]["patience"], config["train"]["seed"]) == (17, None, 43)
    assert config["train"]["precision"] == "32-true"  # the table's precision, whatever auto is on this CPU
    base = budget.command("baseline", model, 43, tmp_path / "run", args)
    assert base[1].endswith("baseline_relation.py") and base[2:7] == [model, "--epochs", "17", "--seed", "43"]


def _kbert_doc(tmp_path: Path) -> Path:
    doc = tmp_path / "results.md"
    doc.write_text("<!-- results:kbert_hownet -->\nstale\n<!-- /results:kbert_hownet -->\n")
    return doc


def _report(results, tmp_path, *extra) -> int:
    return results.main(["--report", "--runs", str(tmp_path / "runs"), "--doc", str(tmp_path / "results.md"),
                         "--only", "kbert_hownet", *extra])


@pytest.mark.parametrize(("commit", "dirty", "named"), [
    (OTHER, False, f"was made by commit {OTHER[:12]}, not by the current commit {HERE[:12]}"),
    (HERE, True, f"was made by commit {HERE[:12]} with uncommitted changes, not by the current commit {HERE[:12]}"),
    (None, False, "was made by an unknown commit (its metrics.json records no provenance)"),
])
def test_results_refuse_run_folders_of_other_code(tmp_path, capsys, commit, dirty, named):
    results = load("results")
    comp = next(c for c in results.COMPARISONS if c.name == "kbert_hownet")
    doc = _kbert_doc(tmp_path)
    _fake_seeds(results.run_dir(tmp_path / "runs", comp, comp.arms[0]), "a", [85.0, 86.0, 87.0])
    _fake_seeds(results.run_dir(tmp_path / "runs", comp, comp.arms[1]), "b", [84.0, 84.5, 85.0], commit, dirty)
    assert _report(results, tmp_path) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("results.py: error: ") and named in err
    assert "stale" in doc.read_text()  # nothing written
    if commit is None:
        assert "--reuse-from" not in err
        return
    assert f"--reuse-from {commit[:12]}" in err
    # named explicitly, it is used, and the table says which commits made its runs
    assert _report(results, tmp_path, "--reuse-from", commit[:7]) == 0
    text = doc.read_text()
    if commit == HERE:
        assert f"Runs made by graphmatch 0.1.0, commit {HERE[:12]}, python" in text
    else:
        assert (f"Runs made by graphmatch 0.1.0, commit {HERE[:12]}, python 3.12.0, torch 2.13.0 (with HowNet); "
                f"graphmatch 0.1.0, commit {OTHER[:12]}, python 3.12.0, torch 2.13.0 (no knowledge).") in text
    assert _report(results, tmp_path, "--reuse-from", "nothex") == 2
    assert "--reuse-from takes a commit" in capsys.readouterr().err


def test_results_never_train_over_or_beside_a_stale_run(tmp_path, monkeypatch):
    import graphmatch.engine

    results = load("results")
    comp = next(c for c in results.COMPARISONS if c.name == "kbert_hownet")
    trained = []

    def fake_train(recipe, overrides, out, seeds=1, **_):
        trained.append(recipe)
        _fake_seeds(out, recipe, [80.0, 81.0, 82.0], commit=None)  # an engine that records no provenance

    monkeypatch.setattr(graphmatch.engine, "train", fake_train)
    first, second = (results.run_dir(tmp_path, comp, arm) for arm in comp.arms)
    _fake_seeds(first, "a", [85.0, 86.0, 87.0], OTHER)
    with pytest.raises(results.StaleRun, match=f"made by commit {OTHER[:12]}"):
        results.train_missing(tmp_path, comp, None)
    assert trained == []  # checked before anything trains
    results.train_missing(tmp_path, comp, None, reuse=results.Reuse(HERE, (OTHER[:12],)))
    assert trained == [comp.arms[1].recipe]  # the other commit's arm reused, the missing one trained
    made = json.loads((second / "metrics.json").read_text())["provenance"]
    assert made["commit"] == HERE and made["dirty"] is False  # stamped by the script that made it
    results.train_missing(tmp_path, comp, None, reuse=results.Reuse(HERE, (OTHER[:12],)))
    assert trained == [comp.arms[1].recipe]  # now both are reused


def test_budget_refuses_run_folders_of_other_code(tmp_path, capsys):
    budget = load("relation_budget")
    _fake_run(tmp_path / "ours-att_blstm" / "seed-42", 42, 74.0, 73.0)
    _fake_run(tmp_path / "ours-att_blstm" / "seed-43", 43, 75.0, 74.0, commit=OTHER)
    argv = ["--out", str(tmp_path), "--models", "att_blstm", "--impls", "ours", "--seeds", "2", "--table-only"]
    with pytest.raises(SystemExit) as stop:
        budget.main(argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("\n") == 1
    assert f"seed-43 was made by commit {OTHER[:12]}, not by the current commit {HERE[:12]}" in err
    budget.main([*argv, "--reuse-from", OTHER[:9]])
    table = json.loads((tmp_path / "table.json").read_text())
    assert [r["commit"] for r in table["att_blstm"]["ours"]["provenance"]] == [HERE, OTHER]
    assert f"commit {OTHER[:12]}" in (tmp_path / "table.md").read_text()
    # a finished run of other code is refused before any training starts, not only in the table
    with pytest.raises(SystemExit):
        budget.main(argv[:-1])
    assert "seed-43 was made by commit" in capsys.readouterr().err


def test_verify_finds_the_seed_in_the_document():
    results = load("results")
    doc = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    assert results.doc_figure(doc, "let_senses", ("senses, sememe attention",)) == "61.99"
    assert results.doc_figure(doc, "let_senses", ("no senses",), seed=44) == "63.09"
    assert results.doc_figure(doc, "relation_budget", ("att_blstm", "baseline")) == "74.04"
    assert results.doc_figure(doc, "relation_budget", ("att_blstm", "ours"), seed=47) is None
    assert results.doc_figure(doc, "nothing", ("att_blstm",)) is None
    names = [(j.table, j.label) for j in results.retrains(results.COMPARISONS, Path("runs"), Path("b"), "DATA")]
    assert ("let_senses", "senses, no sememe attention") in names and ("relation_budget", "att_blstm ours") in names
    assert len(names) == sum(len(c.arms) for c in results.COMPARISONS) + 4


def test_verify_commands_are_valid_single_seed_trainings(tmp_path, monkeypatch):
    results = load("results")
    written = []

    def write_corpus(out, data_dir, share):  # a stand-in for the resampled SemEval corpus
        out.mkdir(parents=True)
        (out / "test.tsv").write_text("")
        written.append((out, data_dir, share))
        return f"{out}: written"

    monkeypatch.setattr(results._script("imbalanced_relation"), "write_corpus", write_corpus)
    for job in results.retrains(results.COMPARISONS, tmp_path / "runs", tmp_path / "budget", "DATA"):
        cmd = job.command(tmp_path / "out")
        if job.table.startswith("imbalanced"):
            corpus = tmp_path.resolve() / "runs" / "corpora" / "imbalanced-0.8"
            assert f"data.train_file={corpus}/train.tsv" in cmd and written == [(corpus, "DATA", 0.8)]
        assert cmd[0] == sys.executable and str(tmp_path / "out") in cmd
        if "graphmatch.cli.main" not in cmd:  # the plain baseline scripts
            assert cmd[1].endswith(("baseline_relation.py", "plain_e5.py")) and cmd[cmd.index("--seed") + 1] == "42"
            continue
        config = resolve(cmd[cmd.index("train") + 1], cmd[cmd.index("--set") + 1:])
        assert (config["train"]["seed"], config["train"]["threads"]) == (42, 1), job.label
        # every table was made in fp32 (pinned, unless the arm sets its own: bf16) with the optimiser's loop
        # over tensors, and K-BERT and LET run padded
        pinned = [s for s in cmd if s.startswith("train.precision=")]
        defaults = job.label == "defaults"  # the one arm that sets today's defaults itself
        assert len(pinned) == 1 and config["train"]["precision"] == (
            "bf16-mixed" if job.label in ("bf16-mixed", "defaults") else "32-true"), job.label
        assert config["optim"]["fused"] is defaults, job.label
        if config["task"] in ("kbert", "let"):
            assert config["model"]["unpadded"] is config["model"]["attention_fp32"] is defaults, job.label
        assert "--seeds" not in cmd and job.folder.name == "seed-42"


# a stand-in training: writes the metrics given on its command line, and fails unless its
# GRAPHMATCH_CACHE is a folder that does not exist yet (an empty cache)
_STAND_IN = """
import json, os, sys
from pathlib import Path
assert not Path(os.environ["GRAPHMATCH_CACHE"]).exists()
out = Path(sys.argv[1]); out.mkdir(parents=True)
(out / "metrics.json").write_text(json.dumps({"test": {"accuracy": float(sys.argv[2])}, "dev": {"accuracy": 50.0}}))
"""


def test_verify_compares_every_figure_exactly(tmp_path, capsys):
    results = load("results")
    doc = tmp_path / "results.md"
    doc.write_text("<!-- results:t -->\n| arm | seeds | test per seed |\n|---|---|---|\n| a | 42, 43 | 61.99, 1 |\n"
                   "| b | 42, 43 | 63.02, 2 |\n<!-- /results:t -->\n")
    folder = tmp_path / "runs" / "c" / "seed-42"
    folder.mkdir(parents=True)
    (folder / "metrics.json").write_text(json.dumps({"test": {"accuracy": 61.99000001}, "dev": {"accuracy": 50.0}}))

    def job(label, value, run_folder=tmp_path / "none"):
        return results.Retrain("t", label, lambda out: [sys.executable, "-c", _STAND_IN, str(out), value],
                               run_folder, (label,), (("test", "accuracy"), ("dev", "accuracy")))

    assert results.verify([job("a", "61.99")], doc)  # the document's two decimals
    assert "| t / a / test accuracy (results.md) | 61.99 | 61.99 | yes |" in capsys.readouterr().out
    assert not results.verify([job("a", "61.99"), job("b", "61.99")], doc)
    out = capsys.readouterr().out
    assert "| t / b / test accuracy (results.md) | 63.02 | 61.99 | **no** |" in out and "1 of 2 the same" in out
    # a run folder is compared to the last digit
    assert not results.verify([job("c", "61.99", folder)], doc)
    out = capsys.readouterr().out
    assert "| t / c / test accuracy (run folder) | 61.99000001 | 61.99 | **no** |" in out
    assert "| t / c / dev accuracy (run folder) | 50.0 | 50.0 | yes |" in out
    failing = results.Retrain("t", "a", lambda out: [sys.executable, "-c", "raise SystemExit(3)"], folder, ("a",),
                              (("test", "accuracy"),))
    assert not results.verify([failing], doc)
    assert "| t / a | training | failed (exit 3) | no |" in capsys.readouterr().out


def test_learning_curve_plots_each_arm_over_the_shares_that_finished(tmp_path):
    results = load("results")
    comps = {c.name: c for c in results.COMPARISONS}
    png = tmp_path / "curve.png"
    curve = dataclasses.replace(results.CURVES[0], png=png)
    full = comps["minilm_wordnet"]
    for arm, tests in zip(full.arms, ([86.0, 87.0, 88.0], [85.0, 85.0, 85.0]), strict=True):
        _fake_seeds(results.run_dir(tmp_path, full, arm), arm.recipe, tests, metric="semeval2010")
    nodoc = tmp_path / "none.md"
    assert results.learning_curve(tmp_path, curve, doc=nodoc) is None and not png.exists()  # one share: no curve
    small = comps["minilm_wordnet_10"]
    for arm, tests in zip(small.arms, ([70.0, 72.0, 74.0], [60.0, 61.0, 62.0]), strict=True):
        _fake_seeds(results.run_dir(tmp_path, small, arm), arm.recipe, tests, metric="semeval2010")
    points = results.learning_curve(tmp_path, curve, doc=nodoc)
    assert points == {"WordNet": [(0.1, 72.0, 2.0), (1.0, 87.0, 1.0)],
                      "no knowledge": [(0.1, 61.0, 1.0), (1.0, 85.0, 0.0)]}
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # a share without run folders is read from its published table
    doc = tmp_path / "results.md"
    doc.write_text("<!-- results:minilm_wordnet_25 -->\n| arm | recipe | seeds | dev semeval2010 | test semeval2010 |\n"
                   "|---|---|---|---|---|\n| WordNet | `r` | 42 | 1.00 ± 0.50 | 79.28 ± 0.84 |\n"
                   "<!-- /results:minilm_wordnet_25 -->\n")
    points = results.learning_curve(tmp_path, curve, doc=doc)
    assert points["WordNet"] == [(0.1, 72.0, 2.0), (0.25, 79.28, 0.84), (1.0, 87.0, 1.0)]
    assert points["no knowledge"] == [(0.1, 61.0, 1.0), (1.0, 85.0, 0.0)]


def test_seeds_of_several_commits_are_reused_when_each_is_named(tmp_path):
    """An arm whose seeds were made by different commits (its aggregate records no single commit,
    only ``commits``) is refused by its first seed's commit, and reused when every seed's is named."""
    results = load("results")
    comp = next(c for c in results.COMPARISONS if c.name == "kbert_hownet")
    folder = results.run_dir(tmp_path, comp, comp.arms[0])
    _fake_seeds(folder, "a", [85.0, 86.0])
    aggregate = json.loads((folder / "metrics.json").read_text())
    aggregate["provenance"] = {**aggregate["provenance"], "commit": None, "dirty": None, "commits": [HERE, OTHER]}
    (folder / "metrics.json").write_text(json.dumps(aggregate))
    for seed, commit in ((42, HERE), (43, OTHER)):
        _fake_run(folder / f"seed-{seed}", seed, 85.0, 84.0, commit=commit)
    with pytest.raises(results.StaleRun, match=f"made by commit {OTHER[:12]}"):
        results.Reuse(HERE).check(folder)
    assert [r["commit"] for r in results.Reuse(HERE, (OTHER[:7],)).check(folder)] == [None, HERE, OTHER]
