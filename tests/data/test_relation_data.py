import pytest
import torch

from graphmatch.data.relation import RelationDataset
from graphmatch.data.relation_formats import read_tsv_file
from graphmatch.graphs.relation_options import RelationOptions


@pytest.fixture(scope="module")
def zh(samples):
    return {s: samples / "relation_zh" / f"{s}.tsv" for s in ("train", "dev", "test")}


def _ds(tmp_path, files, split="train", **kw):
    """A dataset of ``files``; the keywords that are graph settings go in its ``options``."""
    tree = {name: kw.pop(name) for name in RelationOptions.__dataclass_fields__ if name in kw}
    return RelationDataset(split, cache=tmp_path, train_file=files["train"], dev_file=files.get("dev"),
                           test_file=files.get("test"), options=RelationOptions(**tree), **kw)


def test_chinese_files_per_character(tmp_path, zh):
    ds = {s: _ds(tmp_path, zh, s, tokenization="chars", max_distance=10) for s in ("train", "dev", "test")}
    assert [len(ds[s]) for s in ds] == [40, 20, 20]
    assert ds["train"].label_names == ["位于", "出生于", "创办", "无关系", "毕业于"]
    vocab = ds["train"].vocab
    assert "<e1>" in vocab and "故" in vocab and "故宫" not in vocab
    first = ds["train"][0]  # 故宫位于北京市中心。: 10 characters + 4 markers
    assert first["token"].num_nodes == 14 and int(first.y) == 0 and first.sid.tolist() == [1]
    tokens = [vocab.itos[i] for i in first["token"].word_id.tolist()]
    assert tokens[:4] == ["<e1>", "故", "宫", "</e1>"]
    reversed_ = ds["train"][4]  # 在西安，兵马俑…: the tail is written first
    ent = reversed_["token", "in", "entity"].edge_index
    assert ent[0, ent[1] == 1].tolist() == [2, 3] and ent[0, ent[1] == 0].tolist() == [7, 8, 9]
    # dev and test words unseen in train map to <unk>; the vocabulary is train's
    assert ds["test"].vocab == vocab
    assert any((g["token"].word_id == vocab.unk_id).any() for g in ds["test"])


def test_segmenter_tokens_and_cache_keys(tmp_path, zh):
    chars = _ds(tmp_path, zh, tokenization="chars")
    words = _ds(tmp_path, zh, tokenization="jieba")
    assert words.processed_dir != chars.processed_dir
    assert sum(g["token"].num_nodes for g in words) < sum(g["token"].num_nodes for g in chars)
    assert "故宫" in words.vocab
    again = _ds(tmp_path, zh, tokenization="chars")
    assert again.processed_dir == chars.processed_dir
    assert torch.equal(again[3]["token"].word_id, chars[3]["token"].word_id)


def test_dev_held_out_without_a_dev_file(tmp_path, zh):
    files = {"train": zh["train"], "test": zh["test"]}
    train = _ds(tmp_path, files, "train", tokenization="chars", dev_size=8, split_seed=3)
    dev = _ds(tmp_path, files, "dev", tokenization="chars", dev_size=8, split_seed=3)
    ids = lambda ds: set(torch.cat([g.sid for g in ds]).tolist())  # noqa: E731
    assert len(train) == 32 and len(dev) == 8 and not ids(train) & ids(dev)
    assert ids(train) | ids(dev) == {e.sid for e in read_tsv_file(zh["train"])}
    with pytest.raises(ValueError, match="no test split"):
        _ds(tmp_path, {"train": zh["train"]}, "test", tokenization="chars", dev_size=8)


def test_label_only_in_test_is_an_error_naming_file_and_line(tmp_path, zh):
    test = tmp_path / "test.tsv"
    test.write_text(zh["test"].read_text(encoding="utf-8") + "李华\t成都\t祖籍\t李华祖籍成都。\n", encoding="utf-8")
    with pytest.raises(ValueError, match=f"^{test}:21: label '祖籍' does not occur in the training data"):
        _ds(tmp_path / "c", {**zh, "test": test}, tokenization="chars")


def test_entity_missing_from_its_sentence(tmp_path, zh):
    dev = tmp_path / "dev.tsv"
    dev.write_text("长城\t北京\t位于\t长城很长。\n", encoding="utf-8")
    with pytest.raises(ValueError, match=f"^{dev}:1: the tail entity '北京' is not in the sentence"):
        _ds(tmp_path / "c", {**zh, "dev": dev}, tokenization="chars")


def test_word_pieces_of_a_pretrained_tokenizer(tmp_path, zh):
    from tiny_bert import tiny_bert_folder

    texts = [line.split("\t")[3] for s in ("train", "dev") for line in zh[s].read_text(encoding="utf-8").splitlines()]
    folder = tiny_bert_folder(tmp_path / "bert", texts)
    ds = _ds(tmp_path, zh, "dev", tokenization="pieces", pretrained=folder)
    assert ds.vocab is None and len(ds) == 20
    g = ds[0]  # 长城的一段位于北京北部。
    ids = g["token"].word_id.tolist()
    assert ids[0] == 6 and ids[-1] == 7 and ids[1] == 1  # [CLS] [unused0] ... [SEP]
    assert g["token", "starts", "entity"].edge_index.tolist() == [[1, 10], [0, 1]]  # <e2> after 的一段位于
    with pytest.raises(ValueError, match="needs a pretrained tokenizer folder"):
        _ds(tmp_path, zh, tokenization="pieces")
    with pytest.raises(ValueError, match="unknown tokenization 'bpe'"):
        _ds(tmp_path, zh, tokenization="bpe")


