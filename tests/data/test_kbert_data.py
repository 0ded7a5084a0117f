import os

import pytest
import torch
from torch_geometric.loader import DataLoader

from graphmatch.data.kbert import (
    KBertClassificationDataset,
    KBertNERDataset,
    KBertPairDataset,
    dataset_kind,
    kbert_dataset,
    label_set,
)
from graphmatch.graphs.kbert import TreeOptions, dense_inputs


@pytest.fixture
def folder(tmp_path, shared_data):
    """A tiny dataset folder of each kind, plus the shared vocabulary."""
    root = tmp_path / "data"
    (root / "cls").mkdir(parents=True)
    (root / "cls" / "train.tsv").write_text("label\ttext_a\n1\t我爱北京天安门\n0\t苹果手机很不好用\n1\t很好\n",
                                            encoding="utf-8")
    (root / "cls" / "dev.tsv").write_text("label\ttext_a\n0\t北京很好\n2\t苹果\n", encoding="utf-8")
    (root / "ner").mkdir()
    (root / "ner" / "train.tsv").write_text(
        "text_a\tlabel\n头 痛 三 天\tB-Symptom I-Symptom O O\n左 腿\tB-BodyPart I-BodyPart\n", encoding="utf-8")
    (root / "ner" / "dev.tsv").write_text("text_a\tlabel\n头 痛 三 天\tB-Symptom I-Symptom O\n", encoding="utf-8")
    (root / "pair").mkdir()
    (root / "pair" / "train.tsv").write_text("text_a\ttext_b\tlabel\n北京好\t北京很好\t1\n苹果\t手机\t0\n",
                                             encoding="utf-8")
    return root


def _kw(tmp_path, shared_data, kind="classification", **tree):
    """The arguments of a dataset of ``kind``; ``tree`` changes its tree options."""
    return dict(root=shared_data, cache=tmp_path / "cache", progress=False,
                options=TreeOptions(kind, **{"max_length": 32, **tree}))


def test_classification_labels_and_graphs(folder, tmp_path, shared_data):
    ds = KBertClassificationDataset(str(folder / "cls"), "train", **_kw(tmp_path, shared_data))
    assert len(ds) == 3 and ds.labels == ["0", "1"]
    assert [int(ds[i].y) for i in range(3)] == [1, 0, 1]
    g = ds[0]
    assert g["token"].branch.any()  # 北京 gets HowNet branches
    assert g["entity"].length.sum() == g["token"].branch.sum()
    batch = next(iter(DataLoader(ds, batch_size=3)))
    assert dense_inputs(batch)["visible"].shape[0] == 3


def test_unknown_label_in_dev_names_file_and_line(folder, tmp_path, shared_data):
    with pytest.raises(ValueError, match=r"dev\.tsv:3: label '2' is not in the label set"):
        KBertClassificationDataset(str(folder / "cls"), "dev", labels=["0", "1"], **_kw(tmp_path, shared_data))


def test_ner_tags_chars_and_branches(folder, tmp_path, shared_data):
    ds = KBertNERDataset(str(folder / "ner"), "train", kg="medical", **_kw(tmp_path, shared_data, "ner"))
    assert ds.labels == ["O", "B-BodyPart", "B-Symptom", "I-BodyPart", "I-Symptom"]
    g = ds[0]
    tok = g["token"]
    assert (tok.y[tok.branch] == -100).all()  # injected tokens never get a label
    trunk = tok.char_index >= 0
    assert torch.equal(tok.y[trunk], g.tags[tok.char_index[trunk]])
    assert g.num_chars.item() == 4 and tok.input_ids[0] != 101  # no [CLS] for NER, as the reference
    assert dataset_kind(str(folder / "ner")) == "ner"
    assert dataset_kind(str(folder / "pair")) == "pair"
    assert dataset_kind(str(folder / "cls")) == "classification"


def test_ner_tag_count_mismatch_names_the_line(folder, tmp_path, shared_data):
    with pytest.raises(ValueError, match=r"dev\.tsv:2: 4 characters but 3 tags"):
        KBertNERDataset(str(folder / "ner"), "dev", labels=["O", "B-Symptom", "I-Symptom"],
                        **_kw(tmp_path, shared_data, "ner"))


def test_pairs(folder, tmp_path, shared_data):
    ds = KBertPairDataset(str(folder / "pair"), "train", **_kw(tmp_path, shared_data, "pair"))
    g = ds[0]
    assert (g["token"].seg == 1).any() and (g["token"].input_ids == 102).sum() == 2
    assert ds.labels == ["0", "1"] and int(g.y) == 1


