"""What a run folder holds: its files (each written atomically), the learning curve, the
Markdown summary and the mean ± std over seeds. Which folder a run writes, and when it is
complete, is :mod:`graphmatch.engine.runs.folder`'s policy.

Layout of one run (``runs/<task>-<recipe>-<timestamp>/``)::

    config.yaml              resolved configuration (written first)
    best.ckpt, last.ckpt     best-on-dev weights; latest checkpoint (removed on completion
                             unless ``train.keep_last``)
    predictions_dev.jsonl    rows of the selected checkpoint (+ any official formats of the task)
    predictions_test.jsonl
    metrics.json             dev and test figures of the selected checkpoint, and what made
                             them (``provenance``: versions, git commit, cache keys)
    history.json             training loss and dev figures at every evaluation
    curve.png                the same as a picture
    summary.md               what was run and what came out
    COMPLETE                 written last: the folder is finished

Several seeds: ``seeds.json`` and ``config.yaml`` at the top, one run folder per seed
(``seed-<n>/``), and an aggregate ``metrics.json``/``summary.md``/``curve.png`` with mean ± std.

The package's modules: which folder a run writes and when it is complete (``folder``), the lock
of its owner (``owner``), the input files it copies (``files``), what made its figures
(``provenance``), its training checkpoints (``checkpoint``) and a run rebuilt from its folder for
``evaluate`` and ``predict`` (``restore``).
"""

from __future__ import annotations

import io
import json
import math
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from graphmatch.engine.runs.provenance import describe
from graphmatch.io.atomic import write_atomically
from graphmatch.io.yaml_values import MAX_YAML_VALUES, check_expansion  # noqa: F401 (MAX_YAML_VALUES: its old place)
from graphmatch.tasks.recipes.sections import Recipe


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
        return check_expansion(yaml.safe_load(f), str(path))


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
    """``predictions_<split>.jsonl`` of ``run_dir`` (:func:`write_predictions_to`)."""
    return write_predictions_to(task, run_dir / f"predictions_{split}.jsonl", rows)


def write_predictions_to(task: Any, path: Path, rows: list[dict[str, Any]]) -> list[Path]:
    """``path`` through ``task.write_predictions`` (which may add official formats beside it); the
    files are written in a scratch folder beside it and renamed into place, each whole or not at all."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmpdir = Path(tempfile.mkdtemp(prefix=".predictions-", dir=path.parent))
    try:
        task.write_predictions(str(tmpdir / path.name), to_plain(rows))
    except BaseException:
        shutil.rmtree(tmpdir, ignore_errors=True)
        raise
    return move_outputs(tmpdir, path.parent)


# --------------------------------------------------------------------------- pictures and text
def plot_curve(
    histories: Mapping[str, Sequence[Mapping[str, Any]]],
    monitor: str,
    path: str | os.PathLike,
    selected: Mapping[str, int] | None = None,
) -> None:
    """Training loss (left) and dev ``monitor`` (right) against the optimiser step, one line per
    run in ``histories`` (``{label: [{"step", "train_loss", "dev": {...}}, ...]}``); a star marks
    each run's selected checkpoint (``selected``: ``{label: step}``). Drawn on a figure of its own
    (no pyplot: no backend is chosen for the process), laid out once and rendered once."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 4))
    ax_loss, ax_dev = fig.subplots(1, 2)
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
    fig.set_layout_engine(None)  # laid out: with an engine left, savefig draws the figure twice
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    write_atomically(path, buffer.getvalue())