def _with_far_entities(tmp_path, zh):
    """The sample's train file and two lines whose entities lie 30 characters apart (lines 41, 42;
    38 tokens with the markers)."""
    far = "张三" + "很" * 30 + "北京"
    train = tmp_path / "train.tsv"
    train.write_text(zh["train"].read_text(encoding="utf-8") + f"张三\t北京\t位于\t{far}。\n" * 2, encoding="utf-8")
    return {**zh, "train": train}


def test_on_bad_line_error_or_skip_with_one_warning(tmp_path, zh):
    files = _with_far_entities(tmp_path, zh)
    with pytest.raises(ValueError, match=f"^{files['train']}:41: the entities span 38 tokens, more than max_length=20"):
        _ds(tmp_path / "a", files, tokenization="chars", max_length=20)
    with pytest.warns(UserWarning, match=rf"^skipped 2 line\(s\) .*: {files['train']}:41, {files['train']}:42; "
                                         r"the first: the entities span 38"):
        ds = _ds(tmp_path / "b", files, tokenization="chars", max_length=20, on_bad_line="skip")
    assert len(ds) == 40 and 41 not in torch.cat([g.sid for g in ds]).tolist()
    with pytest.raises(ValueError, match="unknown on_bad_line 'drop'"):
        _ds(tmp_path / "c", files, tokenization="chars", on_bad_line="drop")


def test_max_length_auto_is_the_longest_training_sentence(tmp_path, zh):
    files = _with_far_entities(tmp_path, zh)
    ds = _ds(tmp_path, files, tokenization="chars", max_length="auto")
    longest = max(g["token"].num_nodes for g in ds)
    assert ds.max_length == longest == 35 + 4 and len(ds) == 42  # 35 characters and 4 markers: none cut
    dev = _ds(tmp_path, files, "dev", tokenization="chars", max_length="auto")
    assert dev.max_length == ds.max_length and len(dev) == 20


def test_unknown_share_of_the_training_tokens(tmp_path, zh):
    ds = _ds(tmp_path, zh, tokenization="chars", min_freq=2)
    ids = torch.cat([g["token"].word_id for g in ds])
    assert ds.unknown["share"] == pytest.approx(100 * float((ids == 1).float().mean()))
    assert ds.unknown["share"] > 5 and len(ds.unknown["top"]) == 10
    token, count = ds.unknown["top"][0]
    assert token not in ds.vocab and count >= ds.unknown["top"][-1][1]
    assert _ds(tmp_path, zh, tokenization="chars").unknown == {"share": 0.0, "top": []}


def test_limits_build_graphs_for_the_first_examples_only(tmp_path, zh, monkeypatch):
    """``limits``: graphs for the first N examples of a split only (the builder never sees the
    others), the label set still the whole training file's, and its own cache."""
    from graphmatch.graphs.relation import RelationGraphBuilder

    built = []
    real = RelationGraphBuilder.tokenized

    def counting(self, sentence, *args, **kwargs):
        built.append(sentence)
        return real(self, sentence, *args, **kwargs)

    monkeypatch.setattr(RelationGraphBuilder, "tokenized", counting)
    limits = {"train": 5, "dev": 3, "test": None}
    ds = {s: _ds(tmp_path, zh, s, tokenization="chars", limits=limits) for s in ("train", "dev", "test")}
    assert [len(ds[s]) for s in ds] == [5, 3, 20] and len(built) == 5 + 3 + 20
    assert ds["train"].label_names == ["位于", "出生于", "创办", "无关系", "毕业于"]
    whole = _ds(tmp_path, zh, tokenization="chars")
    assert whole.processed_dir != ds["train"].processed_dir and len(whole) == 40
    assert ds["train"][4].sid.tolist() == whole[4].sid.tolist()  # the first lines, in order
    with pytest.raises(ValueError, match="limits must be positive"):
        _ds(tmp_path, zh, limits={"train": 0})


def test_old_keywords_give_the_same_graphs_with_one_warning(tmp_path, zh):
    """The loose graph keywords of old calls build what ``options=`` builds (the same cache), with
    one DeprecationWarning naming ``options=``; both at once is a TypeError."""
    new = _ds(tmp_path, zh, tokenization="chars", max_distance=10)
    files = dict(cache=tmp_path, train_file=zh["train"], dev_file=zh["dev"], test_file=zh["test"])
    with pytest.warns(DeprecationWarning, match=r"RelationDataset\(tokenization=, max_distance=\) is deprecated: "
                                                r"pass options="):
        old = RelationDataset("train", tokenization="chars", max_distance=10, **files)
    assert old.processed_dir == new.processed_dir and old.builder_options == new.builder_options
    with pytest.raises(TypeError, match="options= only, not also as max_distance="):
        RelationDataset("train", options=RelationOptions(tokenization="chars"), max_distance=10, **files)
