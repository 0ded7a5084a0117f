"""``benchmarks/plain_e5.py``: the plain HuggingFace e5 classifier, the control arm of the e5
K-BERT tables, on a few sentences and e5-small's first two layers (the real budget runs in
``benchmarks/results.py``)."""

import json

from benchmark_scripts import load


def test_trains_selects_on_dev_and_reports_as_an_arm(tmp_path, monkeypatch, shared_data, e5_two_layers):
    from graphmatch.pretrained import packaged

    plain, results = load("plain_e5"), load("results")
    named = []
    monkeypatch.setattr(packaged, "packaged_pretrained", lambda name: named.append(name) or e5_two_layers)
    for name, value in {"TRAIN": 24, "DEV": 8, "TEST": 8, "BATCH": 8, "EVERY": 1}.items():
        monkeypatch.setattr(plain, name, value)
    texts, labels = plain.read_split("train", 24, str(shared_data))
    assert len(texts) == 24 and set(labels) == {0, 1} and "\t" not in texts[0]
    comp = next(c for c in results.COMPARISONS if c.name == "e5_chnsenticorp_plain")
    out = results.run_dir(tmp_path, comp, comp.arms[0])
    summary = plain.train(out, [42, 43], str(shared_data), threads=1)
    assert named == ["e5-small", "e5-small"]  # the packaged e5, once per seed
    seed = json.loads((out / "seed-42" / "metrics.json").read_text())
    assert seed["steps"] == 3 and [h["step"] for h in seed["history"]] == [1, 2, 3]
    best = max(seed["history"], key=lambda h: h["dev_accuracy"])
    assert seed["best_step"] == best["step"] and seed["dev"]["accuracy"] == best["dev_accuracy"]
    assert summary["test"]["accuracy"]["values"] == [
        json.loads((out / f"seed-{s}" / "metrics.json").read_text())["test"]["accuracy"] for s in (42, 43)]
    block = results.table(tmp_path, comp, results.Reuse(None, (seed["provenance"]["commit"],)))
    assert "| plain HF e5 | `benchmarks/plain_e5.py` | 42, 43 |" in block
    again = plain.train(out, [42, 43], str(shared_data), threads=1)  # finished seeds are read, not retrained
    assert again["test"] == summary["test"]
