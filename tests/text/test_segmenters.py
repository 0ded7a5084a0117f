import warnings

import pytest

from graphmatch.text import Span, align_words, get_segmenter, lattice


def _check_spans(text, spans):
    for w, s, e in spans:
        assert text[s:e] == w and w.strip() == w and w


def test_jieba_spans_cover_text_without_whitespace():
    text = "南京市长江大桥 今天 开通了！"
    spans = get_segmenter("jieba").segment(text)
    _check_spans(text, spans)
    assert "".join(w for w, _, _ in spans) == text.replace(" ", "")
    assert Span("南京市", 0, 3) in spans


def test_segmenters_are_loaded_once():
    assert get_segmenter("jieba") is get_segmenter("jieba")
    with pytest.raises(ValueError, match="unknown segmenter"):
        get_segmenter("nltk")


def test_thulac_spans():
    text = "我爱北京天安门"
    spans = get_segmenter("thulac").segment(text)
    _check_spans(text, spans)
    assert "".join(w for w, _, _ in spans) == text
    assert get_segmenter("thulac").segment("   ") == []


def test_pkuseg_optional():
    try:
        import pkuseg  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pip install"):
            get_segmenter("pkuseg")
        return
    text = "我爱北京天安门"
    _check_spans(text, get_segmenter("pkuseg").segment(text))


def test_lattice_union_is_sorted_and_deduplicated():
    text = "南京市长江大桥"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spans = lattice(text, ("jieba", "thulac", "pkuseg"))
    keys = [(s, e) for _, s, e in spans]
    assert keys == sorted(set(keys))
    _check_spans(text, spans)
    assert set(get_segmenter("jieba").segment(text)) <= set(spans)


def test_align_words_skips_unknown_and_whitespace():
    assert align_words("ab cd", ["ab", " ", "x", "cd"]) == [Span("ab", 0, 2), Span("cd", 3, 5)]


@pytest.mark.parametrize("text", ["", "   ", "😀😀", "ABC def 123"])
def test_odd_inputs(text):
    spans = get_segmenter("jieba").segment(text)
    _check_spans(text, spans)
    assert "".join(w for w, _, _ in spans) == "".join(text.split())


def test_loading_prints_nothing_to_stdout(capfd):
    get_segmenter.cache_clear()
    get_segmenter("thulac").segment("我爱北京")
    assert capfd.readouterr().out == ""


def test_mapped_thulac_tables_segment_exactly_as_thulac(samples):
    """thulac's tables memory-mapped (instead of 0.75 GB of Python integers) give thulac's own words."""
    from graphmatch.text.segmenters import ThulacSegmenter

    texts = [field for f in sorted(samples.rglob("*.tsv")) for line in f.read_text(encoding="utf-8").splitlines()[1:]
             for field in line.split("\t") if len(field) > 1 and not field.isdigit()]
    texts += ["南京市长江大桥", "我爱北京天安门，天安门上太阳升。", "iPhone 15 Pro 的电池 3274mAh 够用吗？", "　"]
    assert len(texts) > 200
    compact, original = ThulacSegmenter(), ThulacSegmenter(compact=False)
    tagger = compact._model._thulac__cws_tagging_decoder
    assert isinstance(tagger.dat.dat, memoryview) and isinstance(tagger.model.fl_weights, memoryview)
    assert isinstance(original._model._thulac__cws_tagging_decoder.dat.dat, tuple)  # thulac's own loading
    assert [compact.segment(t) for t in texts] == [original.segment(t) for t in texts]


def test_compact_pkuseg_segments_exactly_as_pkuseg(samples, pkuseg, tmp_path, monkeypatch):
    """Memory-mapped weights and feature tables (built here from pkuseg's own model, not taken
    from a cache) give pkuseg's own feature indices, character by character, and so its words."""
    import warnings

    import numpy as np
    from pkuseg.feature_extractor import FeatureExtractor

    from graphmatch.text import pkuseg_features
    from graphmatch.text.pkuseg_adapter import TableFeatureExtractor
    from graphmatch.text.segmenters import PkusegSegmenter

    monkeypatch.setattr(pkuseg_features, "CACHE_DIR", tmp_path)

    texts = ["南京市长江大桥", "我爱北京天安门，天安门上太阳升。", "iPhone 15 Pro 的电池 3274mAh 够用吗？",
             "ＡＢＣ３.５万元-._,|/*:测试", "一", "　", ""]
    lines = (samples / "sentiment" / "dev.tsv").read_text(encoding="utf-8").split("\n")[1:]
    texts += [line.split("\t")[1] for line in lines if "\t" in line]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback to pkuseg's own loading
        mapped = PkusegSegmenter()
    original = PkusegSegmenter(compact=False)
    assert list(tmp_path.glob("pkuseg/features-*.npz"))
    assert isinstance(mapped._model.model.w, np.memmap) and not isinstance(original._model.model.w, np.memmap)
    assert np.array_equal(mapped._model.model.w, original._model.model.w)
    tables, extractor = mapped._model.feature_extractor, original._model.feature_extractor
    assert isinstance(tables, TableFeatureExtractor) and isinstance(extractor, FeatureExtractor)
    assert len(tables.feature_to_idx) == len(extractor.feature_to_idx) and tables.tag_to_idx == extractor.tag_to_idx
    for text in texts:
        nodes = list(FeatureExtractor.normalize_text(text))
        assert [tables.get_node_features_idx(i, nodes) for i in range(len(nodes))] == \
            [extractor.get_node_features_idx(i, nodes) for i in range(len(nodes))], text
    assert [mapped.segment(t) for t in texts] == [original.segment(t) for t in texts]


def test_pkuseg_without_a_writable_cache_loads_its_own_features(tmp_path, monkeypatch, pkuseg):
    from pkuseg.feature_extractor import FeatureExtractor

    from graphmatch.text import pkuseg_features
    from graphmatch.text.segmenters import PkusegSegmenter

    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    monkeypatch.setattr(pkuseg_features, "CACHE_DIR", blocked)
    with pytest.warns(UserWarning, match="pkuseg feature tables unavailable .*file"):
        segmenter = PkusegSegmenter()
    assert isinstance(segmenter._model.feature_extractor, FeatureExtractor)
    assert [w for w, _, _ in segmenter.segment("南京市长江大桥")] == ["南京市", "长江", "大桥"]
