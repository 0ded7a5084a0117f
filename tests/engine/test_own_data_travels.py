"""A user's own data to a run that travels (issue 48's trial): a folder of two-column TSV files, a
three-line ``.spo`` file and a vocabulary, all named by relative paths; a tiny K-BERT trained on
them; the run moved, the data deleted, and ``predict`` run from another working folder. A user
file changed since training warns in one line; a run file missing anywhere is one line."""

import json
import shutil

import pytest
from engine_helpers import predict_json

from graphmatch.cli.main import main

TINY = ["model.hidden_size=32", "model.num_layers=1", "model.num_heads=2", "model.intermediate_size=32",
        "model.max_position=64", "data.max_length=32", "train.progress=false", "train.threads=1",
        "train.max_steps=2", "train.batch_size=8"]
ROWS = [("1", "酒店的房间很干净，前台服务好。"), ("0", "客服不回消息，问题一直没解决，失望。"),
        ("1", "房间不错，离火车站很近。"), ("0", "前台态度差，房间有异味。")] * 3
SPO = "酒店\t类别\t住宿\n房间\t属于\t酒店\n前台\t属于\t酒店\n"
TEXT = "酒店离火车站很近"


def _own_data(folder):
    folder.mkdir(parents=True)
    for split in ("train", "dev", "test"):
        lines = ["label\ttext_a", *(f"{label}\t{text}" for label, text in ROWS)]
        (folder / f"{split}.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "my.spo").write_text(SPO, encoding="utf-8")
    chars = sorted({c for _, text in ROWS for c in text} | set(SPO.replace("\t", "").replace("\n", "")) | set(TEXT))
    (folder / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *chars]) + "\n",
                                      encoding="utf-8")


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """The trial: trained from ``own/`` with relative paths; returns the work folder."""
    tmp = tmp_path_factory.mktemp("own_data")
    own = tmp / "own"
    _own_data(own / "mydata")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(own)
        assert main(["train", "kbert/chnsenticorp_hownet_quick", "--out", "runs/mine", "--set", *TINY,
                     "data.dataset=mydata", "data.kg=mydata/my.spo", "data.vocab=mydata/vocab.txt",
                     f"data.cache_dir={tmp / 'cache'}"]) == 0
    return tmp


def test_a_moved_run_predicts_after_its_data_is_deleted(trained, capsys, monkeypatch):
    own, run = trained / "own", trained / "own" / "runs" / "mine"
    inputs = json.loads((run / "inputs.json").read_text(encoding="utf-8"))
    assert {"kg", "vocab", "train data", "dev data", "test data"} <= set(inputs)
    assert inputs["train data"]["path"] == str((own / "mydata" / "train.tsv").resolve())
    assert inputs["kg"]["path"] == str((own / "mydata" / "my.spo").resolve()) and inputs["kg"]["key"] == "data.kg"
    assert (run / inputs["kg"]["copy"]).read_text(encoding="utf-8") == SPO
    assert (run / inputs["vocab"]["copy"]).is_file() and len(inputs["vocab"]["sha256"]) == 64
    monkeypatch.chdir(own)
    code, before, err = predict_json(capsys, "runs/mine", TEXT)
    assert code == 0 and json.loads(before)["label"] in ("0", "1") and "warning" not in err

    moved = trained / "elsewhere" / "mine"
    shutil.move(str(run), moved)
    shutil.rmtree(own / "mydata")
    monkeypatch.chdir(trained)  # the parent folder: config.yaml's relative paths lead nowhere from here
    code, after, err = predict_json(capsys, str(moved), TEXT)
    assert code == 0 and after == before and err == ""
    gold = trained / "gold.tsv"
    gold.write_text("label\ttext_a\n1\t房间不错\n0\t前台态度差\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["predict", str(moved), "--input", str(gold), "--output", str(trained / "rows.jsonl")]) == 0
    rows = [json.loads(line) for line in (trained / "rows.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [row["gold"] for row in rows] == ["1", "0"]

    # the user's original changed since training: one line naming it; the run reads its copy
    (own / "mydata").mkdir()
    (own / "mydata" / "my.spo").write_text(SPO + "火车站\t类别\t交通\n", encoding="utf-8")
    code, changed, err = predict_json(capsys, str(moved), TEXT)
    assert code == 0 and changed == before
    assert err.count("\n") == 1 and f"{own / 'mydata' / 'my.spo'}: the kg file changed since the run was trained" \
        in err and "the run reads its copy" in err

    # the run's copy edited: one line naming it, and the model reads it as it is now
    copy = moved / inputs["kg"]["copy"]
    copy.write_text(SPO.replace("住宿", "宾馆"), encoding="utf-8")
    shutil.rmtree(own / "mydata")
    code, _, err = predict_json(capsys, str(moved), TEXT)
    assert code == 0 and err.count("\n") == 1 and f"{copy}: the kg file differs from the one the run was trained" in err

    # the copy and the original both gone: one line naming where it looked
    copy.unlink()
    code, out, err = predict_json(capsys, str(moved), TEXT)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"looked for its copy {copy} and for the original {own / 'mydata' / 'my.spo'}" in err


def test_every_bad_dataset_file_is_named_before_any_graph_is_built(tmp_path, capsys):
    data = tmp_path / "mydata"
    _own_data(data)
    (data / "dev.tsv").unlink()
    (data / "test.tsv").write_text("label\ttext_a\n1\t好\t多了一列\n", encoding="utf-8")
    cache = tmp_path / "cache"
    capsys.readouterr()
    assert main(["train", "kbert/chnsenticorp_hownet_quick", "--out", str(tmp_path / "run"), "--set", *TINY,
                 f"data.dataset={data}", f"data.kg={data / 'my.spo'}", f"data.vocab={data / 'vocab.txt'}",
                 f"data.cache_dir={cache}"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "holds no dev.tsv" in err
    assert f"{data / 'test.tsv'}:2: expected 2 tab-separated fields (label, text_a), got 3" in err
    assert not (tmp_path / "run").exists() and not list(cache.rglob("*.pt"))  # no graph was built
