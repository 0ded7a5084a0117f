import warnings

import numpy as np
import pytest
import torch
from matplotlib.colors import to_rgb
from PIL import Image

from graphmatch.viz import fonts
from graphmatch.viz.graph_png import dense_visibility, draw_graph, draw_visibility, graph_figure
from graphmatch.viz.layout import (
    HALF_HEIGHT,
    MAX_SHIFT,
    NODE_COLORS,
    edge_curves,
    edge_name,
    layered_layout,
    node_labels,
)


def _pixels(path) -> np.ndarray:
    with Image.open(path) as img:
        return np.asarray(img.convert("RGB"))


def _has_color(pixels: np.ndarray, color: str, tol: int = 3) -> bool:
    rgb = np.array([round(255 * c) for c in to_rgb(color)])
    return bool((np.abs(pixels.astype(int) - rgb).max(axis=-1) <= tol).any())


def _figure_texts(fig) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts]


def test_png_is_written_at_the_requested_resolution_and_is_not_blank(tree, tmp_path):
    small = draw_graph(tree, tmp_path / "small.png", title="tree", dpi=50)
    big = draw_graph(tree, tmp_path / "sub" / "big.png", title="tree", dpi=100)
    assert small.is_file() and big.is_file()
    hs, ws, _ = _pixels(small).shape
    hb, wb, _ = _pixels(big).shape
    assert abs(wb - 2 * ws) <= 2 and abs(hb - 2 * hs) <= 2
    assert ws >= 6 * 50 and hs >= 2 * 50  # at least the minimum width, a few rows high
    pixels = _pixels(big)
    assert len(np.unique(pixels.reshape(-1, 3), axis=0)) > 50  # anti-aliased text, boxes and lines
    for node_type in ("token", "word", "entity"):
        assert _has_color(pixels, NODE_COLORS[node_type]), f"no {node_type} box in the picture"


def test_longer_graphs_give_wider_pictures(tmp_path):
    from torch_geometric.data import HeteroData

    def line(n: int) -> HeteroData:
        data = HeteroData()
        data["token"].num_nodes = n
        data["token"].text = ["字"] * n
        return data

    short = _pixels(draw_graph(line(40), tmp_path / "a.png", dpi=40)).shape[1]
    long = _pixels(draw_graph(line(80), tmp_path / "b.png", dpi=40)).shape[1]
    assert long > 1.6 * short


def test_legend_names_every_node_and_edge_type(lattice, tree):
    for data in (lattice, tree):
        fig = graph_figure(data)
        legend = [t.get_text() for t in fig.legends[0].get_texts()]
        for node_type in data.node_types:
            n = int(data[node_type].num_nodes)
            assert f"{node_type} ({n})" in legend
        for edge_type in data.edge_types:
            assert edge_name(edge_type) in legend
    fig = graph_figure(tree)
    assert "token (branch, 6)" in [t.get_text() for t in fig.legends[0].get_texts()]


def test_selected_edge_types_only(lattice):
    keep = [("word", "contains", "token"), ("sense", "of", "word")]
    fig = graph_figure(lattice, edge_types=keep)
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert edge_name(keep[0]) in legend and edge_name(keep[1]) in legend
    assert edge_name(("word", "next", "word")) not in legend
    arrows = [p for p in fig.axes[0].patches if type(p).__name__ == "FancyArrowPatch"]
    assert len(arrows) == lattice[keep[0]].edge_index.size(1) + lattice[keep[1]].edge_index.size(1)
    with pytest.raises(ValueError, match="not in the graph"):
        graph_figure(lattice, edge_types=[("word", "missing", "token")])


def test_labels_from_text_or_type_and_index(lattice, unlabelled, tree):
    texts = _figure_texts(graph_figure(lattice))
    assert "南" in texts and "江大桥" in texts and "建筑物|桥" in texts
    texts = _figure_texts(graph_figure(unlabelled))
    assert "token:0" in texts and "sememe:5" in texts and "南" not in texts
    texts = _figure_texts(graph_figure(tree))
    assert "pos" in texts and texts.count("5") >= 3  # soft positions written under the tokens


def test_label_count_must_match_nodes(lattice):
    lattice["word"].text = ["北京"]
    with pytest.raises(ValueError, match="1 labels for 6 nodes"):
        node_labels(lattice, "word")


def test_empty_graph_is_an_error():
    from torch_geometric.data import HeteroData

    with pytest.raises(ValueError, match="no nodes"):
        graph_figure(HeteroData())


def test_layout_tokens_in_order_rows_above_and_no_overlap(lattice):
    layout = layered_layout(lattice)
    tokens = layout.pos["token"]
    assert np.all(np.diff(tokens[:, 0]) > 0) and np.all(tokens[:, 1] == 0)
    order = list(layout.pos)
    assert order == ["token", "word", "sense", "sememe"]
    for lower, upper in zip(order, order[1:], strict=False):
        assert layout.pos[upper][:, 1].min() > layout.pos[lower][:, 1].max()
    for nt, pos in layout.pos.items():  # boxes on one line never overlap
        for y in np.unique(pos[:, 1]):
            on_line = pos[:, 1] == y
            left = pos[on_line, 0] - layout.width[nt][on_line] / 2
            right = pos[on_line, 0] + layout.width[nt][on_line] / 2
            order_ = np.argsort(left)
            assert np.all(left[order_][1:] >= right[order_][:-1])
    # a word sits near the middle of its characters (within MAX_SHIFT em)
    spans = lattice["word"].span.tolist()
    for w, (start, end) in enumerate(spans):
        middle = tokens[start:end, 0].mean()
        assert abs(layout.pos["word"][w, 0] - middle) <= MAX_SHIFT + 1e-9