def test_truncation_to_max_length(tmp_path, shared_data):
    """A sentence longer than max_length after injection is cut, as the reference does."""
    ds = kbert_dataset("chnsenticorp", "dev", labels=["0", "1"], limit=20,
                       **_kw(tmp_path, shared_data, max_length=24))
    lengths = torch.tensor([ds[i]["token"].num_nodes for i in range(len(ds))])
    assert lengths.max() == 24 and len(ds) == 20


def test_cache_is_keyed_by_options_and_source(folder, tmp_path, shared_data):
    kw = _kw(tmp_path, shared_data)
    a = KBertClassificationDataset(str(folder / "cls"), "train", **kw)
    again = KBertClassificationDataset(str(folder / "cls"), "train", **kw)
    assert again.processed_dir == a.processed_dir
    stamp = os.stat(a.processed_paths[0]).st_mtime_ns
    again = KBertClassificationDataset(str(folder / "cls"), "train", **kw)
    assert os.stat(again.processed_paths[0]).st_mtime_ns == stamp  # reused, not rebuilt
    dirs = {a.processed_dir}
    changes = ({"options": TreeOptions(max_length=16)}, {"options": TreeOptions(max_length=32, max_entities=1)},
               {"kg": None}, {"limit": 2}, {"options": TreeOptions(max_length=32, mode="reference")})
    for change in changes:
        other = KBertClassificationDataset(str(folder / "cls"), "train", **{**kw, **change})
        assert other.processed_dir not in dirs, change
        dirs.add(other.processed_dir)
    plain = KBertClassificationDataset(str(folder / "cls"), "train", **{**kw, "kg": None})
    assert not plain[0]["token"].branch.any() and len(plain) == 3
    # the source file changes: a new cache, with the new content
    path = folder / "cls" / "train.tsv"
    path.write_text(path.read_text(encoding="utf-8") + "0\t不好\n", encoding="utf-8")
    changed = KBertClassificationDataset(str(folder / "cls"), "train", **kw)
    assert changed.processed_dir not in dirs and len(changed) == 4


def test_old_keywords_give_the_same_graphs_with_one_warning(folder, tmp_path, shared_data):
    """The loose tree keywords of old calls build what ``options=`` builds (the same cache), with
    one DeprecationWarning naming ``options=``; both at once, or an unknown keyword, is a TypeError."""
    kw = _kw(tmp_path, shared_data, max_length=16, mode="reference")
    new = KBertClassificationDataset(str(folder / "cls"), "train", **kw)
    old_kw = {**kw, "options": None}
    with pytest.warns(DeprecationWarning, match=r"KBertClassificationDataset\(max_length=, mode=\) is deprecated: "
                                                r"pass options="):
        old = KBertClassificationDataset(str(folder / "cls"), "train", max_length=16, mode="reference", **old_kw)
    assert old.processed_dir == new.processed_dir and old.tree_options == new.tree_options
    with pytest.raises(TypeError, match="options= only, not also as max_length="):
        KBertClassificationDataset(str(folder / "cls"), "train", max_length=16, **kw)
    with pytest.raises(TypeError, match="unexpected keyword argument 'max_lenght'"):
        KBertClassificationDataset(str(folder / "cls"), "train", max_lenght=16, **old_kw)


