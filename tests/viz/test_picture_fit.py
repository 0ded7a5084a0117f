"""Pictures a person can read: no two node boxes overlap (in the layout and as drawn), K-BERT's
values read ``predicate → object``, the visible matrix's ticks are at least 10 px, and the HTML
page is as tall as its drawing and carries the matrix."""

from __future__ import annotations

import argparse
import itertools
import re

import numpy as np
import pytest
import torch
from torch_geometric.data import HeteroData

from graphmatch.cli.show import build_graph
from graphmatch.viz.graph_html import html_document
from graphmatch.viz.graph_png import graph_figure
from graphmatch.viz.layout import HALF_HEIGHT, layered_layout, node_labels, predicate_object

DPI = 150  # draw_graph's default


def _intersecting(rects: np.ndarray) -> list[tuple[int, int]]:
    """Pairs of ``[x0, y0, x1, y1]`` rectangles whose insides meet."""
    return [(i, j) for i, j in itertools.combinations(range(len(rects)), 2)
            if min(rects[i, 2], rects[j, 2]) > max(rects[i, 0], rects[j, 0])
            and min(rects[i, 3], rects[j, 3]) > max(rects[i, 1], rects[j, 1])]


def _layout_boxes(data: HeteroData) -> np.ndarray:
    layout = layered_layout(data)
    return np.concatenate([np.stack([p[:, 0] - w / 2, p[:, 1] - HALF_HEIGHT, p[:, 0] + w / 2, p[:, 1] + HALF_HEIGHT],
                                    axis=1) for p, w in zip(layout.pos.values(), layout.width.values(), strict=True)])


