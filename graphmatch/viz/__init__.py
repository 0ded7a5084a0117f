"""Pictures of input graphs: PNG (matplotlib) and standalone interactive HTML (inline SVG + JS).

Both draw any :class:`~torch_geometric.data.HeteroData` from :mod:`graphmatch.graphs` with the
same layered layout (:mod:`graphmatch.viz.layout`), one colour per node type, one colour and
line style per edge type and a legend; Chinese labels use an installed CJK font
(:mod:`graphmatch.viz.fonts`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from torch import Tensor
from torch_geometric.data import HeteroData

from graphmatch.viz.fonts import cjk_font, font_properties
from graphmatch.viz.graph_html import html_document, write_html
from graphmatch.viz.graph_png import draw_graph, draw_visibility, graph_figure
from graphmatch.viz.layout import EdgeType, layered_layout

PNG_SUFFIXES = (".png",)
HTML_SUFFIXES = (".html", ".htm")


def save_picture(
    data: HeteroData,
    path: str | os.PathLike,
    title: str | None = None,
    visible: Tensor | None = None,
    edge_types: Sequence[EdgeType] | None = None,
    hidden_edge_types: Sequence[EdgeType] = (),
) -> Path:
    """Draw ``data`` to ``path``, a PNG (:func:`draw_graph`) or an HTML page (:func:`write_html`)
    chosen by the file's suffix. ``visible`` (a heat map) applies to both, ``edge_types`` to PNG
    pictures, ``hidden_edge_types`` to HTML ones (where every edge type can be shown from the legend)."""
    suffix = Path(path).suffix.lower()
    if suffix in PNG_SUFFIXES:
        return draw_graph(data, path, title=title, visible=visible, edge_types=edge_types)
    if suffix in HTML_SUFFIXES:
        return write_html(data, path, title=title, hidden_edge_types=hidden_edge_types, visible=visible)
    raise ValueError(f"cannot tell the picture format of {str(path)!r}: name it .png or .html")


__all__ = [
    "cjk_font",
    "draw_graph",
    "draw_visibility",
    "font_properties",
    "graph_figure",
    "html_document",
    "layered_layout",
    "save_picture",
    "write_html",
]
