"""Caches that cannot go stale (graphmatch.data.cached), for each dataset family."""

import json
import os
import re
from pathlib import Path

import pytest

from graphmatch.data.cached import MANIFEST
from graphmatch.data.kbert import KBertClassificationDataset
from graphmatch.data.let import PairMatchingDataset
from graphmatch.data.relation import RelationDataset
from graphmatch.graphs.kbert import TreeOptions
from graphmatch.graphs.let import LatticePairBuilder
from graphmatch.graphs.let_options import LatticeOptions
from graphmatch.graphs.relation_options import RelationOptions


def _let(samples, tokenizer, cache):
    builder = LatticePairBuilder(tokenizer, None, LatticeOptions(segmenters="jieba", senses=False))
    return PairMatchingDataset(samples / "pairs" / "dev.tsv", builder, cache=cache, limit=6, progress=False)


def _kbert(samples, shared_data, cache):
    return KBertClassificationDataset(str(samples / "sentiment"), "dev", root=shared_data, cache=cache,
                                      kg=samples / "kg" / "sample.spo", options=TreeOptions(max_length=32), limit=6,
                                      progress=False)


def _relation(samples, cache, split="train"):
    files = {s: samples / "relation_zh" / f"{s}.tsv" for s in ("train", "dev", "test")}
    return RelationDataset(split, train_file=files["train"], dev_file=files["dev"], test_file=files["test"],
                           options=RelationOptions(tokenization="chars"), cache=cache)


@pytest.fixture(params=["kbert", "let", "relation"])
def make(request, samples, shared_data, tokenizer):
    return {"kbert": lambda cache: _kbert(samples, shared_data, cache),
            "let": lambda cache: _let(samples, tokenizer, cache),
            "relation": lambda cache: _relation(samples, cache)}[request.param]


def _graphs(ds):
    return [ds[i]["token"].num_nodes for i in range(len(ds))]


