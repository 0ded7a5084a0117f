"""Run folders: their files (each written atomically), the learning curve, the Markdown summary, the ``COMPLETE``
marker and the mean ± std over seeds.

Layout of one run (``runs/<task>-<recipe>-<timestamp>/``)::

    config.yaml              resolved configuration (written first)
    best.ckpt, last.ckpt     best-on-dev and latest checkpoints
    predictions_dev.jsonl    rows of the selected checkpoint (+ any official formats of the task)
    predictions_test.jsonl
    metrics.json             dev and test figures of the selected checkpoint
    history.json             training loss and dev figures at every evaluation
    curve.png                the same as a picture
    summary.md               what was run and what came out
    COMPLETE                 written last: the folder is finished

Several seeds: ``seeds.json`` and ``config.yaml`` at the top, one run folder per seed
(``seed-<n>/``), and an aggregate ``metrics.json``/``summary.md``/``curve.png`` with mean ± std.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import math
import os
import re
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from graphmatch.datafiles import write_atomically

COMPLETE = "COMPLETE"


class RunError(RuntimeError):
    """A run cannot go on for a reason its user can act on (it was interrupted, dev was never
    evaluated); the command line shows it as one line."""


# --------------------------------------------------------------------------- files
def to_plain(value: Any) -> Any:
    """``value`` with tensors, NumPy values and tuples turned into JSON-ready Python values."""
    if isinstance(value, Mapping):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    if hasattr(value, "tolist"):  # torch.Tensor, numpy array or scalar
        return to_plain(value.tolist())
    if isinstance(value, Path):
        return str(value)
    return value


def write_json(path: str | os.PathLike, obj: Any) -> None:
    write_atomically(path, json.dumps(to_plain(obj), indent=2, ensure_ascii=False) + "\n")


def write_yaml(path: str | os.PathLike, obj: Any) -> None:
    write_atomically(path, yaml.safe_dump(to_plain(obj), sort_keys=False, allow_unicode=True))


def read_yaml(path: str | os.PathLike) -> Any:
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)


def move_outputs(tmpdir: Path, run_dir: Path) -> list[Path]:
    """Rename every file written into ``tmpdir`` into ``run_dir`` (one atomic rename each)."""
    moved = []
    for f in sorted(tmpdir.iterdir()):
        if f.is_file():
            os.replace(f, run_dir / f.name)
            moved.append(run_dir / f.name)
    shutil.rmtree(tmpdir, ignore_errors=True)
    return moved


def write_predictions(task: Any, run_dir: Path, split: str, rows: list[dict[str, Any]]) -> list[Path]:
    """``predictions_<split>.jsonl`` through ``task.write_predictions`` (which may add official
    formats beside it); the files are written in a scratch folder and renamed into place."""
    tmpdir = Path(tempfile.mkdtemp(prefix=".predictions-", dir=run_dir))
    task.write_predictions(str(tmpdir / f"predictions_{split}.jsonl"), to_plain(rows))
    return move_outputs(tmpdir, run_dir)


# --------------------------------------------------------------------------- folders
def default_run_dir(task: str, recipe: str, root: str | os.PathLike = "runs") -> Path:
    """``<root>/<task>-<recipe>-<YYYYmmdd-HHMMSS>`` (a numeric suffix if it exists)."""
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    task = task.rpartition(":")[2]
    safe = re.sub(r"[^\w.-]+", "_", f"{task}-{recipe}-{stamp}")
    path, k = Path(root) / safe, 2
    while path.exists():
        path, k = Path(root) / f"{safe}-{k}", k + 1
    return path


def is_complete(run_dir: str | os.PathLike) -> bool:
    return (Path(run_dir) / COMPLETE).is_file()


def mark_complete(run_dir: str | os.PathLike) -> None:
    write_atomically(Path(run_dir) / COMPLETE, dt.datetime.now().isoformat(timespec="seconds") + "\n")


def clear_complete(run_dir: str | os.PathLike) -> None:
    (Path(run_dir) / COMPLETE).unlink(missing_ok=True)


#: the files a run folder holds before anything of its training is saved
STARTING_FILES = ("config.yaml", "seeds.json")


def nothing_saved(run_dir: str | os.PathLike) -> bool:
    """Whether ``run_dir`` is a run folder whose run stopped before it saved anything (it failed
    on its data, say): it holds ``config.yaml`` and otherwise only ``config.yaml`` /
    ``seeds.json`` files, also in ``seed-<n>/`` sub-folders; no checkpoint, no result. Such a
    folder may be started again in place."""
    run_dir = Path(run_dir)
    if not (run_dir / "config.yaml").is_file():
        return False
    for path in run_dir.rglob("*"):
        if path.is_dir():
            if not (path.parent == run_dir and path.name.startswith("seed-")):
                return False
        elif path.name not in STARTING_FILES and not (path.name.startswith(".") and path.name.endswith(".tmp")):
            return False
    return True


def check_complete(run_dir: str | os.PathLike) -> None:
    """Raise a ValueError explaining how to resume when ``run_dir`` was interrupted."""
    run_dir = Path(run_dir)
    if is_complete(run_dir):
        return
    if not (run_dir / "config.yaml").is_file():
        raise ValueError(f"{run_dir} is not a graphmatch run folder (no config.yaml)")
    if nothing_saved(run_dir):
        how = (f"it stopped before it saved anything; start it again in place with: graphmatch train --resume "
               f"{run_dir} (add --set KEY=VALUE to change its configuration)")
    else:
        how = f"resume it with: graphmatch train --resume {run_dir}"
    raise ValueError(f"run folder {run_dir} is incomplete (interrupted: no {COMPLETE} marker); {how}")


# --------------------------------------------------------------------------- pictures and text
def plot_curve(
    histories: Mapping[str, Sequence[Mapping[str, Any]]],
    monitor: str,
    path: str | os.PathLike,
    selected: Mapping[str, int] | None = None,
) -> None:
    """Training loss (left) and dev ``monitor`` (right) against the optimiser step, one line per
    run in ``histories`` (``{label: [{"step", "train_loss", "dev": {...}}, ...]}``); a star marks
    each run's selected checkpoint (``selected``: ``{label: step}``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_loss, ax_dev) = plt.subplots(1, 2, figsize=(10, 4))
    for label, hist in histories.items():
        steps = [h["step"] for h in hist]
        ax_loss.plot(steps, [h.get("train_loss", math.nan) for h in hist], marker="o", label=label)
        dev = [h.get("dev", {}).get(monitor, math.nan) for h in hist]
        (line,) = ax_dev.plot(steps, dev, marker="o", label=label)
        if selected and selected.get(label) in steps:
            k = steps.index(selected[label])
            ax_dev.plot(
                [steps[k]],
                [dev[k]],
                marker="*",
                markersize=16,
                color=line.get_color(),
                label="selected checkpoint" if len(histories) == 1 else None,
            )
    ax_loss.set(xlabel="step", ylabel="training loss (mean since previous evaluation)", title="training loss")
    ax_dev.set(xlabel="step", ylabel=f"dev {monitor} (%)", title=f"dev {monitor}")
    for ax in (ax_loss, ax_dev):
        ax.grid(alpha=0.3)
    if len(histories) > 1 or selected:
        ax_dev.legend(fontsize="small")
    if len(histories) > 1:
        ax_loss.legend(fontsize="small")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    plt.close(fig)
    write_atomically(path, buffer.getvalue())


