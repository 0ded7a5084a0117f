import os
import pickle

import numpy as np
import pytest

from graphmatch.text.pkuseg_features import NO_WORD, FeatureTables, feature_tables


def _model(folder, features, unigram=("北京", "天安门")):
    folder.mkdir(exist_ok=True)
    data = {"unigram": sorted(unigram), "bigram": [], "feature_to_idx": features, "tag_to_idx": {"B": 0, "I": 1}}
    (folder / "features.pkl").write_bytes(pickle.dumps(data))
    return folder


def test_lookup_is_an_exact_match(tmp_path):
    features = {"$$": 0, "c.北": 1, "c.京": 2, "cc1.北.京": 3, "w1.北京": 4, "ab": 5, "abc": 6, "x" * 41: 7}
    path = feature_tables(_model(tmp_path / "m", features), tmp_path / "cache")
    tables = FeatureTables(path)
    assert len(tables) == 8 and tables.tag_to_idx == {"B": 0, "I": 1} and tables.unigram == {"北京", "天安门"}
    queries = list(features) + ["a", "abd", "c.", "c.北京", "cc1.北.", "x" * 40, "x" * 42, "c.南", "", "b"]
    assert tables.lookup(queries).tolist() == list(features.values()) + [-1] * 10


def test_text_features_follow_pkusegs_order(tmp_path):
    # every feature the two-character text 北京 can have, indexed in a shuffled order
    names = ["c.北", "c1.京", "cc1.北.京", "w1.北京", "c.京", "c-1.北", "c-1c.北.京", "w-1.北京"]
    names += [f"ww.l.{NO_WORD}*北京", f"ww.r.北京*{NO_WORD}", f"ww.l.{NO_WORD}*{NO_WORD}", f"ww.r.{NO_WORD}*{NO_WORD}"]
    rng = np.random.default_rng(0)
    index = dict(zip(names, (rng.permutation(len(names)) + 1).tolist(), strict=True))
    tables = FeatureTables(feature_tables(_model(tmp_path / "m", {"$$": 0, **index}), tmp_path / "cache"))
    no, ww = index[f"ww.l.{NO_WORD}*{NO_WORD}"], index[f"ww.r.{NO_WORD}*{NO_WORD}"]
    first = [0, index["c.北"], index["c1.京"], index["cc1.北.京"], index["w1.北京"]]
    first += ([no] * 4 + [index[f"ww.l.{NO_WORD}*北京"]]) * 5 + [ww] * 25  # words before × words after
    second = [0, index["c.京"], index["c-1.北"], index["c-1c.北.京"], index["w-1.北京"]]
    second += [no] * 25 + [ww] * 20 + [index[f"ww.r.北京*{NO_WORD}"]] * 5
    for _ in range(2):  # the second time from the memos
        assert tables.text_features(["北", "京"]) == [first, second]


def test_tables_are_built_once_and_rebuilt_for_a_new_model(tmp_path):
    model = _model(tmp_path / "m", {"$$": 0, "c.北": 1})
    path = feature_tables(model, tmp_path / "cache")
    built = path.stat().st_mtime_ns
    assert feature_tables(model, tmp_path / "cache") == path and path.stat().st_mtime_ns == built
    _model(tmp_path / "m", {"$$": 0, "c.北": 1, "c.京": 2})
    os.utime(model / "features.pkl", ns=(built + 10**9, built + 10**9))
    again = feature_tables(model, tmp_path / "cache")
    assert again != path and FeatureTables(again).lookup(["c.京"]).tolist() == [2]
    assert [p.name for p in (tmp_path / "cache").iterdir() if ".tmp" in p.name] == []


@pytest.mark.parametrize("unigram", [(), ("",), ("", "北京"), ("北京",)])
def test_word_lists_round_trip(tmp_path, unigram):
    """pkuseg's default model lists the empty string as a word; the tables keep it, and only it."""
    tables = FeatureTables(feature_tables(_model(tmp_path / "m", {"$$": 0}, unigram=unigram), tmp_path / "cache"))
    assert tables.unigram == set(unigram)


def test_a_word_the_tables_cannot_hold_is_refused(tmp_path):
    with pytest.raises(ValueError, match="no tables are built"):
        feature_tables(_model(tmp_path / "m", {"$$": 0}, unigram=("北京", NO_WORD)), tmp_path / "cache")
    assert not list((tmp_path / "cache").glob("*.npz"))


def _reference(nodes, index, unigram, word_min, word_max):
    """pkuseg's per-character feature function, written plainly with a dict."""
    n, out = len(nodes), []

    def piece(start, length):
        return "" if start < 0 or start >= n or start + length > n else "".join(nodes[start:start + length])

    def word(start, length):
        return piece(start, length) if piece(start, length) in unigram else NO_WORD

    lengths = range(word_max, word_min - 1, -1)
    for i, c in enumerate(nodes):
        names = ["c." + c]
        if i > 0:
            names += ["c-1." + nodes[i - 1], "c-1c." + nodes[i - 1] + "." + c]
        if i + 1 < n:
            names += ["c1." + nodes[i + 1], "cc1." + c + "." + nodes[i + 1]]
        if i > 1:
            names += ["c-2." + nodes[i - 2], "c-2c-1." + nodes[i - 2] + "." + nodes[i - 1]]
        if i + 2 < n:
            names.append("c2." + nodes[i + 2])
        pre_in, post_in = [word(i - k + 1, k) for k in lengths], [word(i, k) for k in lengths]
        pre_ex, post_ex = [word(i - k, k) for k in lengths], [word(i + 1, k) for k in lengths]
        names += ["w-1." + w for w in pre_in if w != NO_WORD] + ["w1." + w for w in post_in if w != NO_WORD]
        names += [f"ww.l.{p}*{q}" for p in pre_ex for q in post_in] + [f"ww.r.{p}*{q}" for p in pre_in for q in post_ex]
        out.append([0] + [index[name] for name in names if name in index])
    return out


@pytest.mark.parametrize(("word_min", "word_max", "empty_word"), [(2, 6, False), (2, 3, False), (1, 4, False),
                                                                  (2, 6, True)])
def test_text_features_equal_a_plain_reference(tmp_path, word_min, word_max, empty_word):
    """``empty_word``: "" is a training word, as in pkuseg's default model, so that substrings
    reaching outside the text count as words."""
    rng = np.random.default_rng(word_max)
    alphabet = list("北京天安门上太阳") + ["**Num", "**Letter"]
    texts = [[alphabet[k] for k in rng.integers(0, len(alphabet), size=rng.integers(1, 12))] for _ in range(40)]
    unigram = {"".join(t[a:a + k]) for t in texts[:20] for a in range(len(t)) for k in (1, 2, 3)}
    unigram |= {""} if empty_word else set()
    index = {"$$": 0}  # every feature string the texts produce, half of them known
    names = sorted({name for t in texts for name in _names(t, unigram, word_min, word_max)})
    index.update({name: k + 1 for k, name in enumerate(names[::2])})
    tables = FeatureTables(feature_tables(_model(tmp_path / "m", index, unigram=sorted(unigram)), tmp_path / "cache"))
    for text in texts + texts:  # the second time from the memos
        assert tables.text_features(text, word_min, word_max) == _reference(text, index, unigram, word_min, word_max)


def _names(nodes, unigram, word_min, word_max):
    everything = _AllNames()
    _reference(nodes, everything, unigram, word_min, word_max)
    return everything.seen


class _AllNames(dict):
    """A dict that records every name asked for and knows none of them."""

    def __init__(self):
        super().__init__()
        self.seen = set()

    def __contains__(self, name):
        self.seen.add(name)
        return False