def _drawn_boxes(data: HeteroData) -> np.ndarray:
    """The node boxes as matplotlib draws them, in pixels."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = graph_figure(data)
    fig.set_dpi(DPI)
    renderer = FigureCanvasAgg(fig).get_renderer()
    boxes = []
    for text in fig.axes[0].texts:
        patch = text.get_bbox_patch()
        if patch is not None:
            text.update_bbox_position_size(renderer)
            extent = patch.get_window_extent(renderer)
            boxes.append([extent.x0, extent.y0, extent.x1, extent.y1])
    return np.array(boxes)


def _crowded() -> HeteroData:
    """Senses of two neighbouring words, each with many sememes: rows that need several lines."""
    data = HeteroData()
    data["token"].num_nodes, data["token"].text = 4, list("长江大桥")
    data["word"].num_nodes, data["word"].text = 2, ["长江", "大桥"]
    data["word", "contains", "token"].edge_index = torch.tensor([[0, 0, 1, 1], [0, 1, 2, 3]])
    data["sense"].num_nodes = 6
    data["sense"].text = ["河流|水域|专|中国", "功能词|进展", "桥梁", "建筑物|桥", "地方|市", "处于"]
    data["sense", "of", "word"].edge_index = torch.tensor([[0, 1, 2, 3, 4, 5], [0, 0, 0, 1, 1, 1]])
    data["sememe"].num_nodes = 14
    data["sememe"].text = ["河流", "水域", "专", "中国", "功能词", "进展", "桥梁", "建筑物", "桥", "地方", "市",
                           "处于", "存在", "活着"]
    owner = [0, 0, 0, 0, 1, 1, 2, 3, 3, 4, 4, 5, 5, 5]
    data["sememe", "of", "sense"].edge_index = torch.tensor([list(range(14)), owner])
    return data


def _let(shared_data) -> HeteroData:
    args = argparse.Namespace(kind="let", text="南京市长江大桥", text_b="长江大桥在南京", kg=None, max_length=None,
                              segmenters="jieba", no_senses=False, vocab=None, data_dir=str(shared_data), select=None,
                              pretrained=None, closures=False)
    data, _ = build_graph(args)
    return data


@pytest.mark.parametrize("which", ["crowded", "tree", "let"])
def test_no_two_node_boxes_intersect(which, request) -> None:
    """LET's sense and sememe rows take several lines; no box meets another, neither in the
    layout (centre ± half the width, ± HALF_HEIGHT) nor as matplotlib draws it."""
    data = {"crowded": _crowded, "tree": lambda: request.getfixturevalue("tree")}.get(
        which, lambda: _let(request.getfixturevalue("shared_data")))()
    layout = layered_layout(data)
    assert which == "tree" or len(np.unique(layout.pos["sememe"][:, 1])) > 1  # the case that overlapped
    assert _intersecting(_layout_boxes(data)) == []
    drawn = _drawn_boxes(data)
    assert len(drawn) == sum(len(p) for p in layout.pos.values()) and _intersecting(drawn) == []


def test_values_read_predicate_then_object(tree) -> None:
    assert predicate_object("义原排泄", "排泄") == "义原 → 排泄"
    assert predicate_object("is a frozen dessert", "frozen dessert") == "is a → frozen dessert"
    assert predicate_object("首都", "首都") == "首都" and predicate_object("首都", "") == "首都"
    data = tree
    data["entity"].text, data["entity"].object = ["义原首都", "义原城市", "水果"], ["首都", "城市", "水果"]
    assert node_labels(data, "entity") == ["义原 → 首都", "义原 → 城市", "水果"]


def test_kbert_values_keep_their_object(shared_data) -> None:
    args = argparse.Namespace(kind="kbert", text="洗手间很干净，离火车站很近", text_b=None, kg="hownet",
                              max_length=None, segmenters="jieba", no_senses=False, vocab=None,
                              data_dir=str(shared_data), select=None, pretrained=None, pair_encoding="joint",
                              tokenization=None)
    data, _ = build_graph(args)
    assert "义原 → 排泄" in node_labels(data, "entity")


def test_matrix_ticks_are_legible(tree) -> None:
    from graphmatch.graphs.kbert import visible_edge_index

    for n_extra in (0, 16):  # the tree, and one of 30 tokens as the README's
        data = tree.clone() if n_extra == 0 else _longer(tree, n_extra)
        fig = graph_figure(data, visible=visible_edge_index(data))
        sizes = [t.get_fontsize() * DPI / 72 for t in fig.axes[1].get_xticklabels() + fig.axes[1].get_yticklabels()]
        assert sizes and min(sizes) >= 10.0


def _longer(data: HeteroData, extra: int) -> HeteroData:
    """``data`` with ``extra`` more trunk tokens at the end."""
    data = data.clone()
    n = int(data["token"].num_nodes)
    data["token"].num_nodes = n + extra
    data["token"].text = list(data["token"].text) + ["很"] * extra
    data["token"].input_ids = torch.arange(100, 100 + n + extra)
    data["token"].pos = torch.cat([data["token"].pos, data["token"].pos.max() + 1 + torch.arange(extra)])
    data["token"].branch = torch.cat([data["token"].branch, torch.zeros(extra, dtype=torch.bool)])
    return data


def test_html_is_as_tall_as_its_drawing_and_has_the_matrix(tree) -> None:
    from graphmatch.graphs.kbert import visible_edge_index

    page = html_document(tree, visible=visible_edge_index(tree))
    assert "#graph { width: 100%; height: auto;" in page  # not the whole window high
    assert '<div id="matrix">' in page and "visible matrix: row token sees column token" in page
    matrix = page[page.index('<div id="matrix">'):]
    n = int(tree["token"].num_nodes)
    assert len(re.findall(r"<text ", matrix)) == 2 * n  # each token along the top and the left
    seen = visible_edge_index(tree).size(1)  # every seen cell covered once by its row's runs
    cells = sum(round(float(w) / 14.0) for w in re.findall(r'<rect x="[\d.]+" y="[\d.]+" width="([\d.]+)" '
                                                            r'height="14.0"/>', matrix))
    assert cells == seen
    assert '<div id="matrix">' not in html_document(tree)
