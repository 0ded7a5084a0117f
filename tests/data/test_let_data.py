import pytest
import torch

from graphmatch.data.let import PairMatchingDataset, lcqmc_file, read_pairs
from graphmatch.graphs.let import LatticePairBuilder
from graphmatch.graphs.let_options import LatticeOptions


@pytest.fixture(scope="module")
def builder(tokenizer, hownet_lexicon):
    return LatticePairBuilder(tokenizer, hownet_lexicon, LatticeOptions(segmenters="jieba"))


def test_read_tsv_with_header_and_limit(tmp_path):
    f = tmp_path / "pairs.tsv"
    f.write_text("text_a\ttext_b\tlabel\n你好\t您好\t1\n\n今天\t明天\t0\n吃饭\t喝水\t0\n", encoding="utf-8")
    pairs = read_pairs(f)
    assert [(p.text_a, p.text_b, p.label, p.line) for p in pairs] == [
        ("你好", "您好", 1, 2), ("今天", "明天", 0, 4), ("吃饭", "喝水", 0, 5)]
    assert len(read_pairs(f, limit=2)) == 2


def test_read_bq_csv(tmp_path):
    f = tmp_path / "bq.csv"
    f.write_text('sentence1,sentence2,label\n"借款，怎么还",如何还款,1\n额度多少,利息多少,0\n', encoding="utf-8")
    pairs = read_pairs(f)
    assert pairs[0].text_a == "借款，怎么还" and pairs[0].label == 1 and pairs[0].line == 2
    assert pairs[1].label == 0


