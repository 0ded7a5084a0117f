"""Where each node of an input graph goes in a picture, and how each node and edge type looks.

Shared by the PNG (:mod:`graphmatch.viz.graph_png`) and HTML (:mod:`graphmatch.viz.graph_html`)
pictures. The layout is layered: the ``token`` nodes lie on one line in sequence order (the
order of their node index, which is K-BERT's flattened order or the sentence's character order),
and every other node type gets a row above, in the order ``word``, ``entity``, ``sense``,
``sememe`` (other types after them). A node of an upper row wants to sit over the mean position
of its neighbours in the rows below; nodes that would overlap spread sideways as little as they
can (least squares), and a row that would spread too far takes a second or third line.
Coordinates are in *em* (the width of one Chinese character of the label
font), with ``y`` growing upwards.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from torch import Tensor
from torch_geometric.data import HeteroData

#: drawing order of node types, bottom row first; other types follow alphabetically
NODE_TYPE_ORDER: tuple[str, ...] = ("token", "word", "entity", "sense", "sememe")

#: fill colour of each node type (light tones of the Tableau 20 palette)
NODE_COLORS: dict[str, str] = {
    "token": "#9ecae9",
    "word": "#ffbf79",
    "entity": "#8cd17d",
    "sense": "#ff9d9a",
    "sememe": "#d4a6c8",
}
_EXTRA_NODE_COLORS = ("#f1ce63", "#86bcb6", "#d7b5a6", "#bab0ac", "#b6992d")
#: fill colour of K-BERT's injected (branch) tokens, drawn as ``token (branch)``
BRANCH_COLOR = "#e8f2fa"

#: edge colours (matplotlib's default cycle), then line styles when there are more edge types
_EDGE_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")
_EDGE_DASHES = ("solid", "dashed", "dotted", "dashdot")

EM_PER_CHAR_WIDE = 1.0  #: width of a CJK (East Asian wide) character, in em
EM_PER_CHAR_NARROW = 0.6  #: width of any other character, in em
BOX_PAD = 0.6  #: horizontal padding of a node box, in em (both sides together)
GAP = 0.5  #: smallest gap between two boxes on one line, in em
ROW_GAP = 3.0  #: vertical distance between two node-type rows, in em
SUBROW_GAP = 2.1  #: vertical distance between the lines of one row (a box's height and a gap), in em
MAX_SUBROWS = 3
MAX_SHIFT = 6.0  #: a row takes another line when a node would move further from its place, in em
MAX_LABEL_EM = 9.0  #: longer labels are cut with an ellipsis
MAX_SINGLE_LABEL_EM = 30.0  #: the same for a node type with a single node


def text_width(text: str) -> float:
    """Estimated width of ``text`` in em (wide characters 1 em, others 0.6 em)."""
    return sum(
        EM_PER_CHAR_WIDE if unicodedata.east_asian_width(ch) in ("W", "F") else EM_PER_CHAR_NARROW for ch in text
    )


def shorten(text: str, max_em: float = MAX_LABEL_EM) -> str:
    """``text`` cut to at most ``max_em`` em, with an ellipsis when cut."""
    if text_width(text) <= max_em:
        return text
    out = ""
    for ch in text:
        if text_width(out + ch) > max_em - EM_PER_CHAR_NARROW:
            break
        out += ch
    return out + "…"


def node_types(data: HeteroData) -> list[str]:
    """Node types with at least one node, in drawing order (bottom row first)."""
    present = [nt for nt in data.node_types if (data[nt].num_nodes or 0) > 0]
    known = [nt for nt in NODE_TYPE_ORDER if nt in present]
    return known + sorted(nt for nt in present if nt not in NODE_TYPE_ORDER)


def edge_types(data: HeteroData) -> list[tuple[str, str, str]]:
    """Edge types with at least one edge whose end node types are drawn."""
    present = set(node_types(data))
    return [
        et
        for et in data.edge_types
        if "edge_index" in data[et] and data[et].edge_index.numel() > 0 and et[0] in present and et[2] in present
    ]


def node_color(node_type: str, data: HeteroData | None = None) -> str:
    """Fill colour of ``node_type`` (stable for the five known types, cycled for others)."""
    if node_type in NODE_COLORS:
        return NODE_COLORS[node_type]
    others = sorted(nt for nt in (data.node_types if data is not None else []) if nt not in NODE_COLORS)
    index = others.index(node_type) if node_type in others else sum(map(ord, node_type))
    return _EXTRA_NODE_COLORS[index % len(_EXTRA_NODE_COLORS)]


def edge_style(data: HeteroData) -> dict[tuple[str, str, str], tuple[str, str]]:
    """``{edge type: (colour, line style)}`` for every drawn edge type of ``data``."""
    return {
        et: (_EDGE_COLORS[i % len(_EDGE_COLORS)], _EDGE_DASHES[(i // len(_EDGE_COLORS)) % len(_EDGE_DASHES)])
        for i, et in enumerate(edge_types(data))
    }


def check_edge_types(data: HeteroData, selected: Sequence[EdgeType], what: str = "edge types") -> None:
    """Raise a ValueError for edge types ``data`` does not declare; a declared type with no edges
    (a sentence without knowledge, a pair without senses) is fine: there is nothing to draw."""
    unknown = [tuple(et) for et in selected if tuple(et) not in data.edge_types]
    if unknown:
        raise ValueError(f"{what} {unknown} are not in the graph; it has {list(data.edge_types)}")


def edge_name(edge_type: tuple[str, str, str]) -> str:
    """``"token -in-> word"`` for ``("token", "in", "word")``."""
    src, rel, dst = edge_type
    return f"{src} -{rel}-> {dst}"


def predicate_object(value: str, obj: str) -> str:
    """A K-BERT value (predicate and object, glued for Chinese) as ``predicate → object``
    (``义原排泄`` → ``义原 → 排泄``); the value as it is when ``obj`` does not end it."""
    predicate = value[: len(value) - len(obj)].strip() if obj and value.endswith(obj) else ""
    return f"{predicate} → {obj}" if predicate else value


def node_labels(data: HeteroData, node_type: str) -> list[str]:
    """Labels of one node type: ``data[node_type].text`` when the builder kept it, else ``type:i``;
    a relation graph's two entities (``data["entity"].kind`` 0 and 1) read ``e1 …`` and ``e2 …``,
    and a K-BERT value with its ``object`` kept reads ``predicate → object``."""
    store = data[node_type]
    n = int(store.num_nodes or 0)
    text = store.get("text") if "text" in store else None
    if text is not None and not isinstance(text, Tensor):
        labels = [str(t) for t in text]
        if len(labels) != n:
            raise ValueError(f"data[{node_type!r}].text has {len(labels)} labels for {n} nodes")
    else:
        labels = [f"{node_type}:{i}" for i in range(n)]
    if node_type == "entity" and "kind" in store and isinstance(store.kind, Tensor) and store.kind.numel() == n:
        labels = [f"e{int(k) + 1} {label}" for k, label in zip(store.kind.tolist(), labels, strict=True)]
    objects = store.get("object") if "object" in store else None
    if isinstance(objects, list) and len(objects) == n:
        labels = [predicate_object(label, str(obj)) for label, obj in zip(labels, objects, strict=True)]
    return labels


def branch_mask(data: HeteroData) -> np.ndarray | None:
    """K-BERT's ``data["token"].branch`` as a numpy bool array, or ``None`` when absent."""
    if "token" not in data.node_types or "branch" not in data["token"]:
        return None
    return data["token"].branch.detach().cpu().numpy().astype(bool)


