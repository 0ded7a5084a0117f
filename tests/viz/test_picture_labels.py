"""What the pictures write beside their nodes: whole English labels in HTML, column labels of the
visible matrix that do not run together, e1 and e2 named in relation pictures, and K-BERT's soft
positions under the HTML tree's tokens."""

from __future__ import annotations

import argparse
import re

import pytest
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from torch_geometric.data import HeteroData

from graphmatch.cli.show import build_graph
from graphmatch.viz.graph_html import html_document
from graphmatch.viz.graph_png import graph_figure


def english_tree() -> HeteroData:
    """[CLS] the company (is a institution) sold ice cream, as K-BERT builds it over word pieces."""
    text = ["[CLS]", "the", "company", "is", "a", "institution", "sold", "ice", "cream"]
    data = HeteroData()
    data["token"].input_ids = torch.arange(len(text))
    data["token"].pos = torch.tensor([0, 1, 2, 3, 4, 5, 3, 4, 5])
    data["token"].branch = torch.tensor([0, 0, 0, 1, 1, 1, 0, 0, 0], dtype=torch.bool)
    data["token"].num_nodes = len(text)
    data["token"].text = text
    data["word"].num_nodes = 1
    data["word"].text = ["company"]
    data["entity"].num_nodes = 2
    data["entity"].text = ["is a institution", "is a frozen dessert"]
    data["token", "in", "word"].edge_index = torch.tensor([[2], [0]])
    data["token", "in", "entity"].edge_index = torch.tensor([[3, 4, 5, 7, 8], [0, 0, 0, 1, 1]])
    data["entity", "on", "word"].edge_index = torch.tensor([[0, 1], [0, 0]])
    return data


def _node_texts(document: str) -> list[str]:
    return re.findall(r'<g class="node"[^>]*>.*?<text[^>]*>(.*?)</text></g>', document)


def test_html_keeps_english_entity_labels_whole(tmp_path):
    labels = _node_texts(html_document(english_tree()))
    assert "is a institution" in labels and "is a frozen dessert" in labels
    assert not any(label.endswith("…") for label in labels)


def test_html_tree_shows_the_soft_positions():
    data = english_tree()
    group = re.search(r'<g class="pos"[^>]*>(.*?)</g>', html_document(data)).group(1)
    numbers = re.findall(r"<text[^>]*>(.*?)</text>", group)
    assert numbers == [*map(str, data["token"].pos.tolist()), "pos"]


@pytest.mark.parametrize(("text", "upright"), [
    # twenty word pieces: cells of about 13 pt, narrower than ``the`` or ``comp…`` written flat
    (["[CLS]", "the", "company", "is", "a", "institution", "sold", "ice", "cream", "##s", "type", "food",
      "is", "a", "frozen", "dessert", "to", "the", "children", "."], True),
    # Chinese characters fit their cells and stay flat; only [CLS] is wider
    (["[CLS]", *"前台服务态度好义原举止洗手间很干净离火车站很近义原设施义原搬动很近"], False),
])
def test_matrix_column_labels_do_not_run_together(text, upright):
    data = HeteroData()
    data["token"].num_nodes = n = len(text)
    data["token"].text = text
    visible = torch.cartesian_prod(torch.arange(n), torch.arange(n)).t()
    fig = graph_figure(data, visible=visible)
    renderer = FigureCanvasAgg(fig).get_renderer()
    matrix = next(ax for ax in fig.axes if [t.get_text() for t in ax.get_xticklabels()][:1] == ["[CLS]"])
    boxes = [t.get_window_extent(renderer) for t in matrix.get_xticklabels()]
    assert all(a.x1 <= b.x0 + 0.5 for a, b in zip(boxes, boxes[1:], strict=False))
    assert {t.get_rotation() for t in matrix.get_xticklabels()} == {90.0 if upright else 0.0}


def test_relation_pictures_name_e1_and_e2():
    args = argparse.Namespace(text="The <e1>storm</e1> caused severe <e2>flooding</e2> in the valley.", text_b=None,
                              kind="relation", kg=None, max_length=None, tokenization=None)
    data, _ = build_graph(args)
    drawn = [t.get_text() for ax in graph_figure(data).axes for t in ax.texts]
    assert "e1 storm" in drawn and "e2 flooding" in drawn
    assert {"e1 storm", "e2 flooding"} <= set(_node_texts(html_document(data)))
