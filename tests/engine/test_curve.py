"""``curve.png``: the picture pyplot with ``tight_layout`` draws, rendered once."""

from __future__ import annotations

import io
import math

import pytest
from matplotlib.figure import Figure

from graphmatch.engine.runs import plot_curve

HISTORY = [{"step": s, "train_loss": 0.00012 / (s + 1), "dev": {"accuracy": 50.0 + s}} for s in range(0, 40, 8)]


def _pyplot_drawing(histories, monitor, selected) -> bytes:
    """The same picture as pyplot draws it, laid out by ``tight_layout`` (the reference)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_loss, ax_dev) = plt.subplots(1, 2, figsize=(10, 4))
    for label, hist in histories.items():
        steps = [h["step"] for h in hist]
        ax_loss.plot(steps, [h.get("train_loss", math.nan) for h in hist], marker="o", label=label)
        dev = [h["dev"][monitor] for h in hist]
        (line,) = ax_dev.plot(steps, dev, marker="o", label=label)
        k = steps.index(selected[label])
        ax_dev.plot([steps[k]], [dev[k]], marker="*", markersize=16, color=line.get_color(),
                    label="selected checkpoint" if len(histories) == 1 else None)
    ax_loss.set(xlabel="step", ylabel="training loss (mean since previous evaluation)", title="training loss")
    ax_dev.set(xlabel="step", ylabel=f"dev {monitor} (%)", title=f"dev {monitor}")
    for ax in (ax_loss, ax_dev):
        ax.grid(alpha=0.3)
    ax_dev.legend(fontsize="small")
    if len(histories) > 1:
        ax_loss.legend(fontsize="small")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    plt.close(fig)
    return buffer.getvalue()


@pytest.mark.parametrize("labels", [["run"], ["seed-1", "seed-2"]])
def test_the_curve_is_pyplots_tight_picture_drawn_once(tmp_path, monkeypatch, labels):
    """Wide tick labels (0.00012) and the long y label fit as ``tight_layout`` fits them, and the figure
    is rendered once (a layout engine left on the figure makes ``savefig`` draw it twice)."""
    histories = {label: [{**h, "dev": {"accuracy": h["dev"]["accuracy"] + i}} for h in HISTORY]
                 for i, label in enumerate(labels)}
    selected = {label: 16 for label in labels}
    expected = _pyplot_drawing(histories, "accuracy", selected)
    draws = []
    draw = Figure.draw
    monkeypatch.setattr(Figure, "draw", lambda fig, renderer: draws.append(fig) or draw(fig, renderer))
    plot_curve(histories, "accuracy", tmp_path / "curve.png", selected)
    assert (tmp_path / "curve.png").read_bytes() == expected
    assert len(draws) == 1
