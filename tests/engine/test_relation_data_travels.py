"""A relation run over a user's own head/tail TSV files and ``.spo`` knowledge graph, named by
relative paths: the KG is copied into the run, and ``predict`` reads the copy after the run is
moved and the data deleted (``tests/engine/test_own_data_travels.py`` is K-BERT's trial)."""

import json
import shutil

import pytest
from engine_helpers import predict_json
from tiny_bert import tiny_bert_folder

from graphmatch.cli.main import main

ROWS = [("故宫", "北京", "位于", "故宫位于北京市中心。"), ("鲁迅", "绍兴", "出生地", "鲁迅出生于浙江绍兴。"),
        ("西湖", "杭州", "位于", "西湖在杭州的西边。"), ("李白", "碎叶城", "出生地", "李白生于碎叶城。"),
        ("马明", "广州", "NA", "马明上周去广州出差。")] * 2
SPO = "故宫\t类别\t宫殿\n北京\t类别\t城市\n杭州\t类别\t城市\n"
LINE = "黄山\t北京\t黄山不在北京。"
TINY = ["train.progress=false", "train.threads=1", "train.max_steps=2", "train.batch_size=4", "data.max_length=40",
        "data.format=tsv", "model.pack=false"]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """Trained from ``own/`` with relative paths; returns the work folder."""
    tmp = tmp_path_factory.mktemp("relation_own")
    own = tmp / "own"
    (own / "myrel").mkdir(parents=True)
    lines = "".join("\t".join(row) + "\n" for row in ROWS)
    for split in ("train", "dev", "test"):
        (own / "myrel" / f"{split}.tsv").write_text(lines, encoding="utf-8")
    (own / "myrel" / "my.spo").write_text(SPO, encoding="utf-8")
    bert = tiny_bert_folder(tmp / "bert", [row[3] for row in ROWS] + [LINE, SPO], hidden=16, layers=1)
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(own)
        assert main(["train", "relation/semeval_minilm_entity_start", "--out", "runs/mine", "--set", *TINY,
                     f"model.pretrained={bert}", "data.kg=myrel/my.spo", "data.train_file=myrel/train.tsv",
                     "data.dev_file=myrel/dev.tsv", "data.test_file=myrel/test.tsv",
                     f"data.cache_dir={tmp / 'cache'}"]) == 0
    return tmp


def test_a_moved_relation_run_predicts_after_its_data_is_deleted(trained, capsys, monkeypatch):
    own, run = trained / "own", trained / "own" / "runs" / "mine"
    inputs = json.loads((run / "inputs.json").read_text(encoding="utf-8"))
    assert inputs["kg"]["path"] == str((own / "myrel" / "my.spo").resolve()) and inputs["kg"]["key"] == "data.kg"
    assert (run / inputs["kg"]["copy"]).read_text(encoding="utf-8") == SPO
    assert inputs["train data"]["path"] == str((own / "myrel" / "train.tsv").resolve())
    monkeypatch.chdir(own)
    code, before, err = predict_json(capsys, "runs/mine", LINE)
    assert code == 0 and json.loads(before)["label"] in ("位于", "出生地", "NA"), err

    moved = trained / "elsewhere" / "mine"
    shutil.move(str(run), moved)
    shutil.rmtree(own / "myrel")
    monkeypatch.chdir(trained)
    code, after, err = predict_json(capsys, str(moved), LINE)
    assert code == 0 and after == before and err == ""

    (moved / inputs["kg"]["copy"]).unlink()  # the copy and the original both gone: one line naming both
    code, out, err = predict_json(capsys, str(moved), LINE)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"looked for its copy {moved / inputs['kg']['copy']} and for the original {own / 'myrel' / 'my.spo'}" in err
