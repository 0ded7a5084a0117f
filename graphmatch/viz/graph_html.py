"""Standalone interactive HTML pictures of input graphs.

:func:`write_html` writes one file with an inline SVG drawing (the same layered layout, colours
and edge styles as the PNG pictures) and a small inline script: hovering a node shows its type,
index, label and node-level attributes; clicking a node highlights it, its neighbours and its
edges (click the background to clear); clicking an edge type in the legend shows or hides it;
the mouse wheel zooms and dragging pans. Nothing is fetched from the network: no CDN, no fonts,
no images, so the file works offline and can be attached to a report.
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from torch import Tensor
from torch_geometric.data import HeteroData

from graphmatch.viz.layout import (
    BRANCH_COLOR,
    HALF_HEIGHT,
    EdgeType,
    branch_mask,
    check_edge_types,
    dense_visibility,
    edge_curves,
    edge_name,
    edge_style,
    layered_layout,
    node_color,
    node_labels,
    text_width,
)

PX_PER_EM = 16.0  #: SVG pixels per layout em
MARGIN_EM = 1.5
HTML_MAX_LABEL_EM = 24.0  #: the page zooms, so labels may run longer than in a PNG before they are cut
POS_BELOW_EM = 1.25  #: the soft positions' line, this far under the token line
#: fonts the browser tries for labels (the reader's own; nothing is downloaded)
FONT_STACK = (
    '"WenQuanYi Micro Hei", "Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC", '
    '"Microsoft YaHei", "PingFang SC", "Hiragino Sans GB", "SimHei", sans-serif'
)
_SKIP_ATTRS = {"text", "num_nodes", "batch", "ptr"}
_MAX_VALUES = 8  #: longer per-node vectors are summarised by their shape
_DASHARRAY = {"solid": "", "dashed": "6 3", "dotted": "2 2", "dashdot": "6 2 2 2"}

_CSS = """
body { font-family: %(font)s; margin: 0; color: #222; background: #fff; }
header { padding: 8px 16px; }
h1 { font-size: 18px; margin: 0 0 4px 0; font-weight: 600; }
p.hint { font-size: 12px; color: #666; margin: 0; }
#legend { display: flex; flex-wrap: wrap; gap: 4px 16px; padding: 4px 16px 8px; font-size: 13px; }
#legend .item { display: inline-flex; align-items: center; gap: 6px; user-select: none; }
#legend .edge-item { cursor: pointer; }
#legend .edge-item.off { opacity: 0.35; text-decoration: line-through; }
#legend .swatch { width: 16px; height: 12px; border: 1px solid #555; border-radius: 3px; display: inline-block; }
#legend svg { width: 28px; height: 10px; }
#graph { width: 100%%; height: auto; max-height: calc(100vh - 120px); border-top: 1px solid #ddd;
         cursor: grab; display: block; }
#matrix { padding: 8px 16px; }
#matrix h2 { font-size: 14px; font-weight: 600; margin: 4px 0; }
#matrix svg { max-width: 100%%; height: auto; }
#matrix text { font-family: %(font)s; font-size: 11px; }
#graph text { font-family: %(font)s; font-size: 13px; pointer-events: none; }
#graph .pos text { font-size: 10px; fill: #666; }
.node rect { stroke-width: 1; }
.node { cursor: pointer; }
.edge { fill: none; stroke-width: 1.2; opacity: 0.85; }
.dim { opacity: 0.12; }
.hidden { display: none; }
.node.picked rect { stroke: #000; stroke-width: 2.5; }
#tip { position: fixed; pointer-events: none; background: rgba(255,255,255,0.96); border: 1px solid #888;
       border-radius: 4px; padding: 6px 8px; font-size: 12px; display: none; max-width: 420px;
       box-shadow: 0 2px 6px rgba(0,0,0,0.2); white-space: pre-wrap; }
"""

_SCRIPT = """
(function () {
  const NODES = JSON.parse(document.getElementById("graph-nodes").textContent);
  const EDGES = JSON.parse(document.getElementById("graph-edges").textContent);
  const svg = document.getElementById("graph");
  const tip = document.getElementById("tip");
  const hiddenTypes = new Set(EDGES.hidden);
  function key(el) { return el.getAttribute("data-key"); }
  // hover: attributes of the node
  svg.querySelectorAll(".node").forEach(function (g) {
    g.addEventListener("mousemove", function (ev) {
      const n = NODES[key(g)];
      let lines = [n.type + " " + n.index + ": " + n.label];
      Object.keys(n.attrs).forEach(function (k) { lines.push(k + " = " + n.attrs[k]); });
      tip.textContent = lines.join("\\n");
      tip.style.display = "block";
      tip.style.left = (ev.clientX + 14) + "px";
      tip.style.top = (ev.clientY + 14) + "px";
    });
    g.addEventListener("mouseleave", function () { tip.style.display = "none"; });
    g.addEventListener("click", function (ev) { ev.stopPropagation(); pick(key(g)); });
  });
  // click: highlight a node, its neighbours and its edges
  function pick(k) {
    const keep = new Set([k]);
    svg.querySelectorAll(".edge").forEach(function (e) {
      const on = !hiddenTypes.has(e.getAttribute("data-type")) &&
                 (e.getAttribute("data-src") === k || e.getAttribute("data-dst") === k);
      if (on) { keep.add(e.getAttribute("data-src")); keep.add(e.getAttribute("data-dst")); }
      e.classList.toggle("dim", !on);
    });
    svg.querySelectorAll(".node").forEach(function (g) {
      g.classList.toggle("dim", !keep.has(key(g)));
      g.classList.toggle("picked", key(g) === k);
    });
  }
  function clear() {
    svg.querySelectorAll(".dim, .picked").forEach(function (el) { el.classList.remove("dim", "picked"); });
  }
  // legend: show or hide an edge type
  document.querySelectorAll(".edge-item").forEach(function (item) {
    item.addEventListener("click", function () {
      const t = item.getAttribute("data-type");
      if (hiddenTypes.has(t)) { hiddenTypes.delete(t); } else { hiddenTypes.add(t); }
      item.classList.toggle("off", hiddenTypes.has(t));
      svg.querySelectorAll('.edge[data-type="' + t + '"]').forEach(function (e) {
        e.classList.toggle("hidden", hiddenTypes.has(t));
      });
    });
  });
  // zoom with the wheel, pan by dragging
  let vb = svg.getAttribute("viewBox").split(" ").map(Number);
  function setView() { svg.setAttribute("viewBox", vb.join(" ")); }
  svg.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    const r = svg.getBoundingClientRect();
    const f = ev.deltaY > 0 ? 1.15 : 1 / 1.15;
    const mx = vb[0] + (ev.clientX - r.left) / r.width * vb[2];
    const my = vb[1] + (ev.clientY - r.top) / r.height * vb[3];
    vb = [mx - (mx - vb[0]) * f, my - (my - vb[1]) * f, vb[2] * f, vb[3] * f];
    setView();
  }, { passive: false });
  let drag = null, moved = false;
  svg.addEventListener("mousedown", function (ev) { drag = [ev.clientX, ev.clientY]; moved = false; });
  window.addEventListener("mousemove", function (ev) {
    if (!drag) { return; }
    const r = svg.getBoundingClientRect();
    const s = Math.max(vb[2] / r.width, vb[3] / r.height);
    vb[0] -= (ev.clientX - drag[0]) * s; vb[1] -= (ev.clientY - drag[1]) * s;
    if (Math.abs(ev.clientX - drag[0]) + Math.abs(ev.clientY - drag[1]) > 0) { moved = true; }
    drag = [ev.clientX, ev.clientY];
    setView();
  });
  window.addEventListener("mouseup", function () { drag = null; });
  svg.addEventListener("click", function () { if (!moved) { clear(); } });
})();
"""


def _format_value(value: Any) -> str:
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            value = value.item()
        elif value.size <= _MAX_VALUES:
            return json.dumps(value.tolist())
        else:
            return f"{value.dtype} vector of shape {list(value.shape)}"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def node_attributes(data: HeteroData, node_type: str) -> list[dict[str, str]]:
    """Per node of ``node_type``: every node-level tensor attribute, formatted for a tooltip."""
    store = data[node_type]
    n = int(store.num_nodes or 0)
    rows: list[dict[str, str]] = [{} for _ in range(n)]
    for name in sorted(store.keys()):
        value = store[name]
        if name in _SKIP_ATTRS or not isinstance(value, Tensor) or value.dim() == 0 or value.size(0) != n:
            continue
        array = value.detach().cpu().numpy()
        for i in range(n):
            rows[i][name] = _format_value(array[i])
    return rows


def _svg_y(y: float, top: float) -> float:
    return (top - y) * PX_PER_EM


def _json_script(element_id: str, payload: Any) -> str:
    text = json.dumps(payload, ensure_ascii=False).replace("</", "<\\/")
    return f'<script type="application/json" id="{element_id}">{text}</script>'


MATRIX_CELL_PX = 14.0  #: side of one visible-matrix cell
_SEEN, _UNSEEN, _BRANCH_TEXT = "#2b6ca3", "#f4f4f4", "#2a8a2a"


def matrix_svg(data: HeteroData, visible: Tensor) -> str:
    """K-BERT's visible matrix as an SVG heat map (row token sees column token), each row's runs
    of seen cells one rectangle, token labels along the top and the left (branch tokens green)."""
    labels = node_labels(data, "token")
    n = len(labels)
    matrix = dense_visibility(visible, n)
    cell, margin = MATRIX_CELL_PX, 8 + MATRIX_CELL_PX * min(max(map(text_width, labels), default=1.0), 5.0)
    padded = np.pad(matrix.astype(np.int8), ((0, 0), (1, 1)))
    rows, starts = np.nonzero(np.diff(padded, axis=1) == 1)
    _, ends = np.nonzero(np.diff(padded, axis=1) == -1)  # same row-major order as the starts
    rects = [f'<rect x="{margin + a * cell:.1f}" y="{margin + r * cell:.1f}" width="{(b - a) * cell:.1f}" '
             f'height="{cell:.1f}"/>' for r, a, b in zip(rows.tolist(), starts.tolist(), ends.tolist(), strict=True)]
    branch = branch_mask(data)
    ticks = []
    for i, label in enumerate(labels):
        fill = f' fill="{_BRANCH_TEXT}"' if branch is not None and branch[i] else ""
        at = margin + (i + 0.5) * cell
        ticks.append(f'<text x="{margin - 4:.1f}" y="{at:.1f}" text-anchor="end" dominant-baseline="central"{fill}>'
                     f"{html.escape(label)}</text>")
        turn = " rotate(-90)" if text_width(label) > 1.0 else ""  # one character stands upright
        anchor = "start" if turn else "middle"
        ticks.append(f'<text transform="translate({at:.1f},{margin - 4:.1f}){turn}" text-anchor="{anchor}" '
                     f'dominant-baseline="{"central" if turn else "auto"}"{fill}>{html.escape(label)}</text>')
    side = margin + n * cell + 2
    return (f'<svg viewBox="0 0 {side:.1f} {side:.1f}" width="{side:.0f}" height="{side:.0f}">'
            f'<rect x="{margin:.1f}" y="{margin:.1f}" width="{n * cell:.1f}" height="{n * cell:.1f}" fill="{_UNSEEN}"/>'
            f'<g fill="{_SEEN}">{"".join(rects)}</g><g>{"".join(ticks)}</g></svg>')


def html_document(
    data: HeteroData,
    title: str | None = None,
    hidden_edge_types: Sequence[EdgeType] = (),
    visible: Tensor | None = None,
) -> str:
    """The standalone HTML page of ``data`` as a string (see :func:`write_html`): the graph as tall
    as its drawing, and K-BERT's visible matrix under it when ``visible`` is given."""
    layout = layered_layout(data, max_label_em=HTML_MAX_LABEL_EM)
    styles = edge_style(data)
    check_edge_types(data, hidden_edge_types, "hidden edge types")
    hidden = {tuple(et) for et in hidden_edge_types} & set(styles)
    xmin, xmax, ymin, ymax = layout.bounds()
    positions = "token" in layout.pos and "pos" in data["token"]
    if positions:  # room for the soft positions under the tokens and their "pos" caption
        xmin, ymin = xmin - 2.0, min(ymin, layout.row_y["token"] - POS_BELOW_EM - 0.5)
    left, top = xmin - MARGIN_EM, ymax + MARGIN_EM
    width = (xmax - xmin + 2 * MARGIN_EM) * PX_PER_EM
    height = (ymax - ymin + 2 * MARGIN_EM) * PX_PER_EM

    def px(point: np.ndarray) -> str:
        return f"{(point[0] - left) * PX_PER_EM:.1f},{_svg_y(point[1], top):.1f}"

    markers, edges_svg = [], []
    curves_of = edge_curves(data, layout)
    for k, (et, curves) in enumerate(curves_of.items()):
        color, dash = styles[et]
        name = edge_name(et)
        dasharray = _DASHARRAY[dash]
        markers.append(
            f'<marker id="arrow{k}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
            f'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{color}"/></marker>'
        )
        src_t, _, dst_t = et
        for (s, d), (start, control, end) in zip(curves.pairs, curves.points, strict=True):
            edges_svg.append(
                f'<path class="edge{" hidden" if et in hidden else ""}" data-type="{html.escape(name)}" '
                f'data-src="{src_t}:{s}" data-dst="{dst_t}:{d}" d="M{px(start)} Q{px(control)} {px(end)}" '
                f'fill="none" stroke="{color}"'
                + (f' stroke-dasharray="{dasharray}"' if dasharray else "")
                + f' marker-end="url(#arrow{k})"/>'
            )

    branch = branch_mask(data)
    nodes_svg, nodes_json = [], {}
    for nt, pos in layout.pos.items():
        fill = node_color(nt, data)
        full = node_labels(data, nt)
        attrs = node_attributes(data, nt)
        for i, ((x, y), label) in enumerate(zip(pos, layout.labels[nt], strict=True)):
            w = layout.width[nt][i] * PX_PER_EM
            h = 2 * HALF_HEIGHT * PX_PER_EM
            cx, cy = (x - left) * PX_PER_EM, _svg_y(y, top)
            is_branch = nt == "token" and branch is not None and bool(branch[i])
            nodes_svg.append(
                f'<g class="node" data-key="{nt}:{i}">'
                f'<rect x="{cx - w / 2:.1f}" y="{cy - h / 2:.1f}" width="{w:.1f}" height="{h:.1f}" rx="4" '
                f'fill="{BRANCH_COLOR if is_branch else fill}" stroke="#555"'
                + (' stroke-dasharray="4 2"' if is_branch else "")
                + f'/><text x="{cx:.1f}" y="{cy:.1f}" text-anchor="middle" dominant-baseline="central">'
                f"{html.escape(label)}</text></g>"
            )
            nodes_json[f"{nt}:{i}"] = {"type": nt, "index": i, "label": full[i], "attrs": attrs[i]}

    if positions:
        y = _svg_y(layout.row_y["token"] - POS_BELOW_EM, top)
        numbers = [f'<text x="{(x - left) * PX_PER_EM:.1f}" y="{y:.1f}">{int(p)}</text>'
                   for (x, _), p in zip(layout.pos["token"], data["token"].pos.tolist(), strict=True)]
        x0 = (layout.pos["token"][0, 0] - layout.width["token"][0] / 2 - left - 0.4) * PX_PER_EM
        nodes_svg.append(f'<g class="pos" text-anchor="middle" dominant-baseline="central">{"".join(numbers)}'
                         f'<text x="{x0:.1f}" y="{y:.1f}" text-anchor="end" font-style="italic">pos</text></g>')

    legend = [
        f'<span class="item"><span class="swatch" style="background:{node_color(nt, data)}"></span>'
        f"{html.escape(nt)} ({len(pos)})</span>"
        for nt, pos in layout.pos.items()
    ]
    if branch is not None and branch.any():
        legend.append(
            f'<span class="item"><span class="swatch" style="background:{BRANCH_COLOR};border-style:dashed">'
            f"</span>token (branch, {int(branch.sum())})</span>"
        )
    for et, (color, dash) in styles.items():
        dasharray = _DASHARRAY[dash]
        legend.append(
            f'<span class="item edge-item{" off" if et in hidden else ""}" data-type="{html.escape(edge_name(et))}" '
            f'title="click to show or hide"><svg viewBox="0 0 28 10"><line x1="0" y1="5" x2="28" y2="5" '
            f'stroke="{color}" stroke-width="2" stroke-dasharray="{dasharray}"/></svg>'
            f"{html.escape(edge_name(et))} ({len(curves_of[et].pairs)})</span>"
        )

    heading = html.escape(title or "graph")
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="zh">',
            "<head>",
            '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{heading}</title>",
            f"<style>{_CSS % {'font': FONT_STACK}}</style>",
            "</head>",
            "<body>",
            "<header>",
            f"<h1>{heading}</h1>",
            '<p class="hint">hover a node for its attributes, click it to highlight its neighbours, '
            "click an edge type to show or hide it; wheel zooms, drag pans</p>",
            "</header>",
            f'<div id="legend">{"".join(legend)}</div>',
            f'<svg id="graph" viewBox="0 0 {width:.1f} {height:.1f}" preserveAspectRatio="xMidYMin meet">',
            f"<defs>{''.join(markers)}</defs>",
            f'<g class="edges">{"".join(edges_svg)}</g>',
            f'<g class="nodes">{"".join(nodes_svg)}</g>',
            "</svg>",
            *([f'<div id="matrix"><h2>visible matrix: row token sees column token (blue)'
               f'{"; branch tokens in green" if branch is not None and branch.any() else ""}</h2>'
               f"{matrix_svg(data, visible)}</div>"] if visible is not None else []),
            '<div id="tip"></div>',
            _json_script("graph-nodes", nodes_json),
            _json_script("graph-edges", {"hidden": [edge_name(et) for et in hidden]}),
            f"<script>{_SCRIPT}</script>",
            "</body>",
            "</html>",
            "",
        ]
    )


def write_html(
    data: HeteroData,
    path: str | os.PathLike,
    title: str | None = None,
    hidden_edge_types: Sequence[EdgeType] = (),
    visible: Tensor | None = None,
) -> Path:
    """Write ``data`` as a standalone interactive HTML file.

    Args:
        data: a graph from :mod:`graphmatch.graphs` (labels from ``data[t].text`` when kept).
        path: the ``.html`` file to write (folders are created).
        title: page heading.
        hidden_edge_types: edge types drawn but hidden at first (the reader can show them from
            the legend), e.g. LET's dense reachability closures.
        visible: optional ``[2, E]`` ``(token, sees, token)`` pairs drawn as a heat map under the
            graph (K-BERT's visible matrix).

    Returns:
        The path written.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    page = html_document(data, title=title, hidden_edge_types=hidden_edge_types, visible=visible)
    path.write_text(page, encoding="utf-8")
    return path
