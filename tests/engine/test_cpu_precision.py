"""``train.precision: auto`` on a CPU is bf16-mixed where the CPU has bf16 units (``avx512_bf16``,
``amx_bf16``) and fp32 elsewhere; bf16 asked for without them warns and runs; ``predict`` and
``evaluate`` follow the run's precision unless ``--precision`` says otherwise; provenance records
the precision in force and the flags that chose it."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
import torch
from engine_helpers import TOY, TOY_QUICK

from graphmatch.engine import resolve, train
from graphmatch.engine.inference.predictor import Predictor
from graphmatch.engine.runs.provenance import describe
from graphmatch.engine.runs.restore import evaluate, load, predict_graph
from graphmatch.engine.training import precision as cpu
from graphmatch.engine.training.trainer import build_trainer
from graphmatch.engine.training.trainer import precision as train_precision
from graphmatch.tasks.recipes.sections import Recipe

AMD = frozenset({"fpu", "avx512f", "avx512_bf16"})
XEON = frozenset({"fpu", "avx512f", "amx_tile", "amx_bf16", "amx_int8"})
OLD = frozenset({"fpu", "avx2", "avx512f"})


@pytest.fixture
def flags(monkeypatch: pytest.MonkeyPatch):
    """Set the CPU's flags: ``flags(AMD)``."""
    return lambda found: monkeypatch.setattr(cpu, "cpu_flags", lambda path="/proc/cpuinfo": found)


def _train(*sets: str):
    return Recipe.of(resolve(TOY, list(sets))).train


def test_cpu_flags_are_read_from_cpuinfo(tmp_path: Path) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu avx512f avx512_bf16 sse\n\n"
                    "processor\t: 1\nflags\t\t: fpu\n", encoding="utf-8")
    assert cpu.cpu_flags(str(info)) == {"fpu", "avx512f", "avx512_bf16", "sse"}
    assert cpu.cpu_flags(str(tmp_path / "none")) == frozenset()  # not Linux: no flags, fp32


@pytest.mark.parametrize(("found", "units", "expected"), [(AMD, ("avx512_bf16",), "bf16-mixed"),
                                                         (XEON, ("amx_bf16",), "bf16-mixed"),
                                                         (OLD, (), "32-true")])
def test_auto_is_bf16_where_the_cpu_has_bf16_units(flags, found, units, expected) -> None:
    flags(found)
    assert cpu.bf16_units() == units
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert train_precision(_train()) == expected
        assert build_trainer(resolve(TOY), None).precision == expected
        assert train_precision(_train("train.precision=32")) == "32-true"  # pinned: whatever the CPU


def test_bf16_without_bf16_units_warns_once_and_runs(flags) -> None:
    flags(OLD)
    with pytest.warns(UserWarning, match=r"^precision bf16-mixed: this CPU has no bf16 units .* slower than fp32"):
        assert train_precision(_train("train.precision=bf16-mixed")) == "bf16-mixed"
    flags(AMD)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert train_precision(_train("train.precision=bf16-mixed")) == "bf16-mixed"


def test_an_unknown_precision_is_a_one_line_error() -> None:
    with pytest.raises(ValueError, match=r"^train.precision must be one of .*bf16-mixed.*, got 'bf17'$"):
        resolve(TOY, ["train.precision=bf17"])
    from graphmatch.engine.arguments import check_precision

    with pytest.raises(ValueError, match=r"^--precision must be one of auto, 32-true, bf16-mixed, got 'fp8'$"):
        check_precision("fp8")
    with pytest.raises(ValueError, match="--precision bf16-mixed and --quantize"):
        check_precision("bf16-mixed", "int8")


def test_autocast_and_fp32_outputs() -> None:
    with cpu.autocast("bf16-mixed"):
        assert torch.nn.Linear(4, 2)(torch.randn(3, 4)).dtype == torch.bfloat16
    with cpu.autocast("32-true"):
        assert torch.nn.Linear(4, 2)(torch.randn(3, 4)).dtype == torch.float32
    with pytest.raises(ValueError, match="precision '16-mixed'"), cpu.autocast("16-mixed"):
        pass
    out = cpu.to_fp32((torch.ones(2, dtype=torch.bfloat16), {"a": torch.ones(1, dtype=torch.bfloat16)},
                       torch.ones(1, dtype=torch.long)))
    assert [out[0].dtype, out[1]["a"].dtype, out[2].dtype] == [torch.float32, torch.float32, torch.long]
    assert cpu.inference_precision("16-mixed") == "32-true" and cpu.inference_precision("auto", "int8") == "32-true"


@pytest.mark.parametrize(("found", "in_force", "units"), [(AMD, "bf16-mixed", ["avx512_bf16"]),
                                                         (OLD, "32-true", [])])
def test_provenance_records_the_precision_and_the_flags(flags, tmp_path: Path, found, in_force, units) -> None:
    flags(found)
    run = train(TOY_QUICK, ["train.epochs=1"], tmp_path / "run")
    record = json.loads((run / "metrics.json").read_text(encoding="utf-8"))["provenance"]
    assert record["precision"] == {"requested": "auto", "in_force": in_force, "cpu_bf16": units}
    assert f"precision {in_force} (auto; CPU: {', '.join(units) or 'no bf16 units'})" in describe(record)
    assert f"precision {in_force} (auto; CPU:" in (run / "summary.md").read_text(encoding="utf-8")


def test_predict_and_evaluate_follow_the_run_unless_told(flags, tmp_path: Path) -> None:
    flags(AMD)
    run = train(TOY_QUICK, ["train.epochs=1"], tmp_path / "run")  # auto: trained in bf16-mixed
    task, model = load(run)
    assert Predictor(task, model).precision == "bf16-mixed"
    assert Predictor(task, model, precision="32-true").precision == "32-true"
    assert Predictor(task, model, quantize="int8").precision == "32-true"  # an int8 model: no autocast
    flags(OLD)
    assert Predictor(task, model).precision == "32-true"  # auto on a CPU without bf16 units
    with pytest.warns(UserWarning, match="no bf16 units"):
        assert Predictor.from_run(run, precision="bf16-mixed").precision == "bf16-mixed"
    flags(AMD)
    data = task.datasets()["test"]
    bf16 = predict_graph(task, model, data[0])
    fp32 = predict_graph(task, model, data[0], precision="32-true")
    assert bf16["pred"] == fp32["pred"] and bf16["prob"] != fp32["prob"]  # autocast ran, probabilities in fp32
    assert abs(bf16["prob"] - fp32["prob"]) < 0.05
    rows = {}
    for name, given in (("mixed", "bf16-mixed"), ("exact", "32-true"), ("run", None)):
        evaluate(run, precision=given, predictions=tmp_path / f"{name}.jsonl")
        rows[name] = [json.loads(line)["prob"] for line in (tmp_path / f"{name}.jsonl").read_text().splitlines()]
    assert rows["run"] == rows["mixed"] != rows["exact"]  # the run's own precision is bf16-mixed
    assert max(abs(a - b) for a, b in zip(rows["mixed"], rows["exact"], strict=True)) < 0.05
    with pytest.raises(ValueError, match="--precision must be one of"):
        evaluate(run, precision="half")