def dense_visibility(visible: Tensor, num_tokens: int) -> np.ndarray:
    """``[L, L]`` bool matrix from ``(token, sees, token)`` pairs ``[2, E]`` (row sees column)."""
    if visible.dim() != 2 or visible.size(0) != 2:
        raise ValueError(
            f"visible must be a [2, E] edge index of (token, sees, token) pairs, got {tuple(visible.shape)}"
        )
    index = visible.detach().cpu().numpy()
    if index.size and (index.min() < 0 or index.max() >= num_tokens):
        raise ValueError(f"visible refers to token {int(index.max())} but the graph has {num_tokens} tokens")
    matrix = np.zeros((num_tokens, num_tokens), dtype=bool)
    matrix[index[0], index[1]] = True
    return matrix


@dataclass
class Layout:
    """Positions (em, ``y`` up) and box widths (em) of every node, per node type."""

    pos: dict[str, np.ndarray]  #: node type → ``[N, 2]`` centres
    width: dict[str, np.ndarray]  #: node type → ``[N]`` box widths
    labels: dict[str, list[str]]  #: node type → shortened labels, as drawn
    row_y: dict[str, float]  #: node type → ``y`` of its first line

    def bounds(self) -> tuple[float, float, float, float]:
        """``(xmin, xmax, ymin, ymax)`` of all boxes, in em."""
        xs = [p[:, 0] - w / 2 for p, w in zip(self.pos.values(), self.width.values(), strict=True)]
        xe = [p[:, 0] + w / 2 for p, w in zip(self.pos.values(), self.width.values(), strict=True)]
        ys = [p[:, 1] for p in self.pos.values()]
        if not xs:
            return 0.0, 1.0, 0.0, 1.0
        return (
            float(min(x.min() for x in xs)),
            float(max(x.max() for x in xe)),
            float(min(y.min() for y in ys)) - 0.5,
            float(max(y.max() for y in ys)) + 0.5,
        )


