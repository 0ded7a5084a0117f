"""``benchmarks/bench_knowledge_cost.py`` times what training computes: its loss is the model's
own on the recipe's batches, its steps train, and its report has every arm (nothing is timed here)."""


import pytest
import torch
from benchmark_scripts import load

TINY = ["data.limit.train=64", "data.limit.dev=8", "data.limit.test=8", "train.batch_size=8",
        "train.progress=false"]


@pytest.fixture(scope="module")
def sets(shared_data, minilm, tmp_path_factory):
    return [*TINY, f"data.root={shared_data}", f"data.cache_dir={tmp_path_factory.mktemp('cache')}"]


def test_the_benchmark_loss_is_the_models_and_its_steps_train(sets):
    bench = load("bench_knowledge_cost")
    arm = bench.Arm("kbert/sst2_minilm_wordnet", sets)
    batch = next(iter(arm.loader))
    arm.model.eval()  # no dropout: the two ways must agree exactly
    with torch.no_grad():
        ours, inputs = arm.loss(batch)
        theirs = arm.task.loss(arm.model(batch), batch)
    assert torch.equal(ours, theirs)
    assert inputs["visible"].shape[1:] == (inputs["token_mask"].size(1),) * 2
    assert bool(batch["token"].branch.any())  # WordNet's branches are in the batches timed
    before = [p.detach().clone() for p in arm.model.parameters()]
    for _ in range(3):
        arm.step(record=True)
    assert all(len(arm.times[c][p]) == 3 for c in ("cpu", "wall") for p in bench.PHASES)
    assert len(arm.lengths) == len(arm.padded) == 24
    assert all(n <= m for n, m in zip(arm.lengths, arm.padded, strict=True))
    assert any(not torch.equal(b, p) for b, p in zip(before, arm.model.parameters(), strict=True))


def test_the_report_has_every_arm_beside_the_first(sets, capsys):
    bench = load("bench_knowledge_cost")
    argv = ["--arms", "kbert/sst2_minilm", "kbert/sst2_minilm_wordnet", "--steps", "1", "--rounds", "2",
            "--warmup", "0"]
    bench.main(argv + [x for s in sets for x in ("--set", s)])
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| kbert/")]
    assert [r.split(" | ")[0] for r in rows] == ["| kbert/sst2_minilm", "| kbert/sst2_minilm_wordnet"] * 2
    assert rows[0].split(" | ")[6] == "1.00" and "load average" in out  # the reference arm against itself
