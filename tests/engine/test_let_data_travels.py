"""A LET run over a user's own pair files, vocabulary and sememe vectors, named by relative paths:
the vocabulary and the vectors are copied into the run, and ``predict`` reads the copy after the run
is moved and the data deleted (``tests/engine/test_own_data_travels.py`` is K-BERT's trial). HowNet
is read from the data root, as every LET run does."""

import json
import shutil

import pytest
from engine_helpers import predict_json

from graphmatch.cli.main import main

PAIRS = [("酒店的早餐几点开始？", "酒店早饭从几点开始供应？", "1"),
         ("怎么养好多肉植物？", "有什么快速瘦下来的方法？", "0"),
         ("电动车电池能用几年？", "电瓶车的电池寿命有多长？", "1"),
         ("新房装修后多久可以入住？", "今天北京的天气如何？", "0")] * 2
PAIR = ("早餐几点开始", "早饭几点供应")
TINY = ["model.encoder_hidden=16", "model.encoder_layers=1", "model.encoder_heads=2", "model.encoder_ffn=32",
        "model.hidden=16", "model.heads=2", "model.perspectives=4", "train.progress=false", "train.threads=1",
        "train.max_steps=2", "train.batch_size=4", "data.segmentation=jieba", "data.workers=1"]


@pytest.fixture(scope="module")
def trained(tmp_path_factory, shared_data):
    """Trained from ``own/`` with relative paths; returns the work folder."""
    tmp = tmp_path_factory.mktemp("let_own")
    own = tmp / "own"
    (own / "mylet").mkdir(parents=True)
    lines = "text_a\ttext_b\tlabel\n" + "".join("\t".join(pair) + "\n" for pair in PAIRS)
    for split in ("train", "dev", "test"):
        (own / "mylet" / f"{split}.tsv").write_text(lines, encoding="utf-8")
    chars = sorted({c for a, b, _ in PAIRS for c in a + b} | set("".join(PAIR)))
    (own / "mylet" / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *chars]) + "\n",
                                             encoding="utf-8")
    head = (shared_data / "hownet" / "sememe_vec.txt").read_text(encoding="utf-8").splitlines()[1:5]
    (own / "mylet" / "sememes.txt").write_text("\n".join([f"{len(head)} 200", *head]) + "\n", encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(own)
        assert main(["train", "let/lcqmc_quick", "--out", "runs/mine", "--set", *TINY, "data.dataset=tsv",
                     *(f"data.{split}=mylet/{split}.tsv" for split in ("train", "dev", "test")),
                     "data.vocab=mylet/vocab.txt", "data.sememe_vectors=mylet/sememes.txt",
                     f"data.root={shared_data}", f"data.cache_dir={tmp / 'cache'}"]) == 0
    return tmp


def test_a_moved_let_run_predicts_after_its_data_is_deleted(trained, capsys, monkeypatch):
    own, run = trained / "own", trained / "own" / "runs" / "mine"
    inputs = json.loads((run / "inputs.json").read_text(encoding="utf-8"))
    for name, key, file in (("vocab", "data.vocab", "vocab.txt"), ("sememe_vectors", "data.sememe_vectors",
                                                                   "sememes.txt")):
        assert inputs[name]["path"] == str((own / "mylet" / file).resolve()) and inputs[name]["key"] == key
        assert (run / inputs[name]["copy"]).read_bytes() == (own / "mylet" / file).read_bytes()
    assert inputs["train data"]["path"] == str((own / "mylet" / "train.tsv").resolve())
    monkeypatch.chdir(own)
    code, before, err = predict_json(capsys, "runs/mine", *PAIR)
    assert code == 0 and json.loads(before)["label"] in ("0", "1"), err

    moved = trained / "elsewhere" / "mine"
    shutil.move(str(run), moved)
    shutil.rmtree(own / "mylet")
    monkeypatch.chdir(trained)
    code, after, err = predict_json(capsys, str(moved), *PAIR)
    assert code == 0 and after == before and err == ""

    (moved / inputs["vocab"]["copy"]).unlink()  # the copy and the original both gone: one line naming both
    code, out, err = predict_json(capsys, str(moved), *PAIR)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"looked for its copy {moved / inputs['vocab']['copy']} and for the original {own / 'mylet' / 'vocab.txt'}" \
        in err