def _sequence_positions(width: np.ndarray) -> np.ndarray:
    """Centres of boxes of the given widths laid left to right, ``GAP`` apart, starting at 0."""
    right = np.cumsum(width + GAP) - GAP
    return right - width / 2


def _desired_x(data: HeteroData, node_type: str, placed: dict[str, np.ndarray]) -> np.ndarray:
    """Mean ``x`` of each node's neighbours among the placed node types (NaN when it has none)."""
    n = int(data[node_type].num_nodes)
    total = np.zeros(n)
    count = np.zeros(n)
    for src, rel, dst in edge_types(data):
        edge_index = data[src, rel, dst].edge_index.detach().cpu().numpy()
        if src == dst:
            continue
        for here, far, mine, theirs in (
            (dst, src, edge_index[1], edge_index[0]),
            (src, dst, edge_index[0], edge_index[1]),
        ):
            if here == node_type and far in placed:
                np.add.at(total, mine, placed[far][theirs, 0])
                np.add.at(count, mine, 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def _spread(desired: np.ndarray, width: np.ndarray) -> np.ndarray:
    """Centres on one line, in the order of ``desired``, that do not overlap and move as little
    as possible (least squares): isotonic regression by pool-adjacent-violators on the desired
    positions minus each box's smallest offset from the first."""
    order = np.argsort(desired, kind="stable")
    w = width[order]
    offset = np.concatenate([[0.0], np.cumsum((w[:-1] + w[1:]) / 2 + GAP)])
    target = desired[order] - offset
    blocks: list[list[float]] = []  # [sum of targets, count]
    for t in target:
        blocks.append([float(t), 1.0])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            total, count = blocks.pop()
            blocks[-1][0] += total
            blocks[-1][1] += count
    fitted = np.concatenate([np.full(int(c), t / c) for t, c in blocks]) if blocks else np.zeros(0)
    x = np.empty_like(desired, dtype=float)
    x[order] = fitted + offset
    return x


def _lines(desired: np.ndarray, width: np.ndarray, k: int) -> np.ndarray:
    """First-fit assignment to ``k`` lines in order of ``desired`` (an interval colouring: words
    over overlapping spans go to different lines); a node that fits nowhere goes to the line
    that ends first."""
    line = np.zeros(desired.shape[0], dtype=np.int64)
    right = np.full(k, -np.inf)
    for i in np.argsort(desired, kind="stable"):
        fits = np.flatnonzero(desired[i] - width[i] / 2 >= right + GAP)
        line[i] = fits[0] if fits.size else int(np.argmin(right))
        right[line[i]] = max(right[line[i]] + GAP + width[i], desired[i] + width[i] / 2)
    return line


def _place_row(desired: np.ndarray, width: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Place one row on the fewest lines (at most ``MAX_SUBROWS``) on which no node moves more
    than ``MAX_SHIFT`` em from its desired ``x``; returns ``(x, line)``."""
    best: tuple[float, np.ndarray, np.ndarray] | None = None
    for k in range(1, min(MAX_SUBROWS, max(len(desired), 1)) + 1):
        line = _lines(desired, width, k)
        x = np.empty_like(desired, dtype=float)
        for j in range(k):
            on = line == j
            if on.any():
                x[on] = _spread(desired[on], width[on])
        shift = float(np.abs(x - desired).max(initial=0.0))
        if best is None or shift < best[0] - 1e-9:
            best = (shift, x, line)
        if shift <= MAX_SHIFT:
            break
    assert best is not None
    return best[1], best[2]


def layered_layout(data: HeteroData, max_label_em: float = MAX_LABEL_EM) -> Layout:
    """Compute the layered layout of ``data`` (see the module docstring); labels longer than
    ``max_label_em`` are cut (an HTML page, which zooms, has room for longer ones)."""
    types = node_types(data)
    if not types:
        raise ValueError("the graph has no nodes to draw")
    labels = {}
    for nt in types:
        full = node_labels(data, nt)
        # a lone node (e.g. the relation graph's sentence) may carry a longer label
        labels[nt] = [shorten(t, max_label_em if len(full) > 1 else max(max_label_em, MAX_SINGLE_LABEL_EM))
                      for t in full]
    width = {nt: np.array([text_width(t) + BOX_PAD for t in labels[nt]]) for nt in types}
    pos: dict[str, np.ndarray] = {}
    row_y: dict[str, float] = {}
    y = 0.0
    for i, nt in enumerate(types):
        if i == 0:
            x, line = _sequence_positions(width[nt]), np.zeros(len(labels[nt]), dtype=np.int64)
        else:
            desired = _desired_x(data, nt, pos)
            unlinked = np.isnan(desired)
            if unlinked.any():  # nodes with no placed neighbour: after the linked ones, in index order
                start = np.nanmax(desired) + 2.0 if (~unlinked).any() else 0.0
                desired[unlinked] = start + _sequence_positions(width[nt][unlinked])
            x, line = _place_row(desired, width[nt])
        row_y[nt] = y
        pos[nt] = np.stack([x, y + SUBROW_GAP * line], axis=1)
        y += SUBROW_GAP * int(line.max(initial=0)) + ROW_GAP
    return Layout(pos=pos, width=width, labels=labels, row_y=row_y)


HALF_HEIGHT = 0.85  #: half the height of a node box (one line of text plus padding), in em
EdgeType = tuple[str, str, str]


@dataclass
class EdgeCurves:
    """The drawn edges of one edge type: quadratic Bézier curves that end on the node boxes."""

    pairs: np.ndarray  #: ``[E, 2]`` (source index, destination index)
    points: np.ndarray  #: ``[E, 3, 2]`` start, control point and end of each curve, in em


def _boundary_distance(direction: np.ndarray, half_w: float, half_h: float) -> float:
    """Distance from a box centre to its border along ``direction`` (em)."""
    dx, dy = abs(float(direction[0])), abs(float(direction[1]))
    norm = float(np.hypot(dx, dy))
    if norm == 0:
        return 0.0
    t = min(half_w / dx if dx > 0 else np.inf, half_h / dy if dy > 0 else np.inf)
    return t * norm


def _bend(delta: np.ndarray, below: bool, lane: int) -> float:
    """Curvature (matplotlib's ``arc3`` ``rad``): an arc for non-adjacent nodes on one line (below
    the bottom row, above the others), a slight bend per parallel edge type between two rows."""
    dx, dy = float(delta[0]), float(delta[1])
    if abs(dy) < 1e-6 and abs(dx) > 3.0:
        up = -0.3 if dx > 0 else 0.3  # arc3 with rad < 0 bends a left-to-right edge upwards
        return -up if below else up
    return 0.12 * lane


def edge_curves(
    data: HeteroData, layout: Layout, selected: Sequence[EdgeType] | None = None
) -> dict[EdgeType, EdgeCurves]:
    """Curves of every drawn edge (self-loops left out), per edge type in :func:`edge_types` order.

    Args:
        data: the graph.
        layout: its :func:`layered_layout`.
        selected: edge types to draw (default all); a type the graph does not declare raises
            :class:`ValueError`, a declared one without edges draws nothing.
    """
    drawn = edge_types(data)
    if selected is not None:
        check_edge_types(data, selected)
        drawn = [et for et in drawn if et in {tuple(s) for s in selected}]
    bottom = next(iter(layout.pos))
    lanes: dict[frozenset[str], int] = {}
    out: dict[EdgeType, EdgeCurves] = {}
    for et in drawn:
        src, _, dst = et
        pair = frozenset((src, dst))
        lane = lanes.get(pair, 0)
        lanes[pair] = lane + 1
        index = data[et].edge_index.detach().cpu().numpy().T
        if src == dst:
            index = index[index[:, 0] != index[:, 1]]
        points = np.zeros((len(index), 3, 2))
        for k, (s, d) in enumerate(index):
            a, b = layout.pos[src][s], layout.pos[dst][d]
            below = src == dst == bottom and a[1] == layout.row_y[bottom]
            rad = _bend(b - a, below, lane)
            dx, dy = b - a
            control = (a + b) / 2 + rad * np.array([dy, -dx])
            ends = []
            for centre, towards, width in (
                (a, control - a, layout.width[src][s]),
                (b, control - b, layout.width[dst][d]),
            ):
                dist = _boundary_distance(towards, width / 2, HALF_HEIGHT)
                norm = float(np.hypot(*towards)) or 1.0
                ends.append(centre + towards / norm * dist)
            points[k] = (ends[0], control, ends[1])
        out[et] = EdgeCurves(pairs=index.reshape(-1, 2), points=points)
    return out
