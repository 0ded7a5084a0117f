"""``benchmarks/bench_yardstick.py`` trains K-BERT's model and a plain ``BertModel`` classifier of the
same weights on the same sentences and reports K-BERT's throughput as a share of plain's (nothing
is timed here)."""

import torch
from benchmark_scripts import load

TINY = ["model.hidden_size=32", "model.num_layers=1", "model.num_heads=2", "model.intermediate_size=32",
        "model.max_position=64", "data.max_length=48", "train.batch_size=4"]


def test_both_sides_train_on_the_same_sentences_and_are_reported(shared_data, tmp_path):
    bench = load("bench_yardstick")
    sets = [*TINY, f"data.root={shared_data}", f"data.cache_dir={tmp_path / 'cache'}"]
    arm = bench.Arm("kbert/chnsenticorp_hownet_quick", sets, batches=2, lines=6, precision="fp32")
    # the plain classifier starts from the K-BERT encoder's weights
    kbert_words = arm.model.encoder.embeddings.word.weight
    assert torch.equal(arm.plain.encoder.embeddings.word_embeddings.weight, kbert_words)
    assert [len(ids) for ids, _, _ in arm.plain_batches] == [4, 4] and len(arm.lines) == 6
    before = [p.detach().clone() for p in arm.plain.parameters()], [p.detach().clone() for p in arm.model.parameters()]
    arm.run(rounds=2, warmup=0, predict_rounds=1)
    assert all(len(t) == (1 if k == "predict" else 2) for (k, _), t in arm.times.items())
    for old, model in zip(before, (arm.plain, arm.model), strict=True):
        assert any(not torch.equal(b, p) for b, p in zip(old, model.parameters(), strict=True))
    kbert_tokens, plain_tokens = arm.tokens()
    assert kbert_tokens > plain_tokens / 4 > 0  # the trees (with HowNet) against the padded ids
    table = bench.report([arm], bench.main.__globals__["argparse"].Namespace(precision="fp32", rounds=2,
                                                                             predict_rounds=1, lines=6))
    row = next(line for line in table.splitlines() if line.startswith("| kbert/"))
    assert all(t > 0 for times in arm.times.values() for t in times)
    assert all(cell.strip().endswith("×") and float(cell.strip()[:-1]) >= 0 for cell in row.split("|")[4:7]), row
    assert "CPU: " in table