def test_unlabelled_rows(tmp_path):
    f = tmp_path / "pairs.tsv"
    f.write_text("你好\t您好\n今天\t明天\n", encoding="utf-8")
    assert [p.label for p in read_pairs(f)] == [None, None]
    f.write_text("你好\t您好\t1\n今天\t明天\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"pairs.tsv:2: some rows have a label"):
        read_pairs(f)


@pytest.mark.parametrize("content,message", [
    ("你好\t您好\t1\n\t明天\t0\n", r"bad.tsv:2: text_a is empty"),
    ("你好\t  \t1\n", r"bad.tsv:1: text_b is empty"),
    ("你好\t您好\t2\n", r"bad.tsv:1: label must be 0 or 1, got '2'"),
    ("你好\t您好\tyes\n", r"bad.tsv:1: label must be 0 or 1"),
    ("你好\t您好\t1\t3\n", r"bad.tsv:1: expected text_a<TAB>text_b<TAB>label, got 4 fields"),
])
def test_bad_rows_name_file_and_line(tmp_path, content, message):
    f = tmp_path / "bad.tsv"
    f.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        read_pairs(f)


def test_read_errors(tmp_path):
    f = tmp_path / "empty.tsv"
    f.write_text("text_a\ttext_b\tlabel\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no sentence pairs"):
        read_pairs(f)
    with pytest.raises(ValueError, match="unknown pair file format"):
        read_pairs(f, fmt="json")


def test_dataset_builds_caches_and_keys(tmp_path, builder, tokenizer, capsys):
    f = tmp_path / "pairs.tsv"
    f.write_text("text_a\ttext_b\tlabel\n苹果手机\t买个手机\t1\n今天天气\t明天下雨\t0\nhello\t？？\t0\n",
                 encoding="utf-8")
    cache = tmp_path / "cache"
    ds = PairMatchingDataset(f, builder, cache=cache)
    assert len(ds) == 3
    assert ds[0].y.tolist() == [1] and ds[2].y.tolist() == [0]
    assert ds[1].line.tolist() == [3]
    direct = builder("苹果手机", "买个手机", 1)
    for store in ("token", "word", "sense", "sememe"):
        assert ds[0][store].num_nodes == direct[store].num_nodes
    assert torch.equal(ds[0]["word", "reach_fwd", "word"].edge_index,
                       direct["word", "reach_fwd", "word"].edge_index)
    folders = sorted(cache.glob("pairs-*"))
    assert len(folders) == 1 and (folders[0] / "data.pt").is_file() and (folders[0] / "manifest.json").is_file()
    assert ds.processed_dir == str(folders[0]) and folders[0].name == f"pairs-{ds.cache_digest[:16]}"

    # same options + same file: loaded from the cache (no new file); other options: a new file
    again = PairMatchingDataset(f, builder, cache=cache)
    assert again.cache_digest == ds.cache_digest and len(list(cache.glob("pairs-*"))) == 1
    PairMatchingDataset(f, LatticePairBuilder(tokenizer, None, LatticeOptions(segmenters="jieba", senses=False)),
                        cache=cache)
    PairMatchingDataset(f, builder, cache=cache, limit=2)
    assert len(list(cache.glob("pairs-*"))) == 3
    # a changed file changes the key
    f.write_text("你好\t您好\t1\n", encoding="utf-8")
    assert PairMatchingDataset(f, builder, cache=cache).cache_digest != ds.cache_digest


def test_dataset_errors(tmp_path, builder):
    f = tmp_path / "bad.tsv"
    f.write_text("你好\t您好\t1\n你好\t您好\t5\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.tsv:2: label must be 0 or 1"):
        PairMatchingDataset(f, builder, cache=tmp_path / "c")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        PairMatchingDataset(tmp_path / "missing.tsv", builder, cache=tmp_path / "c")


def test_lcqmc_real_file(shared_data, builder, tmp_path):
    path = lcqmc_file("dev", shared_data)
    ds = PairMatchingDataset(path, builder, cache=tmp_path, limit=50, progress=False)
    assert len(ds) == 50
    labels = torch.cat([ds[i].y for i in range(50)])
    assert set(labels.tolist()) == {0, 1}
    assert read_pairs(path, limit=1)[0].text_a == "开初婚未育证明怎么弄？"
    with pytest.raises(ValueError, match="unknown LCQMC split"):
        lcqmc_file("valid", shared_data)


def test_bom_csv_and_invalid_utf8(tmp_path):
    f = tmp_path / "bq.csv"
    rows = 'sentence1,sentence2,label\r\n"借款，\r\n怎么还",如何还款,1\r\n额度多少,利息多少,0\r\n'
    f.write_bytes(b"\xef\xbb\xbf" + rows.encode())
    pairs = read_pairs(f)
    assert [(p.text_a, p.label, p.line) for p in pairs] == [("借款，\r\n怎么还", 1, 3), ("额度多少", 0, 4)]
    f = tmp_path / "bad.tsv"
    f.write_bytes("你好\t您好\t1\n".encode() + b"\xff\xfe\t\xe4\xbd\xa0\t0\n")
    with pytest.raises(ValueError, match=r"bad.tsv:2: not valid UTF-8 \(byte 0xff at byte 1 of the line\)"):
        read_pairs(f)


def test_training_files_need_labels_and_warn_about_rare_ones(tmp_path, builder):
    f = tmp_path / "nolabel.tsv"
    f.write_text("text_a\ttext_b\n你好\t您好\n今天\t明天\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"nolabel.tsv: the pairs have no label column"):
        PairMatchingDataset(f, builder, cache=tmp_path / "c", require_labels=True, progress=False)
    assert len(PairMatchingDataset(f, builder, cache=tmp_path / "c", progress=False)) == 2  # a test file may lack them
    f = tmp_path / "skewed.tsv"
    f.write_text("".join(f"句子{i}\t句子{i + 1}\t0\n" for i in range(30)) + "你好\t您好\t1\n", encoding="utf-8")
    with pytest.warns(UserWarning, match=r"skewed.tsv:31: label '1' is in only 1 of 31 training examples"):
        PairMatchingDataset(f, builder, cache=tmp_path / "c", require_labels=True, progress=False)


def test_parallel_build_stores_the_same_tensors(tmp_path, builder, monkeypatch):
    f = tmp_path / "pairs.tsv"
    lines = [f"第{i}个问题怎么办\t{'今天' if i % 3 else '明天'}北京的天气怎么样\t{i % 2}" for i in range(22)]
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.setattr(PairMatchingDataset, "CHUNK", 4)  # 6 jobs: the first here, 5 in the workers
    one = PairMatchingDataset(f, builder, cache=tmp_path / "one", workers=1, progress=False)
    two = PairMatchingDataset(f, builder, cache=tmp_path / "two", workers=2, progress=False)
    assert len(one) == len(two) == 22 and one.cache_digest == two.cache_digest
    a, b = one._data.to_dict(), two._data.to_dict()
    assert a.keys() == b.keys()
    for key in a:
        for attr, value in (a[key].items() if isinstance(a[key], dict) else [(None, a[key])]):
            other = b[key][attr] if attr is not None else b[key]
            assert torch.equal(value, other) if torch.is_tensor(value) else value == other, (key, attr)
    assert all(torch.equal(one.slices[k][n], two.slices[k][n]) for k in one.slices for n in one.slices[k])
    with pytest.raises(ValueError, match="data.workers must be >= 1"):
        PairMatchingDataset(f, builder, cache=tmp_path / "three", workers=0)


def test_workers_send_arrays_not_tensors(builder):
    """torch's multiprocessing pickler sends every tensor as a file descriptor (thousands per job):
    a worker's result holds NumPy arrays only, and gives the same graphs back."""
    import pickle

    import numpy as np

    from graphmatch.data import let

    pairs = [let.PairExample("苹果手机", "买个手机", 1, 2), let.PairExample("今天天气", "明天下雨", 0, 3)]
    let._set_worker_builder(builder)
    try:
        sent = pickle.loads(let._build_chunk(("f.tsv", pairs)))
    finally:
        let._set_worker_builder(None)

    def leaves(value):
        return [x for v in value.values() for x in leaves(v)] if isinstance(value, dict) else [value]

    assert not any(isinstance(x, torch.Tensor) for g in sent for x in leaves(g))
    assert any(isinstance(x, np.ndarray) for x in leaves(sent[0]))
    direct = let.build_graphs(builder, pairs, "f.tsv")
    for got, expected in zip(sent, direct, strict=True):
        back = let.pair_graph(got)
        for store in ("token", "word", "sense", "sememe"):
            for key, value in expected[store].items():
                assert torch.equal(back[store][key], value) if torch.is_tensor(value) else back[store][key] == value
        assert torch.equal(back.line, expected.line) and torch.equal(back.y, expected.y)


def test_the_cache_key_holds_the_segmenters_and_their_versions(tmp_path, tokenizer, monkeypatch):
    """A lattice made of other segmenters, or of other versions of them, is another cache (issue 31)."""
    import graphmatch.graphs.let_core as let_core

    f = tmp_path / "pairs.tsv"
    f.write_text("苹果手机\t买个手机\t1\n", encoding="utf-8")

    def digest(segmenters: str) -> str:
        builder = LatticePairBuilder(tokenizer, None, LatticeOptions(segmenters=segmenters, senses=False))
        return PairMatchingDataset(f, builder, cache=tmp_path / "cache").cache_digest

    both = digest("jieba,thulac")
    assert digest("jieba") != both and digest("jieba,thulac") == both
    monkeypatch.setattr(let_core, "segmenter_version", lambda name: "0.0.0-other")
    assert digest("jieba,thulac") != both
