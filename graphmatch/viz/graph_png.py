"""PNG pictures of input graphs: any :class:`~torch_geometric.data.HeteroData` built by
:mod:`graphmatch.graphs`, drawn with one colour per node type, one colour/line style per edge type,
a legend of both, and Chinese labels in a CJK font.

Nodes are placed by :func:`graphmatch.viz.layout.layered_layout` (tokens on a line in sequence
order, the other node types on rows above). K-BERT's injected tokens (``data["token"].branch``)
are drawn pale with a dashed border and their soft positions (``data["token"].pos``) are written
under the line. A visibility matrix (``(token, sees, token)`` pairs, e.g. from
:func:`graphmatch.graphs.kbert.visible_edge_index`) can be drawn as a heat map beside the graph
or on its own with :func:`draw_visibility`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from matplotlib.colors import ListedColormap, to_rgb
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, Patch
from matplotlib.path import Path as MplPath
from torch import Tensor
from torch_geometric.data import HeteroData

from graphmatch.viz.fonts import font_families
from graphmatch.viz.layout import (
    BRANCH_COLOR,
    EdgeType,
    Layout,
    branch_mask,
    dense_visibility,
    edge_curves,
    edge_name,
    edge_style,
    layered_layout,
    node_color,
    node_labels,
    shorten,
    text_width,
)

FONT_SIZE = 10.0  #: label size in points; 1 em of the layout is this many points
TICK_SHARE = 0.75  #: a visible-matrix tick label's size, as a share of its cell
LEGIBLE_CELL_PT = 6.5  #: the smallest cell of a visible matrix beside a graph (ticks >= 10 px at 150 dpi)
MAX_WIDTH_IN = 48.0  #: wider graphs are drawn with a smaller font
_MIN_WIDTH_IN = 6.0
_LEGEND_FONT = 0.85 * FONT_SIZE
_LEGEND_ROW_IN = 0.2  #: one legend row (font plus label spacing), inches
_LEGEND_HANDLE_IN = 0.9  #: handle, its padding and the column spacing, inches
_MATRIX_MARGIN_IN = 1.0  #: room for the heat map's token labels and caption, inches


def _darker(color: str, factor: float = 0.6) -> tuple[float, float, float]:
    r, g, b = to_rgb(color)
    return (r * factor, g * factor, b * factor)


def _draw_edges(
    ax, data: HeteroData, layout: Layout, font_size: float, selected: Sequence[EdgeType] | None
) -> list[tuple[Line2D, str]]:
    styles = edge_style(data)
    handles = []
    for et, curves in edge_curves(data, layout, selected).items():
        color, dash = styles[et]
        for start, control, end in curves.points:
            ax.add_patch(
                FancyArrowPatch(
                    path=MplPath([start, control, end], [MplPath.MOVETO, MplPath.CURVE3, MplPath.CURVE3]),
                    arrowstyle="-|>",
                    mutation_scale=0.8 * font_size,
                    color=color,
                    linestyle=dash,
                    linewidth=0.9,
                    alpha=0.85,
                    zorder=1,
                )
            )
        handles.append((Line2D([], [], color=color, linestyle=dash, linewidth=1.4), edge_name(et)))
    return handles


def _draw_nodes(ax, data: HeteroData, layout: Layout, font_size: float) -> list[tuple]:
    families = font_families()
    handles = []
    branch = branch_mask(data)
    for nt, pos in layout.pos.items():
        fill = node_color(nt, data)
        for i, ((x, y), label) in enumerate(zip(pos, layout.labels[nt], strict=True)):
            is_branch = nt == "token" and branch is not None and bool(branch[i])
            ax.text(
                x,
                y,
                label,
                ha="center",
                va="center",
                fontsize=font_size,
                fontfamily=families,
                zorder=3,
                bbox={
                    "boxstyle": "round,pad=0.3",
                    "facecolor": BRANCH_COLOR if is_branch else fill,
                    "edgecolor": _darker(fill),
                    "linestyle": "--" if is_branch else "-",
                    "linewidth": 0.8,
                },
            )
        handles.append((Patch(facecolor=fill, edgecolor=_darker(fill)), f"{nt} ({len(pos)})"))
        if nt == "token" and branch is not None and branch.any():
            handles.append(
                (
                    Patch(facecolor=BRANCH_COLOR, edgecolor=_darker(fill), linestyle="--"),
                    f"token (branch, {int(branch.sum())})",
                )
            )
    return handles


def _draw_positions(ax, data: HeteroData, layout: Layout, font_size: float, x_left: float) -> bool:
    """Soft positions under the token line; returns whether any were drawn."""
    if "token" not in layout.pos or "pos" not in data["token"]:
        return False
    pos = data["token"].pos.detach().cpu().numpy()
    xy = layout.pos["token"]
    y = layout.row_y["token"] - 1.25
    for (x, _), p in zip(xy, pos, strict=True):
        ax.text(x, y, str(int(p)), ha="center", va="center", fontsize=0.7 * font_size, color="#666666")
    ax.text(x_left, y, "pos", ha="right", va="center", fontsize=0.7 * font_size, color="#666666", style="italic")
    return True


def matrix_side(num_tokens: int) -> float:
    """Side of the visible-matrix heat map in inches: about 0.16 in per token, within 3-14 in."""
    return min(max(0.16 * num_tokens + 0.5, 3.0), 14.0)


def _plot_visibility(ax, data: HeteroData, visible: Tensor, side_in: float) -> None:
    labels = [shorten(t, 3.0) for t in node_labels(data, "token")]
    n = len(labels)
    matrix = dense_visibility(visible, n)
    cmap = ListedColormap(["#f4f4f4", "#2b6ca3"])
    ax.imshow(matrix, cmap=cmap, vmin=0, vmax=1, interpolation="nearest")
    cell_pt = side_in * 72 / max(n, 1)
    ax.xaxis.tick_top()
    branch = branch_mask(data)
    if cell_pt < 5.0:  # too small for labels: token indices every 10
        ticks = list(range(0, n, 10))
        ax.set_xticks(ticks)
        ax.set_yticks(ticks)
        ax.tick_params(labelsize=0.7 * FONT_SIZE, length=2, pad=1)
        branch = None
    else:
        tick_size = min(0.8 * FONT_SIZE, TICK_SHARE * cell_pt)
        ax.set_xticks(range(n))
        ax.set_yticks(range(n))
        # column labels that would run into their neighbour (English word pieces) stand upright; a
        # wide first label alone ([CLS] before Chinese characters) leans into the empty corner instead
        half = np.array([text_width(t) for t in labels]) * tick_size / 2
        upright = bool((half[1:-1] + half[2:] > 0.95 * cell_pt).any())
        ax.set_xticklabels(labels, fontsize=tick_size, fontfamily=font_families(),
                           rotation=90 if upright else 0, va="bottom" if upright else "baseline")
        if not upright and n > 1 and half[0] + half[1] > 0.95 * cell_pt:
            ax.get_xticklabels()[0].set_horizontalalignment("right")
        ax.set_yticklabels(labels, fontsize=tick_size, fontfamily=font_families())
        ax.tick_params(length=0, pad=1)
    if branch is not None:
        for tick_labels in (ax.get_xticklabels(), ax.get_yticklabels()):
            for text, is_branch in zip(tick_labels, branch, strict=True):
                if is_branch:
                    text.set_color("#2a8a2a")
    if cell_pt >= 4.0:  # cell borders
        ax.set_xticks(np.arange(-0.5, n, 1), minor=True)
        ax.set_yticks(np.arange(-0.5, n, 1), minor=True)
        ax.grid(which="minor", color="white", linewidth=0.4)
        ax.tick_params(which="minor", length=0)
    caption = "visible matrix: row token sees column token (blue)"
    if branch is not None and branch.any():
        caption += "\nbranch tokens in green"
    ax.set_xlabel(caption, fontsize=0.8 * FONT_SIZE)


def graph_figure(
    data: HeteroData,
    title: str | None = None,
    visible: Tensor | None = None,
    edge_types: Sequence[EdgeType] | None = None,
    font_size: float = FONT_SIZE,
) -> Figure:
    """A matplotlib :class:`~matplotlib.figure.Figure` of ``data`` (see :func:`draw_graph`)."""
    layout = layered_layout(data)
    xmin, xmax, ymin, ymax = layout.bounds()
    has_pos = "token" in layout.pos and "pos" in data["token"]
    xmin -= 2.5 if has_pos else 1.0
    xmax += 1.0
    ymin -= 2.0 if has_pos else 0.8
    ymax += 0.8
    em_in = font_size / 72
    if (xmax - xmin) * em_in > MAX_WIDTH_IN:
        font_size *= MAX_WIDTH_IN / ((xmax - xmin) * em_in)
        em_in = font_size / 72
    graph_w, graph_h = (xmax - xmin) * em_in, (ymax - ymin) * em_in

    drawn = edge_types if edge_types is not None else list(edge_style(data))
    legend_names = [f"{nt} (000)" for nt in layout.pos] + [edge_name(tuple(et)) for et in drawn]
    if branch_mask(data) is not None:
        legend_names.append("token (branch, 000)")
    n_legend = len(legend_names)
    col_in = max(text_width(n) for n in legend_names) * _LEGEND_FONT / 72 + _LEGEND_HANDLE_IN
    width = max(graph_w, _MIN_WIDTH_IN)
    ncol = max(1, min(n_legend, int(width // col_in)))
    legend_h = _LEGEND_ROW_IN * math.ceil(n_legend / ncol) + 0.25
    title_h = 0.5 if title else 0.15
    block_h = title_h + graph_h + legend_h  # title, graph and legend, stacked
    # the heat map sits beside the graph, about as tall as it, and large enough for legible tick
    # labels (the standalone picture is larger)
    n_tokens = int(data["token"].num_nodes)
    side = (min(max(block_h, 3.0, n_tokens * LEGIBLE_CELL_PT / 72), matrix_side(n_tokens))
            if visible is not None else 0.0)
    total_w = width + (side + _MATRIX_MARGIN_IN if side else 0.0)
    height = max(block_h, title_h + side + _MATRIX_MARGIN_IN if side else 0.0)
    centre = width / 2

    fig = Figure(figsize=(total_w, height))
    graph_bottom = height - title_h - graph_h
    ax = fig.add_axes(((centre - graph_w / 2) / total_w, graph_bottom / height, graph_w / total_w, graph_h / height))
    ax.set_xlim(xmin, xmax)
    ax.set_ylim(ymin, ymax)
    ax.axis("off")
    edge_handles = _draw_edges(ax, data, layout, font_size, edge_types)
    node_handles = _draw_nodes(ax, data, layout, font_size)
    _draw_positions(ax, data, layout, font_size, x_left=xmin + 2.2)
    handles = node_handles + edge_handles
    fig.legend(
        [h for h, _ in handles],
        [name for _, name in handles],
        loc="upper center",
        bbox_to_anchor=(centre / total_w, graph_bottom / height),
        ncol=ncol,
        frameon=False,
        prop={"family": font_families(), "size": _LEGEND_FONT},
    )
    if title:
        fig.suptitle(
            title,
            x=centre / total_w,
            y=1 - 0.12 / height,
            va="top",
            fontsize=1.2 * FONT_SIZE,
            fontfamily=font_families(),
        )
    if visible is not None:
        left, bottom = width + 0.6, height - title_h - 0.45 - side
        ax_vis = fig.add_axes((left / total_w, bottom / height, side / total_w, side / height))
        _plot_visibility(ax_vis, data, visible, side)
    return fig


def draw_graph(
    data: HeteroData,
    path: str | os.PathLike,
    title: str | None = None,
    visible: Tensor | None = None,
    edge_types: Sequence[EdgeType] | None = None,
    dpi: int = 150,
) -> Path:
    """Draw ``data`` to a PNG file.

    Args:
        data: a graph from :mod:`graphmatch.graphs` (labels come from ``data[t].text`` when the
            builder was made with ``keep_text=True``, else ``type:i``).
        path: the ``.png`` file to write (folders are created).
        title: a line above the picture.
        visible: optional ``[2, E]`` ``(token, sees, token)`` pairs drawn as a heat map beside the
            graph (K-BERT's visible matrix).
        edge_types: the edge types to draw (default all; e.g. leave out LET's reachability
            closures, which would cover the picture).
        dpi: pixels per inch; the figure's size in inches follows from the graph.

    Returns:
        The path written.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig = graph_figure(data, title=title, visible=visible, edge_types=edge_types)
    fig.savefig(path, dpi=dpi, facecolor="white")
    return path


def draw_visibility(
    data: HeteroData,
    visible: Tensor,
    path: str | os.PathLike,
    title: str | None = None,
    dpi: int = 150,
) -> Path:
    """Draw the ``(token, sees, token)`` pairs ``visible`` ``[2, E]`` of ``data`` as an ``L x L``
    heat map (row sees column) to a PNG file; returns the path."""
    side = matrix_side(int(data["token"].num_nodes))
    width, height = side + _MATRIX_MARGIN_IN, side + _MATRIX_MARGIN_IN + (0.4 if title else 0.0)
    fig = Figure(figsize=(width, height))
    ax = fig.add_axes((0.7 / width, 0.45 / height, side / width, side / height))
    _plot_visibility(ax, data, visible, side)
    if title:
        fig.suptitle(title, y=1 - 0.1 / height, va="top", fontsize=1.2 * FONT_SIZE, fontfamily=font_families())
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi, facecolor="white")
    return path
