"""``data.split``: one data file cut into train, dev and test, the same cut at every reading
(training, ``evaluate``), its sizes in one line; bad values one line naming the key, exit 2."""

from __future__ import annotations

import json

import numpy as np
import pytest
from engine_helpers import Crash

from graphmatch.cli.main import main
from graphmatch.data.file_split import split_rows, split_sizes
from graphmatch.data.kbert import KBertClassificationDataset
from graphmatch.engine import train
from graphmatch.tasks.recipes.resolve import resolve

TINY = ["model.hidden_size=32", "model.num_layers=1", "model.num_heads=2", "model.intermediate_size=32",
        "model.max_position=64", "data.max_length=32", "train.progress=false", "train.threads=1",
        "train.max_steps=2", "train.batch_size=8", "data.kg=null"]
TEXTS = ["酒店的房间很干净", "客服不回消息", "房间不错离车站近", "前台态度差", "早餐很好吃", "隔音不好很吵",
         "位置方便", "服务太差了", "床很舒服", "空调坏了", "价格实惠", "卫生间很脏", "环境安静", "电梯太慢",
         "前台热情", "毛巾发黄", "风景很美", "网速很慢", "交通便利", "设施陈旧"]


def _one_file(folder):
    folder.mkdir(parents=True, exist_ok=True)
    chars = sorted({c for text in TEXTS for c in text})
    (folder / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *chars]) + "\n",
                                      encoding="utf-8")
    lines = ["label\ttext_a", *(f"{i % 2}\t{text}" for i, text in enumerate(TEXTS))]
    (folder / "all.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder / "all.tsv"


def _train(tmp_path, data, *extra):
    return main(["train", "kbert/chnsenticorp_hownet_quick", "--out", str(tmp_path / "run"), "--set", *TINY,
                 f"data.dataset={data}", f"data.vocab={data.parent / 'vocab.txt'}",
                 f"data.cache_dir={tmp_path / 'cache'}", *extra])


def test_the_cut_is_fixed_by_the_seed_disjoint_and_whole():
    parts = {s: split_rows(20, s, 0.2, 3, seed=7) for s in ("train", "dev", "test")}
    assert [len(parts[s]) for s in ("train", "dev", "test")] == [13, 4, 3]
    assert np.array_equal(np.sort(np.concatenate(list(parts.values()))), np.arange(20))
    assert all(np.array_equal(rows, np.sort(rows)) for rows in parts.values())  # file order kept
    assert np.array_equal(split_rows(20, "test", 0.2, 3, seed=7), parts["test"])
    assert not np.array_equal(split_rows(20, "test", 0.2, 3, seed=8), parts["test"])
    assert split_sizes(1000, 0.1, 0.05) == {"train": 850, "dev": 100, "test": 50}
    assert split_sizes(5, 0.01, 0.01)["dev"] == 1  # a fraction takes at least one line
    with pytest.raises(ValueError, match="f.tsv: data.split takes 15 dev and 5 test lines of its 20"):
        split_sizes(20, 15, 5, "f.tsv")


def test_one_file_trains_and_evaluate_reads_the_same_test_lines(tmp_path, capsys):
    data = _one_file(tmp_path / "own")
    capsys.readouterr()
    assert _train(tmp_path, data, "data.split={dev: 0.2, test: 3, seed: 7}") == 0
    err = capsys.readouterr().err
    assert f"{data}: data.split (seed 7): train 13, dev 4, test 3 lines" in err.splitlines()
    inputs = json.loads((tmp_path / "run" / "inputs.json").read_text(encoding="utf-8"))
    assert inputs["test data"]["path"] == str(data.resolve())

    for split, size in (("test", 3), ("dev", 4)):
        out = tmp_path / f"{split}.jsonl"
        assert main(["evaluate", str(tmp_path / "run"), "--split", split, "--predictions", str(out)]) == 0
        rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
        rows_of_split = split_rows(20, split, 0.2, 3, seed=7)
        assert [row["gold"] for row in rows] == [str(i % 2) for i in rows_of_split] and len(rows) == size
        read = KBertClassificationDataset(str(data), split, kg=None, vocab=data.parent / "vocab.txt", labels=["0", "1"],
                                          cache=tmp_path / "cache", split_of={"dev": 0.2, "test": 3, "seed": 7})
        assert [ex.text_a for ex in read.read()] == [TEXTS[i] for i in rows_of_split]
    assert f"{data}: data.split (seed 7): train 13, dev 4, test 3 lines" in capsys.readouterr().err
    data.unlink()  # predict needs no data file
    assert main(["predict", str(tmp_path / "run"), "房间不错", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["label"] in ("0", "1") and "data.split" not in err


@pytest.mark.parametrize(("value", "message"), [
    ("data.split={dev: 0.6, test: 0.4}", "data.split: dev + test = 1 of the file leaves nothing to train on"),
    ("data.split.dev=-0.1", "data.split.dev must be a count >= 1 (int) or a fraction in (0, 1) (float), got -0.1"),
    ("data.split.test=0", "data.split.test must be a count >= 1"),
    ("data.split.tset=0.1", "unknown recipe key 'data.split.tset'; did you mean 'data.split.test'?"),
    ("data.split.seed=0.5", "data.split.seed must be an integer"),
])
def test_a_bad_split_value_names_the_key(value, message):
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(").replace(")", r"\)").replace("+", r"\+")):
        resolve("kbert/chnsenticorp_hownet_quick", [value])


def test_a_bad_split_of_the_data_is_one_line_before_any_graph(tmp_path, capsys):
    data = _one_file(tmp_path / "own")
    folder = tmp_path / "folder"
    folder.mkdir()
    for split in ("train", "test"):
        (folder / f"{split}.tsv").write_text(data.read_text(encoding="utf-8"), encoding="utf-8")
    cases = [
        ((), f"data.dataset: {data} is one file; give data.split"),
        (("data.split={dev: 10, test: 10}",), f"{data}: data.split takes 10 dev and 10 test lines of its 20 data "
                                               "lines, leaving none to train on"),
        (("data.split={dev: 0.1}", f"data.dataset={folder}"), f"data.split: the folder {folder} already holds "
                                                                "test.tsv; leave data.split off"),
        (("data.split={dev: 0.1}", "data.dataset=chnsenticorp"), "data.split: chnsenticorp has its own train, dev "
                                                                  "and test files"),
    ]
    for extra, message in cases:
        capsys.readouterr()
        assert _train(tmp_path, data, *extra) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "run").exists() and not list((tmp_path / "cache").rglob("*.pt"))


# ------------------------------------------------------------------ relation: data.train_file cut in three
REL = [("故宫", "北京", "位于", "故宫位于北京市中心。"), ("鲁迅", "绍兴", "出生地", "鲁迅出生于浙江绍兴。"),
       ("西湖", "杭州", "位于", "西湖在杭州的西边。"), ("李白", "碎叶城", "出生地", "李白生于碎叶城。"),
       ("马明", "广州", "NA", "马明上周去广州出差。")] * 4
REL_TINY = ["train.max_steps=2", "train.progress=false", "train.threads=1", "model.embedding_dim=8",
            "model.hidden_size=8", "model.position_dim=4", "model.attention_size=8"]


def _relation_file(tmp_path):
    path = tmp_path / "rel.tsv"
    path.write_text("".join("\t".join(row) + "\n" for row in REL), encoding="utf-8")
    return path


def _train_relation(tmp_path, path, *extra):
    return main(["train", "relation/sample_zh_att_blstm", "--out", str(tmp_path / "rrun"), "--set", *REL_TINY,
                 f"data.train_file={path}", "data.dev_file=null", "data.test_file=null",
                 f"data.cache_dir={tmp_path / 'cache'}", *extra])


def test_one_relation_file_trains_and_evaluate_reads_the_same_test_lines(tmp_path, capsys):
    path = _relation_file(tmp_path)
    capsys.readouterr()
    assert _train_relation(tmp_path, path, "data.split={dev: 4, test: 0.2, seed: 3}") == 0
    assert f"{path}: data.split (seed 3): train 12, dev 4, test 4 lines" in capsys.readouterr().err.splitlines()
    samples = json.loads((tmp_path / "rrun" / "metrics.json").read_text(encoding="utf-8"))["samples"]
    assert samples == {"train": 12, "dev": 4, "test": 4}
    out = tmp_path / "test.jsonl"
    assert main(["evaluate", str(tmp_path / "rrun"), "--predictions", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [row["gold"] for row in rows] == [REL[i][2] for i in split_rows(20, "test", 4, 0.2, seed=3)]
    assert f"{path}: data.split (seed 3): train 12, dev 4, test 4 lines" in capsys.readouterr().err


def test_a_relation_split_beside_a_dev_file_is_one_line(tmp_path, capsys):
    path = _relation_file(tmp_path)
    capsys.readouterr()
    assert _train_relation(tmp_path, path, "data.split={dev: 4}", f"data.dev_file={path}") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "data.split cuts dev and test out of data.train_file" in err
    assert _train_relation(tmp_path, path, "data.split={dev: 10, test: 10}") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{path}: data.split takes 10 dev and 10 test lines of its 20" in err


# ------------------------------------------------------------------ LET: data.train cut in three
LET_TINY = ["model.encoder_hidden=16", "model.encoder_layers=1", "model.encoder_heads=2", "model.encoder_ffn=32",
            "model.hidden=16", "model.heads=2", "model.perspectives=4", "train.progress=false", "train.threads=1",
            "train.max_steps=2", "train.batch_size=4", "data.segmentation=jieba", "data.workers=1",
            "data.dataset=tsv"]


def test_one_pair_file_trains_and_evaluate_reads_the_same_test_pairs(tmp_path, capsys, shared_data):
    path = tmp_path / "pairs.tsv"
    labels = [str(int(i % 3 == 0)) for i in range(20)]
    lines = [f"{a}\t{b}\t{y}" for a, b, y in zip(TEXTS, TEXTS[::-1], labels, strict=True)]
    path.write_text("\n".join(["text_a\ttext_b\tlabel", *lines]) + "\n", encoding="utf-8")
    args = ["train", "let/lcqmc_quick", "--out", str(tmp_path / "lrun"), "--set", *LET_TINY, f"data.train={path}",
            f"data.root={shared_data}", f"data.cache_dir={tmp_path / 'cache'}"]
    capsys.readouterr()
    assert main([*args, "data.split={dev: 4, test: 5, seed: 2}"]) == 0
    assert f"{path}: data.split (seed 2): train 11, dev 4, test 5 lines" in capsys.readouterr().err.splitlines()
    samples = json.loads((tmp_path / "lrun" / "metrics.json").read_text(encoding="utf-8"))["samples"]
    assert samples == {"train": 11, "dev": 4, "test": 5}
    out = tmp_path / "test.jsonl"
    assert main(["evaluate", str(tmp_path / "lrun"), "--predictions", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    test_rows = split_rows(20, "test", 4, 5, seed=2)
    assert [row["line"] for row in rows] == [int(i) + 2 for i in test_rows]  # the file's lines, after the header
    assert [row["gold"] for row in rows] == [labels[i] for i in test_rows]

    capsys.readouterr()
    assert main([*args, "data.split={dev: 4}", f"data.dev={path}"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "data.split cuts dev and test out of data.train" in err


def test_a_resumed_run_reads_the_same_split(tmp_path, capsys):
    path = _relation_file(tmp_path)
    run = tmp_path / "crashed"
    overrides = [o for o in REL_TINY if not o.startswith("train.max_steps")]
    with pytest.raises(RuntimeError, match="simulated crash"):
        train("relation/sample_zh_att_blstm", [*overrides, "train.epochs=2", f"data.train_file={path}",
                                               "data.dev_file=null", "data.test_file=null",
                                               "data.split={dev: 4, test: 0.2, seed: 3}",
                                               f"data.cache_dir={tmp_path / 'cache'}"], run, callbacks=[Crash(1)])
    capsys.readouterr()
    assert main(["train", "--resume", str(run)]) == 0
    assert f"{path}: data.split (seed 3): train 12, dev 4, test 4 lines" in capsys.readouterr().err.splitlines()
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["epochs"] == 2 and metrics["samples"] == {"train": 12, "dev": 4, "test": 4}
