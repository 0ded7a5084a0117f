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


def test_a_word_the_tables_cannot_hold_is_refused(tmp_path):
    with pytest.raises(ValueError, match="no tables are built"):
        feature_tables(_model(tmp_path / "m", {"$$": 0}, unigram=("北京", NO_WORD)), tmp_path / "cache")
    assert not list((tmp_path / "cache").glob("*.npz"))
