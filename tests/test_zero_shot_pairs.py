"""``benchmarks/zero_shot_pairs.py``: a pair bi-encoder scored before any training."""

from __future__ import annotations

import pytest
from benchmark_scripts import load

TINY = ["model.pretrained=null", "data.text_prefix=null", "model.hidden_size=32", "model.num_layers=1",
        "model.num_heads=2", "model.intermediate_size=32", "model.max_position=64", "data.max_length=48",
        "data.kg=null"]


@pytest.fixture
def pairs(tmp_path):
    folder = tmp_path / "pairs"
    folder.mkdir()
    rows = [("北京天气怎么样", "北京的天气如何", "1"), ("我想买手机", "今天吃什么", "0"),
            ("这本书好看吗", "这本书值得看吗", "1"), ("房间太小了", "服务很热情", "0")] * 4
    for split in ("train", "dev", "test"):
        text = "text_a\ttext_b\tlabel\n" + "".join(f"{a}{i}\t{b}\t{y}\n" for i, (a, b, y) in enumerate(rows))
        (folder / f"{split}.tsv").write_text(text, encoding="utf-8")
    return folder


def test_figures_of_an_untrained_bi_encoder(pairs, shared_data, tmp_path, capsys):
    bench = load("zero_shot_pairs")
    sets = [*TINY, f"data.dataset={pairs}", f"data.root={shared_data}", f"data.cache_dir={tmp_path / 'cache'}"]
    f = bench.zero_shot("kbert/lcqmc_e5_separate", sets)
    assert f["dev_pairs"] == f["test_pairs"] == 16
    # the same texts in every split: t fitted on training pairs classifies dev and test alike, and
    # no threshold does better on dev than the one fitted there
    assert f["dev"] == f["test"] and f["dev_fitted"] >= f["dev"] >= 50.0
    table = bench.report({"kbert/lcqmc_e5_separate": f})
    assert "| kbert/lcqmc_e5_separate |" in table and f"**{f['test']:.2f}**" in table

    capsys.readouterr()
    assert bench.main(["kbert/lcqmc_e5", "--set", *sets]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "zero_shot_pairs.py: error: kbert/lcqmc_e5: model.pair_encoding must be separate (a bi-encoder) " \
                  "for a zero-shot cosine"
