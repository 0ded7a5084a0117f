"""``predict --explain``'s picture (:func:`graphmatch.viz.attention.draw_token_attention`)."""

from __future__ import annotations

import logging
import warnings

from matplotlib import font_manager

from graphmatch.viz.attention import draw_token_attention


def test_entity_labels_ask_no_missing_bold_face(tmp_path, caplog):
    """The CJK font may have no bold face (WenQuanYi Micro Hei): the entity tokens are then told
    apart by colour and size, and matplotlib logs no ``findfont: … weight bold`` warning."""
    font_manager.fontManager._findfont_cached.cache_clear()  # a lookup made by an earlier test logs nothing
    path = tmp_path / "explain.png"
    with caplog.at_level(logging.INFO, logger="matplotlib.font_manager"), warnings.catch_warnings():
        warnings.simplefilter("error")
        draw_token_attention(tokens=["[CLS]", "北", "京", "是", "首", "都"], weights=[0.1, 0.3, 0.2, 0.1, 0.2, 0.1],
                             entity_tokens=[[1, 2], [4, 5]], type_weights=[[0.7, 0.3], [0.2, 0.8]],
                             title="北京是首都\t北京\t首都", path=path)
    assert path.read_bytes()[:4] == b"\x89PNG"
    assert not [r.getMessage() for r in caplog.records if "findfont" in r.getMessage()]