def _table(metrics: Mapping[str, Mapping[str, Any]], fmt: Any) -> list[str]:
    names = list(dict.fromkeys(n for split in metrics.values() for n in split))
    lines = ["| split | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for split, values in metrics.items():
        if values:
            lines.append(f"| {split} | " + " | ".join(fmt(values.get(n)) for n in names) + " |")
    return lines


def _made_by(record: Mapping[str, Any] | None) -> list[str]:
    """The summary's lines on what made the run: :func:`~graphmatch.engine.runs.provenance.describe`
    and the cache key of each split's processed data."""
    if not record:
        return []
    caches = record.get("caches") or {}
    keys = ", ".join(f"{split} `{key}`" for split, key in caches.items()) or "none recorded"
    return [f"Made by {describe(record)}.", "", f"Processed-data caches: {keys}.", ""]


def negative_share(rows: Sequence[Mapping[str, Any]], negatives: Sequence[str],
                   labels: Sequence[str]) -> dict[str, Any]:
    """How much of a split was predicted as a negative (no-relation) label against its gold share,
    in percent, and the relations (labels but ``negatives``) never predicted."""
    n = max(len(rows), 1)
    predicted = {r["pred"] for r in rows}
    return {"predicted": 100 * sum(r["pred"] in negatives for r in rows) / n,
            "gold": 100 * sum(r.get("gold") in negatives for r in rows) / n,
            "never_predicted": [label for label in labels if label not in negatives and label not in predicted]}


def negative_lines(shares: Mapping[str, Mapping[str, Any]], negatives: Sequence[str], relations: int) -> list[str]:
    """One ``summary.md`` line per split of :func:`negative_share`."""
    return [f"{split}: {share['predicted']:.1f} % predicted {'/'.join(negatives)} against {share['gold']:.1f} % "
            f"gold; {len(share['never_predicted'])} of {relations} relations never predicted"
            + (f" ({', '.join(share['never_predicted'])})" if share["never_predicted"] else "")
            for split, share in shares.items()]


def write_summary(run_dir: Path, recipe: Recipe, metrics: Mapping[str, Any],
                  notes: Sequence[str] = (), extra: Sequence[str] = (), used: str = "",
                  described: bool = True) -> None:
    """``summary.md``: recipe, what the run really used (``used``, :meth:`Task.used
    <graphmatch.tasks.base.Task.used>`; the recipe's description only where ``described``: no data or
    model key of the recipe was changed), selected checkpoint, dev/test table, the share of
    negative predictions (``metrics["negative_share"]``), time, curve, and the task's ``notes`` on
    its data (:meth:`~graphmatch.tasks.base.Task.report`), one item each; ``extra`` lines at the end
    (the knowledge probe, :mod:`graphmatch.engine.inference.probe`)."""
    t = recipe.train
    share = metrics.get("negative_share") or {}
    lines = [
        f"# {recipe.name} ({recipe.task}), seed {t.seed}",
        "",
        *([recipe.description, ""] if described and recipe.description else []),
        *([f"Model and data: {used}", ""] if used else []),
        f"- checkpoint selected on dev `{metrics['monitor']}`: step {metrics['best_step']} "
        f"(epoch {metrics['best_epoch']}); test evaluated once, with that checkpoint",
        f"- trained {metrics['epochs']} epoch(s), {metrics['steps']} steps, {metrics['time_s']:.1f} s "
        f"on {metrics['device']}",
        f"- batch size {t.batch_size}, optimizer {recipe.optim.optimizer}, lr {recipe.optim.lr}",
        *(f"- {note}" for note in notes),
        *(f"- negative predictions, {line}" for line in negative_lines(share.get("splits", {}), share.get("labels", []),
                                                                        share.get("relations", 0))),
        "",
        *_table({"dev": metrics["dev"], "test": metrics.get("test") or {}}, lambda v: "–" if v is None else f"{v:.2f}"),
        "",
        "Figures are percentages. ![learning curve](curve.png)",
        "",
        "Configuration: `config.yaml`; predictions: `predictions_dev.jsonl`, `predictions_test.jsonl`.",
        "",
        *_made_by(metrics.get("provenance")),
        *extra,
    ]
    write_atomically(run_dir / "summary.md", "\n".join(lines))


def mean_std(values: Sequence[float]) -> dict[str, Any]:
    """Mean and sample standard deviation (n - 1 in the denominator; 0 for one value)."""
    n = len(values)
    mean = sum(values) / n
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    return {"mean": mean, "std": std, "values": list(values)}


def seeds_provenance(runs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What made several seeds' runs (their ``metrics.json``): the first seed's
    :func:`~graphmatch.engine.runs.provenance.provenance` record, with ``one_commit`` (every seed made
    by the same commit, clean or equally dirty; a seed without a record counts as another commit)
    and ``commits`` (each seed's commit). When the seeds' commits differ, ``commit`` and ``dirty``
    are ``None``: no single commit made the figures; when one commit made them, some seeds with
    uncommitted changes, ``commit`` is kept and ``dirty`` is true."""
    records = [r.get("provenance") or {} for r in runs]
    states = {(rec.get("commit"), rec.get("dirty")) for rec in records}
    one = len(states) == 1 and all(records)
    out = {**records[0], "one_commit": one, "commits": [rec.get("commit") for rec in records]}
    if one:
        return out
    if all(records) and len({commit for commit, _ in states}) == 1 and out["commit"] is not None:
        out["dirty"] = True
    else:
        out["commit"] = out["dirty"] = None
    return out


def aggregate(run_dirs: Sequence[Path], out_dir: Path, recipe: Recipe) -> dict[str, Any]:
    """Mean ± std of the runs' dev and test metrics into ``out_dir`` (metrics.json, summary.md,
    curve.png with one line per seed)."""
    runs = [json.loads((d / "metrics.json").read_text(encoding="utf-8")) for d in run_dirs]
    out: dict[str, Any] = {
        "task": recipe.task,
        "recipe": recipe.name,
        "seeds": [r["seed"] for r in runs],
        "runs": [d.name for d in run_dirs],
        "monitor": runs[0]["monitor"],
    }
    for split in ("dev", "test"):
        names = [n for n in (runs[0].get(split) or {}) if all(n in (r.get(split) or {}) for r in runs)]
        out[split] = {n: mean_std([r[split][n] for r in runs]) for n in names}
    out["time_s"] = sum(r["time_s"] for r in runs)
    out["provenance"] = seeds_provenance(runs)
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
        f"# {recipe.name} ({recipe.task}): {len(runs)} seeds",
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
        *_made_by(out["provenance"]),
    ]
    if not out["provenance"]["one_commit"]:
        lines += ["The seeds were made by different code: " + ", ".join(
            f"seed {r['seed']} {(r.get('provenance') or {}).get('commit') or 'unknown'}" for r in runs) + ".", ""]
    write_atomically(out_dir / "summary.md", "\n".join(lines))
    return out
