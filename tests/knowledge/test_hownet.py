import sys
import types

import numpy as np
import pytest

from graphmatch.knowledge import HowNetLexicon, load_sememe_vectors


def test_polysemous_words_take_senses_from_the_sense_file(hownet_lexicon):
    assert hownet_lexicon.senses("的") == [("功能词", "构助"), ("定向", "射击", "用具", "部件")]
    assert len(hownet_lexicon.senses("在")) == 6


def test_other_words_have_one_sense(hownet_lexicon):
    assert hownet_lexicon.senses("...底") == [("功能词",)]
    assert hownet_lexicon.senses("不存在的词语xyz") == []
    assert "" not in hownet_lexicon
    assert len(hownet_lexicon) > 126000


def test_sememe_vectors(shared_data):
    vecs = load_sememe_vectors(root=shared_data)
    assert vecs.vectors.shape == (1984, 200) and vecs.vectors.dtype == np.float32
    assert vecs.names[vecs.index["贝多芬"]] == "贝多芬"


def test_sememe_vectors_bad_file(tmp_path):
    path = tmp_path / "v.txt"
    path.write_text("2 3\na 1 2 3\nb 1 2\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"v\.txt:3"):
        load_sememe_vectors(path)


def test_openhownet_conversion(monkeypatch, tmp_path):
    """With OpenHowNet data present, senses come from it (a stand-in dictionary here)."""
    sememe = types.SimpleNamespace
    senses = [
        types.SimpleNamespace(zh_word="苹果", get_sememe_list=lambda: [sememe(zh="水果")]),
        types.SimpleNamespace(zh_word="苹果", get_sememe_list=lambda: [sememe(zh="电脑"), sememe(zh="特定牌子")]),
    ]
    fake = types.ModuleType("OpenHowNet")
    fake.HowNetDict = lambda: types.SimpleNamespace(get_all_senses=lambda: senses)
    download = types.ModuleType("OpenHowNet.Download")
    download.OPENHOWNET_RESOURCE_PATH = str(tmp_path)
    monkeypatch.setitem(sys.modules, "OpenHowNet", fake)
    monkeypatch.setitem(sys.modules, "OpenHowNet.Download", download)
    with pytest.raises(OSError, match="not installed"):
        HowNetLexicon.from_openhownet()
    (tmp_path / "resources").mkdir()
    (tmp_path / "resources" / "HowNet_dict_complete").write_bytes(b"")
    lex = HowNetLexicon.load()
    assert lex.senses("苹果") == [("水果",), ("特定牌子", "电脑")]