def test_bad_input(folder, tmp_path, shared_data):
    bad = folder / "bad"
    bad.mkdir()
    (bad / "train.tsv").write_text("text\tlabel\nx\t1\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"train\.tsv:1: header .* lacks column\(s\) text_a"):
        KBertClassificationDataset(str(bad), "train", **_kw(tmp_path, shared_data))
    (bad / "train.tsv").write_text("label\ttext_a\n1\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"train\.tsv:2: expected 2 tab-separated fields"):
        KBertClassificationDataset(str(bad), "train", **_kw(tmp_path, shared_data))
    with pytest.raises(FileNotFoundError, match="nor a folder"):
        kbert_dataset(str(tmp_path / "nowhere"), "train", **_kw(tmp_path, shared_data))
    with pytest.raises(ValueError, match="split"):
        KBertClassificationDataset(str(folder / "cls"), "valid", **_kw(tmp_path, shared_data))
    (bad / "train.tsv").write_text("text_a\tlabel\n头\tO\n\u3000\tO\n", encoding="utf-8")  # only a wide space
    with pytest.raises(ValueError, match=r"train\.tsv:3: empty text"):
        KBertNERDataset(str(bad), "train", **_kw(tmp_path, shared_data, "ner"))


def test_label_set_order():
    from graphmatch.data.kbert import Example

    ex = [Example("a", None, lab, "f", 1) for lab in ("10", "2", "0")]
    assert label_set(ex, "classification") == ["0", "2", "10"]
    ner = [Example("ab", None, ["I-X", "B-X"], "f", 1), Example("c", None, ["O"], "f", 2)]
    assert label_set(ner, "ner") == ["O", "B-X", "I-X"]


def test_real_medical_ner_limit(tmp_path, shared_data):
    ds = kbert_dataset("medical_ner", "train", limit=30, kg="medical", **_kw(tmp_path, shared_data))
    assert isinstance(ds, KBertNERDataset) and len(ds) == 30
    assert "O" in ds.labels and any(t.startswith("B-") for t in ds.labels)
    # built all at once, every graph is what the one-by-one builder gives, plus the gold tags
    builder = ds.builder
    for i, ex in enumerate(ds.read()):
        expected, got = builder(ex.text_a, tags=ex.label), ds[i]
        for key in ("input_ids", "pos", "seg", "branch", "char_index", "y"):
            assert torch.equal(got["token"][key], expected["token"][key]), (i, key)
        for key in expected.edge_types:
            assert torch.equal(got[key].edge_index, expected[key].edge_index), (i, key)
        assert torch.equal(got["entity"].length, expected["entity"].length)
        assert got.tags.tolist() == [ds.labels.index(t) for t in ex.label] and got.num_chars.item() == len(ex.label)


def test_encodings_columns_and_labels(folder, tmp_path, shared_data, recwarn):
    """The rule of graphmatch.data.labels: BOM ignored, bad UTF-8 and extra fields named by line,
    unused columns and rare labels warned about."""
    data = folder / "enc"
    data.mkdir()
    rows = "".join(f"{i % 2}\t句子{i}很好\n" for i in range(40))
    (data / "train.tsv").write_bytes(b"\xef\xbb\xbf" + f"label\ttext_a\n{rows}yes\t拼错的标签\n".encode())
    ds = KBertClassificationDataset(str(data), "train", **_kw(tmp_path, shared_data))
    assert ds.labels == ["0", "1", "yes"] and len(ds) == 41
    rare = [str(w.message) for w in recwarn if "label 'yes'" in str(w.message)]
    assert rare == [f"{data / 'train.tsv'}:42: label 'yes' is in only 1 of 41 training examples (first here); "
                    "a typo? It is kept as a class of its own"]

    (data / "train.tsv").write_text("label\ttext_a\tsource\n" + rows.replace("\n", "\tweb\n"), encoding="utf-8")
    with pytest.warns(UserWarning, match=r"train\.tsv:1: column\(s\) source are not used"):
        KBertClassificationDataset(str(data), "train", **_kw(tmp_path, shared_data))
    (data / "train.tsv").write_text("label\ttext_a\n1\t一个\t两个\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"train\.tsv:2: expected 2 tab-separated fields .*got 3 \(a tab inside"):
        KBertClassificationDataset(str(data), "train", **_kw(tmp_path, shared_data))
    (data / "train.tsv").write_bytes("label\ttext_a\n1\t好\n".encode() + b"0\t\xff\n")
    with pytest.raises(ValueError, match=r"train\.tsv:3: not valid UTF-8"):
        KBertClassificationDataset(str(data), "train", **_kw(tmp_path, shared_data))


def test_a_relative_dataset_folder_is_found_under_the_data_root(folder, tmp_path, shared_data, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GRAPHMATCH_DATA", str(folder))
    ds = KBertClassificationDataset("cls", "train", **_kw(tmp_path, shared_data))
    assert ds.source == folder / "cls" / "train.tsv" and len(ds) == 3


def test_a_bom_in_the_middle_of_a_file_never_becomes_a_label(folder, tmp_path, shared_data, recwarn):
    """Two files joined (``cat a.tsv b.tsv``): the second one's BOM starts a line mid-file."""
    data = folder / "joined"
    data.mkdir()
    rows = "".join(f"{i % 2}\t句子{i}很好\n" for i in range(20))
    (data / "train.tsv").write_bytes(b"\xef\xbb\xbf" + f"label\ttext_a\n{rows}".encode() + b"\xef\xbb\xbf0\t"
                                     + "又一个句子\n".encode())
    ds = KBertClassificationDataset(str(data), "train", **_kw(tmp_path, shared_data))
    assert ds.labels == ["0", "1"] and len(ds) == 21
    assert not [w for w in recwarn if "\ufeff" in str(w.message)]
