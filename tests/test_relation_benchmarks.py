"""The plain relation baselines and the equal-budget comparison script in ``benchmarks/``."""

import argparse
import importlib.util
import json
import sys
from pathlib import Path

import pytest
import torch

from graphmatch.engine.config import resolve

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "datasets" / "samples" / "relation"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = sys.modules[name] = importlib.util.module_from_spec(spec)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("model", ["att_blstm", "entity_attention"])
def test_baseline_trains_selects_on_dev_and_scores_test_once(tmp_path, model):
    base = _load("baseline_relation")
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
    base = _load("baseline_relation")
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


def _fake_run(folder: Path, seed: int, test: float, dev: float) -> None:
    folder.mkdir(parents=True)
    (folder / "metrics.json").write_text(json.dumps({
        "seed": seed, "epochs": 17, "best_epoch": 12, "time_s": 700.0,
        "dev": {"semeval2010": dev}, "test": {"semeval2010": test},
    }))


def test_budget_table_from_run_folders(tmp_path):
    budget = _load("relation_budget")
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
    doc = tmp_path / "results.md"
    doc.write_text("# R\n<!-- results:relation_budget -->\nold\n<!-- /results:relation_budget -->\nkept\n")
    budget.write_block(doc, text)
    assert doc.read_text() == f"# R\n<!-- results:relation_budget -->\n{text}<!-- /results:relation_budget -->\nkept\n"
    doc.write_text("no block")
    with pytest.raises(SystemExit, match="no <!-- results:relation_budget --> block"):
        budget.write_block(doc, text)


def _fake_seeds(folder, recipe: str, tests: list[float]) -> None:
    """A multi-seed run folder's aggregate, as the engine writes it."""
    folder.mkdir(parents=True)
    mean = sum(tests) / len(tests)
    std = (sum((t - mean) ** 2 for t in tests) / (len(tests) - 1)) ** 0.5 if len(tests) > 1 else 0.0
    stat = {"mean": mean, "std": std, "values": tests}
    (folder / "metrics.json").write_text(json.dumps({
        "recipe": recipe, "seeds": [42, 43, 44][: len(tests)], "time_s": 10.0 * len(tests),
        "dev": {"accuracy": stat}, "test": {"accuracy": stat},
    }))


def test_results_tables_replace_their_blocks(tmp_path):
    results = _load("results")
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
    # a single seed on one side: no verdict about the spread
    _fake_seeds(results.run_dir(tmp_path / "one", comp, comp.arms[0]), "a", [85.0, 86.0])
    _fake_seeds(results.run_dir(tmp_path / "one", comp, comp.arms[1]), "b", [80.0])
    assert "one side has a single seed, so there is no spread" in results.table(tmp_path / "one", comp)


@pytest.mark.parametrize("model", ["att_blstm", "entity_attention"])
def test_budget_commands_are_valid(tmp_path, model):
    budget = _load("relation_budget")
    args = argparse.Namespace(epochs=17, threads=1, data_dir="DATA", out=tmp_path)
    ours = budget.command("ours", model, 43, tmp_path / "run", args)
    sets = ours[ours.index("--set") + 1:]
    config = resolve(ours[ours.index("train") + 1], sets)
    assert (config["train"]["epochs"], config["train"]["patience"], config["train"]["seed"]) == (17, None, 43)
    base = budget.command("baseline", model, 43, tmp_path / "run", args)
    assert base[1].endswith("baseline_relation.py") and base[2:7] == [model, "--epochs", "17", "--seed", "43"]