def _table(metrics: Mapping[str, Mapping[str, Any]], fmt: Any) -> list[str]:
    names = list(dict.fromkeys(n for split in metrics.values() for n in split))
    lines = ["| split | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for split, values in metrics.items():
        if values:
            lines.append(f"| {split} | " + " | ".join(fmt(values.get(n)) for n in names) + " |")
    return lines


def write_summary(run_dir: Path, config: Mapping[str, Any], metrics: Mapping[str, Any]) -> None:
    """``summary.md``: recipe, selected checkpoint, dev/test table, time, curve."""
    t = config["train"]
    lines = [
        f"# {config['name']} ({config['task']}), seed {t['seed']}",
        "",
        config.get("description", "") or "",
        "",
        f"- checkpoint selected on dev `{metrics['monitor']}`: step {metrics['best_step']} "
        f"(epoch {metrics['best_epoch']}); test evaluated once, with that checkpoint",
        f"- trained {metrics['epochs']} epoch(s), {metrics['steps']} steps, {metrics['time_s']:.1f} s "
        f"on {metrics['device']}",
        f"- batch size {t['batch_size']}, optimizer {config['optim']['optimizer']}, lr {config['optim']['lr']}",
        "",
        *_table({"dev": metrics["dev"], "test": metrics.get("test") or {}}, lambda v: "–" if v is None else f"{v:.2f}"),
        "",
        "Figures are percentages. ![learning curve](curve.png)",
        "",
        "Configuration: `config.yaml`; predictions: `predictions_dev.jsonl`, `predictions_test.jsonl`.",
        "",
    ]
    write_atomically(run_dir / "summary.md", "\n".join(lines))


def mean_std(values: Sequence[float]) -> dict[str, Any]:
    """Mean and sample standard deviation (n - 1 in the denominator; 0 for one value)."""
    n = len(values)
    mean = sum(values) / n
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    return {"mean": mean, "std": std, "values": list(values)}


def aggregate(run_dirs: Sequence[Path], out_dir: Path, config: Mapping[str, Any]) -> dict[str, Any]:
    """Mean ± std of the runs' dev and test metrics into ``out_dir`` (metrics.json, summary.md,
    curve.png with one line per seed)."""
    runs = [json.loads((d / "metrics.json").read_text(encoding="utf-8")) for d in run_dirs]
    out: dict[str, Any] = {
        "task": config["task"],
        "recipe": config["name"],
        "seeds": [r["seed"] for r in runs],
        "runs": [d.name for d in run_dirs],
        "monitor": runs[0]["monitor"],
    }
    for split in ("dev", "test"):
        names = [n for n in (runs[0].get(split) or {}) if all(n in (r.get(split) or {}) for r in runs)]
        out[split] = {n: mean_std([r[split][n] for r in runs]) for n in names}
    out["time_s"] = sum(r["time_s"] for r in runs)
    write_json(out_dir / "metrics.json", out)
    histories, selected = {}, {}
    for d, r in zip(run_dirs, runs, strict=True):
        hist_path = d / "history.json"
        if hist_path.is_file():
            histories[f"seed {r['seed']}"] = json.loads(hist_path.read_text(encoding="utf-8"))
            selected[f"seed {r['seed']}"] = r["best_step"]
    if histories:
        plot_curve(histories, out["monitor"], out_dir / "curve.png", selected)
    fmt = lambda v: "–" if v is None else f"{v['mean']:.2f} ± {v['std']:.2f}"  # noqa: E731
    lines = [
        f"# {config['name']} ({config['task']}): {len(runs)} seeds",
        "",
        f"Seeds {', '.join(map(str, out['seeds']))}; each run selects its checkpoint on dev "
        f"`{out['monitor']}` and evaluates test once. Mean ± sample standard deviation (percent).",
        "",
        *_table({"dev": out["dev"], "test": out["test"]}, fmt),
        "",
        "| seed | "
        + " | ".join(f"dev {n}" for n in out["dev"])
        + " | "
        + " | ".join(f"test {n}" for n in out["test"])
        + " |",
        "|---|" + "---|" * (len(out["dev"]) + len(out["test"])),
        *(
            f"| [{r['seed']}]({d.name}/summary.md) | "
            + " | ".join(f"{r['dev'][n]:.2f}" for n in out["dev"])
            + " | "
            + " | ".join(f"{r['test'][n]:.2f}" for n in out["test"])
            + " |"
            for d, r in zip(run_dirs, runs, strict=True)
        ),
        "",
        f"Total training time {out['time_s']:.1f} s. ![learning curves](curve.png)",
        "",
    ]
    write_atomically(out_dir / "summary.md", "\n".join(lines))
    return out