def _rewrite_manifest(folder: Path, change) -> None:
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    change(manifest)
    (folder / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")


def _bump_builder(manifest):
    manifest["key"]["builder"]["format"] -= 1


def _truncate(path: Path):
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _zeros(path: Path):
    st = path.stat()
    path.write_bytes(bytes(st.st_size))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def _flip(path: Path):
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


TAMPERS = {
    "builder version": (lambda folder, data: _rewrite_manifest(folder, _bump_builder),
                        r"written by graphmatch\.graphs\.\w+\.\w+ format \d+, this version writes format \d+"),
    "cache format": (lambda folder, data: _rewrite_manifest(folder, lambda m: m["key"].update(cache_format=0)),
                     r"written in cache format 0, this version writes 1"),
    "truncated": (lambda folder, data: _truncate(data), r"\S+\.pt is truncated \(\d+ of \d+ bytes\)"),
    "corrupt": (lambda folder, data: _flip(data), r"\S+\.pt is corrupt \(its sha256 differs"),
    # the same size and mtime: not hashed again, but it fails to load
    "unreadable": (lambda folder, data: _zeros(data), r"it cannot be read \(\w+"),
    "no manifest": (lambda folder, data: (folder / MANIFEST).unlink(), r"it has no manifest"),
    "bad manifest": (lambda folder, data: (folder / MANIFEST).write_text("{", encoding="utf-8"),
                     r"its manifest is unreadable"),
    "unknown file": (lambda folder, data: (folder / "extra.pt").write_bytes(b"x"),
                     r"it holds extra\.pt, a file its manifest does not list"),
}


@pytest.mark.parametrize("tamper", list(TAMPERS))
def test_a_stale_or_damaged_cache_is_rebuilt_with_one_line_saying_why(make, tmp_path, capfd, tamper):
    ds = make(tmp_path)
    expected = _graphs(ds)
    folder = Path(ds.processed_dir)
    assert len(ds.cache_digest) == 64 and folder.name.endswith(ds.cache_digest[:16])
    assert {p.name for p in folder.iterdir()} >= {*ds.processed_file_names}
    data = Path(ds.processed_paths[0])
    stamp = data.stat().st_mtime_ns
    capfd.readouterr()
    again = make(tmp_path)  # an intact cache is read, not rebuilt, and says nothing
    assert data.stat().st_mtime_ns == stamp and capfd.readouterr().err == ""

    change, reason = TAMPERS[tamper]
    change(folder, data)
    again = make(tmp_path)
    err = [line for line in capfd.readouterr().err.splitlines() if "graphmatch" in line]
    assert len(err) == 1, err
    assert err[0].startswith(f"graphmatch: rebuilding the cache {folder}: ")
    assert re.search(reason, err[0]), err[0]
    assert _graphs(again) == expected and again.cache_digest == ds.cache_digest
    make(tmp_path)  # and now it is whole again
    assert capfd.readouterr().err == ""


def test_a_bumped_builder_version_keys_a_new_cache(samples, tokenizer, tmp_path, monkeypatch):
    import graphmatch.graphs.let as let_graphs

    ds = _let(samples, tokenizer, tmp_path)
    monkeypatch.setattr(let_graphs, "FORMAT_VERSION", let_graphs.FORMAT_VERSION + 1)
    bumped = _let(samples, tokenizer, tmp_path)
    assert bumped.cache_digest != ds.cache_digest and bumped.processed_dir != ds.processed_dir
    assert bumped.cache_key()["builder"]["format"] == let_graphs.FORMAT_VERSION


def test_the_key_holds_the_inputs_sha256(samples, shared_data, tmp_path):
    from graphmatch.io.datafiles import sha256

    ds = _kbert(samples, shared_data, tmp_path)
    inputs = ds.cache_key()["inputs"]
    assert inputs["source"] == sha256(samples / "sentiment" / "dev.tsv")
    assert inputs["kg"] == sha256(samples / "kg" / "sample.spo")
    assert inputs["vocab"] == sha256(ds.vocab_path)
    kg = tmp_path / "kg.spo"
    kg.write_text((samples / "kg" / "sample.spo").read_text(encoding="utf-8") + "手机\t类别\t电子产品\n",
                  encoding="utf-8")
    other = KBertClassificationDataset(str(samples / "sentiment"), "dev", root=shared_data, cache=tmp_path, kg=kg,
                                       options=TreeOptions(max_length=32), limit=6, progress=False)
    assert other.cache_digest != ds.cache_digest


def test_relation_splits_share_one_key(samples, tmp_path):
    dev = _relation(samples, tmp_path, "dev")
    train = _relation(samples, tmp_path)
    assert train.cache_digest == dev.cache_digest and len(train) == 40 and len(dev) == 20


def test_an_ner_cache_whose_tags_come_from_its_file_is_reused(tmp_path, shared_data, capfd):
    """The builder made while building (tag ids from the file) does not change the recorded key."""
    from graphmatch.data.kbert import KBertNERDataset

    folder = tmp_path / "ner"
    folder.mkdir()
    (folder / "train.tsv").write_text("text_a\tlabel\n头 痛 三 天\tB-S I-S O O\n左 腿\tB-B I-B\n", encoding="utf-8")
    kw = dict(root=shared_data, cache=tmp_path / "cache", kg="medical", options=TreeOptions("ner", max_length=16),
              progress=False)
    ds = KBertNERDataset(str(folder), "train", **kw)
    stamp = os.stat(ds.processed_paths[0]).st_mtime_ns
    capfd.readouterr()
    again = KBertNERDataset(str(folder), "train", **kw)
    assert capfd.readouterr().err == "" and os.stat(again.processed_paths[0]).st_mtime_ns == stamp
    assert again.labels == ds.labels == ["O", "B-B", "B-S", "I-B", "I-S"]
    assert again.builder.tag_to_id == {t: i for i, t in enumerate(ds.labels)}


def test_a_run_records_the_digest_of_each_split(samples, tokenizer, tmp_path):
    from graphmatch.engine.training.fitting import cache_keys

    ds = _let(samples, tokenizer, tmp_path)
    assert cache_keys({"train": ds}) == {"train": ds.cache_digest}


class _Payload:
    """Unpickled, it creates the file ``marker`` (what a hostile pickle could do instead)."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _plant(path: Path, marker: Path) -> None:
    import torch

    torch.save(_Payload(marker), path)


def test_the_payload_runs_where_pyg_loads_it(tmp_path):
    """What the tests below plant does run code when PyG's loaders read it (so they can fail)."""
    import torch
    from torch_geometric.io import fs

    marker = tmp_path / "ran"
    _plant(tmp_path / "pre_transform.pt", marker)
    torch.load(tmp_path / "pre_transform.pt", weights_only=False)  # as Dataset._process reads it
    assert marker.is_file()
    marker.unlink()
    with pytest.warns(UserWarning, match="Weights only load failed"):
        fs.torch_load(str(tmp_path / "pre_transform.pt"))  # as InMemoryDataset.load reads data.pt
    assert marker.is_file()


def test_planted_pre_transform_and_pre_filter_files_are_never_loaded(make, tmp_path, capfd):
    """PyG unpickles ``pre_transform.pt`` and ``pre_filter.pt`` (``weights_only=False``) in a
    folder it processes: a cache folder holding them is stale, emptied and rebuilt; nothing runs."""
    ds = make(tmp_path / "cache")
    expected, folder = _graphs(ds), Path(ds.processed_dir)
    assert {p.name for p in folder.iterdir()} == {*ds.processed_file_names}  # PyG wrote none of its own
    marker = tmp_path / "ran"
    for name in ("pre_transform.pt", "pre_filter.pt"):
        _plant(folder / name, marker)
    capfd.readouterr()
    again = make(tmp_path / "cache")
    err = [line for line in capfd.readouterr().err.splitlines() if "graphmatch" in line]
    assert err == [f"graphmatch: rebuilding the cache {folder}: it holds pre_filter.pt, a file its manifest "
                   "does not list"]
    assert not marker.exists() and _graphs(again) == expected
    assert {p.name for p in folder.iterdir()} == {*ds.processed_file_names}


def test_a_planted_data_file_with_a_matching_manifest_is_never_unpickled(make, tmp_path, capfd):
    """A crafted ``data.pt`` recorded in a crafted manifest is read with ``weights_only=True``
    alone (PyG's ``fs.torch_load`` would retry without it): it fails to load and is rebuilt."""
    from graphmatch.io.datafiles import sha256

    ds = make(tmp_path / "cache")
    expected, folder, data = _graphs(ds), Path(ds.processed_dir), Path(ds.processed_paths[0])
    marker = tmp_path / "ran"
    _plant(data, marker)
    st = data.stat()

    def forge(manifest):
        manifest["files"][data.name] = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": sha256(data)}

    _rewrite_manifest(folder, forge)
    capfd.readouterr()
    again = make(tmp_path / "cache")
    err = [line for line in capfd.readouterr().err.splitlines() if "graphmatch" in line]
    assert len(err) == 1 and err[0].startswith(f"graphmatch: rebuilding the cache {folder}: it cannot be read (")
    assert not marker.exists() and _graphs(again) == expected
