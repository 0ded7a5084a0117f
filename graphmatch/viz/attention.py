"""Pictures of what a model attends to (``graphmatch predict --explain``)."""

from __future__ import annotations

import os

from graphmatch.viz.titles import input_title


def draw_token_attention(
    tokens: list[str],
    weights: list[float],
    entity_tokens: list[list[int]],
    type_weights: list[list[float]] | None,
    title: str,
    path: str | os.PathLike,
) -> None:
    """Bars of the attention over ``tokens`` (e1 tokens orange, e2 blue, others grey) and, when
    given, a heat map of each entity's weights over the K latent types."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from graphmatch.viz.fonts import font_families, has_bold

    with plt.rc_context({"font.family": font_families()}):  # the CJK font of every other picture
        _draw(plt, tokens, weights, entity_tokens, type_weights, input_title(title), path, has_bold())


def _draw(plt, tokens: list[str], weights: list[float], entity_tokens: list[list[int]],
          type_weights: list[list[float]] | None, title: str, path: str | os.PathLike, bold: bool) -> None:
    n = len(tokens)
    rows = 2 if type_weights is not None else 1
    fig = plt.figure(figsize=(max(6.0, 0.42 * n + 1.5), 3.2 + 1.9 * (rows - 1)))
    grid = fig.add_gridspec(rows, 2, height_ratios=[3.2, 1.6][:rows], width_ratios=[1, 2])
    ax = fig.add_subplot(grid[0, :])
    colors = ["tab:grey"] * n
    for k, color in ((0, "tab:orange"), (1, "tab:blue")):
        for i in entity_tokens[k]:
            colors[i] = color
    ax.bar(range(n), weights, color=colors)
    top = max(weights) if weights else 1.0
    ax.set_ylim(0, top * 1.18)
    ax.set_xlim(-0.6, n - 0.4)
    ax.set_xticks(range(n), tokens, rotation=60, ha="right", fontsize=9)
    for i, label in enumerate(ax.get_xticklabels()):
        if colors[i] != "tab:grey":  # entity tokens: coloured, and bold where the font has a bold face
            label.set_color(colors[i])
            if bold:
                label.set_fontweight("bold")
            else:
                label.set_fontsize(10.5)
    if n <= 50:
        for i, w in enumerate(weights):
            ax.text(i, w + 0.02 * top, f"{w:.2f}", ha="center", va="bottom", fontsize=7)
    ax.axhline(1.0 / max(n, 1), color="black", lw=0.6, ls=":", label="uniform 1/n")
    ax.legend(loc="upper right", fontsize=8, frameon=False)
    ax.set_ylabel("attention α")
    ax.set_title(f"{title} — attention over tokens (e1 orange, e2 blue)", fontsize=10)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    if type_weights is not None:
        ax = fig.add_subplot(grid[1, 0])
        k = len(type_weights[0])
        ax.imshow(type_weights, cmap="Blues", vmin=0.0, vmax=1.0, aspect="auto")
        ax.set_xticks(range(k), [f"type {j + 1}" for j in range(k)], fontsize=8)
        names = [" ".join(tokens[i] for i in entity_tokens[e]) for e in range(2)]
        ax.set_yticks([0, 1], [f"e1 {names[0]}", f"e2 {names[1]}"])
        for r, row in enumerate(type_weights):
            for j, w in enumerate(row):
                ax.text(j, r, f"{w:.2f}", ha="center", va="center", fontsize=8,
                        color="white" if w > 0.6 else "black")
        ax.set_title("latent entity types", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
