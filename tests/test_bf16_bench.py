"""``benchmarks/bench_bf16.py`` runs the same model's training step and inference batch in fp32 and
under bf16 autocast, its losses in fp32 either way, and reports a ratio per arm (nothing is timed here)."""

import torch
from benchmark_scripts import load

TINY = ["data.limit.train=16", "train.batch_size=4"]


def test_both_precisions_train_and_every_arm_is_reported(shared_data, minilm, tmp_path, capsys):
    bench = load("bench_bf16")
    sets = [*TINY, f"data.root={shared_data}", f"data.cache_dir={tmp_path / 'cache'}"]
    arm = bench.Arm("relation/semeval_minilm_entity_start", sets, batches=2)
    assert len(arm.batches) == 2
    before = [p.detach().clone() for p in arm.model.parameters()]
    arm.run(steps=1, rounds=2, warmup=0)
    assert all(len(times) == 2 for times in arm.times.values())
    assert arm.losses == {"fp32": [torch.float32] * 2, "bf16": [torch.float32] * 2}  # the loss stays fp32
    assert any(not torch.equal(b, p) for b, p in zip(before, arm.model.parameters(), strict=True))
    table = bench.main(["--arms", "kbert/sst2_minilm", "relation/semeval_minilm_entity_start", "--steps", "1",
                        "--rounds", "1", "--warmup", "0", "--batches", "1", *(x for s in sets for x in ("--set", s))])
    rows = [line.split(" | ") for line in table.splitlines() if line.startswith("| ") and "/" in line.split(" | ")[1]]
    assert [r[1] for r in rows] == ["kbert/sst2_minilm", "relation/semeval_minilm_entity_start"]
    assert all(r[4].endswith("×") and float(r[4][:-1]) > 0 for r in rows) and "CPU: " in table
