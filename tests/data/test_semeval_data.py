import pytest
import torch

from graphmatch.data.relation_formats import SEMEVAL_LABELS as LABELS
from graphmatch.data.semeval import LABEL_INDEX, SemEval2010Task8, dev_ids, read_semeval_file
from graphmatch.graphs.relation import tokenize_marked
from graphmatch.graphs.relation_options import RelationOptions
from graphmatch.text.vocab import Vocab, load_word_vectors

GOOD = (
    '1\t"The <e1>company</e1> fabricates plastic <e2>chairs</e2>."\r\n'
    "Product-Producer(e2,e1)\r\n"
    "Comment: (a) is satisfied\r\n"
    "\r\n"
    '2\t"The <e1>child</e1> was wrapped into the <e2>cradle</e2>."\r\n'
    "Other\r\n"
    "Comment:\r\n"
    "\r\n"
)


def _write(tmp_path, text, name="f.txt"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8", newline="")
    return path


def test_read_semeval_file(tmp_path):
    ex = read_semeval_file(_write(tmp_path, GOOD))
    assert [e.sid for e in ex] == [1, 2]
    assert [e.label for e in ex] == ["Product-Producer(e2,e1)", "Other"]
    assert [e.line for e in ex] == [1, 5]
    assert ex[0].sentence.text == "The company fabricates plastic chairs."
    assert ex[0].sentence.entity_text(1) == "company" and ex[0].sentence.entity_text(2) == "chairs"
    assert tokenize_marked(ex[0].sentence).tokens == ["the", "company", "fabricates", "plastic", "chairs", "."]
    unlabelled = read_semeval_file(_write(tmp_path, '9\t"<e1>a</e1> <e2>b</e2>"\n10\t"x <e1>a</e1> <e2>b</e2>"\n'),
                                   labelled=False)
    assert [e.label for e in unlabelled] == [None, None]


@pytest.mark.parametrize(
    "text, where, message",
    [
        ("", "", "empty file"),
        ("\r\n\r\n", "", "empty file"),
        ('1\t"The <e1>a</e1> b c."\nOther\n', ":1", "missing entity marker <e2>"),
        ('1\t"<e2>a</e2> <e1>b</e1>"\nOther\n', ":1", "wrong order"),
        ('1\t"<e1>a</e1> <e2>b</e2>"\nOther\n\n1\t"<e1>c</e1> <e2>d</e2>"\nOther\n', ":4",
         "sentence id 1 already appears on line 1"),
        ('1\t"<e1>a</e1> <e2>b</e2>"\n\n2\t"<e1>a</e1> <e2>b</e2>"\nOther\n', ":1", "no label line"),
        ('1\t"<e1>a</e1> <e2>b</e2>"', ":1", "no label line"),
        ('Other\n1\t"<e1>a</e1> <e2>b</e2>"\nOther\n', ":1", "expected ID<TAB>"),
    ],
)
def test_bad_files_name_file_and_line(tmp_path, text, where, message):
    path = _write(tmp_path, text)
    with pytest.raises(ValueError, match=f"^{path}{where}: ") as err:
        read_semeval_file(path)
    assert message in str(err.value)


def test_vocab_build_save_load(tmp_path):
    vocab = Vocab.build([["b", "a", "b"], ["c", "b", "a"]])
    assert vocab.itos == ["<pad>", "<unk>", "b", "a", "c"]
    assert vocab["a"] == 3 and vocab["zzz"] == vocab.unk_id == 1 and "c" in vocab
    assert vocab.lookup(["c", "q"]) == [4, 1]
    assert Vocab.build([["b", "a", "b"]], min_freq=2).itos == ["<pad>", "<unk>", "b"]
    vocab.save(tmp_path / "v.json")
    assert Vocab.load(tmp_path / "v.json") == vocab
    with pytest.raises(ValueError, match="must start with"):
        Vocab(["a", "b"])


def test_load_word_vectors(tmp_path):
    vocab = Vocab.build([["the", "cat", "paris"]])  # tokens are lowercased
    glove = _write(tmp_path, "the 1 2 3\nPARIS 0 0 1\nparis 7 7 7\ndog 4 4 4\n", "glove.txt")
    vec, found = load_word_vectors(glove, vocab)
    assert vec.shape == (5, 3)
    assert found.tolist() == [False, False, True, False, True]
    assert vec[vocab["the"]].tolist() == [1, 2, 3]
    assert vec[vocab["paris"]].tolist() == [7, 7, 7]  # the exact match wins over "PARIS" lowercased
    w2v = _write(tmp_path, "2 2\ncat 0.5 -1\nParis 1 1\n", "w2v.txt")
    vec, found = load_word_vectors(w2v, vocab, dim=2)
    assert vec[vocab["cat"]].tolist() == [0.5, -1] and vec[vocab["paris"]].tolist() == [1, 1]
    with pytest.raises(ValueError, match=r"w2v.txt:2: vector of 'cat' has 2 values, expected 3"):
        load_word_vectors(w2v, vocab, dim=3)
    with pytest.raises(ValueError, match=r"bad.txt:1: could not convert"):
        load_word_vectors(_write(tmp_path, "the x y\n", "bad.txt"), vocab)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_word_vectors(tmp_path / "nope.txt", vocab)


@pytest.fixture(scope="module")
def semeval(shared_data, tmp_path_factory):
    root = tmp_path_factory.mktemp("semeval_cache")
    return {s: SemEval2010Task8(s, root=shared_data, cache=root) for s in ("train", "dev", "test")}, root


def test_real_splits(semeval, shared_data):
    ds, _ = semeval
    assert [len(ds[s]) for s in ("train", "dev", "test")] == [7200, 800, 2717]
    assert ds["train"].label_names == list(LABELS) and len(LABELS) == 19
    test_ids = torch.cat([d.sid for d in ds["test"]]).tolist()
    assert test_ids == list(range(8001, 10718))
    train_ids = set(torch.cat([d.sid for d in ds["train"]]).tolist())
    dev = set(torch.cat([d.sid for d in ds["dev"]]).tolist())
    assert not train_ids & dev and train_ids | dev == set(range(1, 8001))
    ex = read_semeval_file(shared_data / "semeval2010_task8" / "TRAIN_FILE.TXT")
    assert dev == dev_ids(ex, 800, 1)
    assert dev != dev_ids(ex, 800, 2)
    first = ds["test"][0]
    assert LABELS[int(first.y)] == "Message-Topic(e1,e2)"
    assert first["token"].num_nodes == 14 and first["entity"].num_nodes == 2  # 10 words + 4 markers


def test_vocabulary_is_built_on_train_only(semeval, shared_data):
    ds, _ = semeval
    vocab = ds["test"].vocab
    assert vocab == ds["train"].vocab
    train_words = set()
    train_sids = set(torch.cat([d.sid for d in ds["train"]]).tolist())
    for e in read_semeval_file(shared_data / "semeval2010_task8" / "TRAIN_FILE.TXT"):
        if e.sid in train_sids:
            train_words.update(tokenize_marked(e.sentence).tokens)
    assert set(vocab.itos[2:]) == train_words | {"<e1>", "</e1>", "<e2>", "</e2>"}
    unk = sum(int((d["token"].word_id == vocab.unk_id).sum()) for d in ds["test"])
    assert unk > 0  # test words unseen in train map to <unk>


def test_cache_is_keyed_by_options(semeval, shared_data):
    ds, root = semeval
    small = SemEval2010Task8("dev", root=shared_data, cache=root, options=RelationOptions(max_distance=5),
                             dev_size=100)
    assert len(small) == 100 and small.processed_dir != ds["dev"].processed_dir
    assert int(torch.cat([d["token"].pos1 for d in small]).max()) <= 10
    plain = SemEval2010Task8("dev", root=shared_data, cache=root, options=RelationOptions(markers=False))
    assert plain.processed_dir != ds["dev"].processed_dir and "<e1>" not in plain.vocab
    assert plain[0]["token"].num_nodes == ds["dev"][0]["token"].num_nodes - 4
    again = SemEval2010Task8("dev", root=shared_data, cache=root)
    assert again.processed_dir == ds["dev"].processed_dir
    assert torch.equal(again[5]["token"].word_id, ds["dev"][5]["token"].word_id)
    assert LABEL_INDEX["Other"] == 0


def test_bad_options(shared_data, tmp_path):
    with pytest.raises(ValueError, match="unknown split"):
        SemEval2010Task8("valid", root=shared_data, cache=tmp_path)
    with pytest.raises(ValueError, match="dev_size must be between"):
        SemEval2010Task8("dev", root=shared_data, cache=tmp_path, dev_size=0)


def test_own_files_instead_of_the_release(samples, tmp_path):
    train, test = samples / "relation" / "train.txt", samples / "relation" / "test.txt"
    if not train.is_file():
        pytest.skip("no relation sample set")
    ds = {s: SemEval2010Task8(s, cache=tmp_path, train_file=train, test_file=test, dev_size=10)
          for s in ("train", "dev", "test")}
    n_train, n_test = len(read_semeval_file(train)), len(read_semeval_file(test))
    assert [len(ds[s]) for s in ("train", "dev", "test")] == [n_train - 10, 10, n_test]
    with pytest.raises(FileNotFoundError, match="does not exist"):
        SemEval2010Task8("train", cache=tmp_path, train_file=tmp_path / "none.txt", test_file=test)