def test_crowded_rows_spread_then_take_more_lines():
    from torch_geometric.data import HeteroData

    data = HeteroData()
    data["token"].num_nodes = 3
    data["sememe"].num_nodes = 12  # all on the middle token: too many for one line
    data["sememe", "of", "token"].edge_index = torch.stack([torch.arange(12), torch.ones(12, dtype=torch.long)])
    pos = layered_layout(data).pos["sememe"]
    assert len(np.unique(pos[:, 1])) > 1  # more than one line
    assert abs(pos[:, 0].mean() - layered_layout(data).pos["token"][1, 0]) < 1.0  # centred on the token
    data["sememe"].num_nodes = 2
    data["sememe", "of", "token"].edge_index = torch.tensor([[0, 1], [1, 1]])
    pos = layered_layout(data).pos["sememe"]
    assert len(np.unique(pos[:, 1])) == 1  # two fit side by side


def test_edge_curves_skip_self_loops_and_end_on_boxes(lattice):
    layout = layered_layout(lattice)
    curves = edge_curves(lattice, layout)
    reach = curves[("word", "reach_fwd", "word")]
    assert reach.pairs.tolist() == [[0, 3]]
    contains = curves[("word", "contains", "token")]

    def on_border(point, centre, width):
        dx, dy = abs(point[0] - centre[0]), abs(point[1] - centre[1])
        bottom_or_top = dy == pytest.approx(HALF_HEIGHT) and dx <= width / 2 + 1e-6
        side = dx == pytest.approx(width / 2) and dy <= HALF_HEIGHT + 1e-6
        return bottom_or_top or side

    for (w, t), (start, _, end) in zip(contains.pairs, contains.points, strict=True):
        # the curve leaves the word's box at its border and ends on the token's box border
        assert on_border(start, layout.pos["word"][w], layout.width["word"][w])
        assert on_border(end, layout.pos["token"][t], layout.width["token"][t])
        assert start[1] > end[1]  # words are above tokens


def test_visibility_matrix(tree, tmp_path):
    pairs = torch.tensor([[0, 0, 3, 5], [0, 3, 5, 3]])
    matrix = dense_visibility(pairs, 14)
    assert matrix.shape == (14, 14) and matrix.sum() == 4 and matrix[3, 5] and not matrix[5, 0]
    with pytest.raises(ValueError, match=r"\[2, E\]"):
        dense_visibility(torch.zeros(3, 4, dtype=torch.long), 14)
    with pytest.raises(ValueError, match="has 14 tokens"):
        dense_visibility(torch.tensor([[0], [14]]), 14)
    path = draw_visibility(tree, pairs, tmp_path / "vis.png", title="visible", dpi=40)
    assert _pixels(path).shape[0] > 100
    beside = draw_graph(tree, tmp_path / "both.png", visible=pairs, dpi=40)
    alone = draw_graph(tree, tmp_path / "graph.png", dpi=40)
    assert _pixels(beside).shape[1] > _pixels(alone).shape[1] + 100  # the heat map sits beside it


def test_chinese_labels_are_drawn_with_a_cjk_font(tree, tmp_path, cjk_font):
    family = fonts.cjk_font()
    assert family == cjk_font
    fig = graph_figure(tree, title="中文标题")
    label = next(t for t in fig.axes[0].texts if t.get_text() == "北京")
    assert label.get_fontfamily()[0] == family
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig.savefig(tmp_path / "zh.png", dpi=40)
    missing = [str(w.message) for w in caught if "missing from font" in str(w.message)]
    assert missing == []


def test_default_font_would_miss_chinese_glyphs(tmp_path):
    """The check above can fail: without the CJK family matplotlib warns about missing glyphs."""
    from matplotlib.figure import Figure

    fig = Figure()
    fig.text(0.5, 0.5, "北京", fontfamily=[fonts.LATIN_FAMILY])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig.savefig(tmp_path / "boxes.png", dpi=30)
    assert any("missing from font" in str(w.message) for w in caught)


def test_no_cjk_font_warns_with_the_debian_package(monkeypatch):
    monkeypatch.setattr(fonts, "find_cjk_font", lambda *a, **k: None)
    fonts.cjk_font.cache_clear()
    try:
        with pytest.warns(fonts.CJKFontWarning, match="fonts-wqy-microhei"):
            assert fonts.cjk_font() is None
        assert fonts.font_families() == [fonts.LATIN_FAMILY]
    finally:
        fonts.cjk_font.cache_clear()


def test_font_override_by_file_or_family(monkeypatch, cjk_font):
    family = cjk_font
    from matplotlib import font_manager

    path = next(e.fname for e in font_manager.fontManager.ttflist if e.name == family)
    monkeypatch.setenv(fonts.ENV_VAR, path)
    assert fonts.find_cjk_font() in {e.name for e in font_manager.fontManager.ttflist if e.fname == path}
    monkeypatch.setenv(fonts.ENV_VAR, family)
    assert fonts.find_cjk_font() == family
    monkeypatch.setenv(fonts.ENV_VAR, "No Such Font Family")
    with pytest.raises(ValueError, match="neither a font file nor a font family"):
        fonts.find_cjk_font()
