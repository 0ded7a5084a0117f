r"""Does a trained model read its knowledge? ``graphmatch probe RUN --input FILE``.

For a run whose task hangs knowledge-graph branches on its inputs (K-BERT with a KG, the relation
transformer with a KG:
:meth:`Task.branch_kg <graphmatch.tasks.base.Task.branch_kg>`), over inputs with
gold labels, through :meth:`Task.probe_batch <graphmatch.tasks.base.Task.probe_batch>`:

* **coverage**: the share of inputs with a branch, and branch tokens per input;
* **attention**: in every layer, the attention mass that a trunk token which sees a branch puts
  on branch tokens, :math:`m = \sum_{k \in B} \alpha_{qk}` averaged over heads and such queries,
  against the share a uniform attention over the same visible keys would give,
  :math:`u = |\mathcal{V}(q) \cap B| / |\mathcal{V}(q)|` (:math:`m < u`: the branches get less
  than their share);
* **ablation**: the same model and inputs with every branch token cut out of the visibility and
  the pooling; the task's score with and without, and the share of labels that change (NER: of
  the tags of the characters);
* **NER**: the recall of the gold entities whose span is a word the KG matched, against the
  recall of the others; given the training file (``--seen``), also the recall of the gold
  entities whose text is never a gold entity there (unseen in training) against the seen ones.

:func:`probe_file` reads a file (what the command does), :func:`probe_graphs` a run's own graphs
(the dev split's first :data:`SUMMARY_INPUTS`, which ``train`` adds to ``summary.md``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from graphmatch.io.input_files import name_of
from graphmatch.metrics import bio_spans, compute
from graphmatch.tasks.base import InputError, Task

#: the dev inputs that ``train`` probes for ``summary.md``
SUMMARY_INPUTS = 200


class Tally:
    """The probe's running sums over batches, and its figures (:meth:`figures`)."""

    def __init__(self, task: Task, seen: set[str] | None = None):
        self.task = task
        #: the texts of the training split's gold entities (NER), and each input's characters
        self.seen, self.chars = seen, []
        self.rows: list[dict[str, Any]] = []
        self.cut: list[dict[str, Any]] = []
        self.spans: list[list[tuple[int, int]]] = []
        self.mass: list[float] = []
        self.uniform = 0.0
        self.queries = self.inputs = self.with_branch = self.branch_tokens = 0

    def add(self, model: torch.nn.Module, batch: Any, golds: Sequence[Any] | None = None,
            chars: Sequence[Sequence[str]] | None = None) -> None:
        """One batch; ``golds`` replaces the batch's own gold labels (a file's), ``chars`` are the
        inputs' characters (what :attr:`seen` is matched against)."""
        p = self.task.probe_batch(model, batch)
        branch, visible = p["branch"], p["visible"]
        sees = (visible & branch.unsqueeze(1)).any(-1) & p["token_mask"] & ~branch  # trunk queries seeing a branch
        if p["weights"] is not None:
            shares = [float((w * branch[:, None, None, :]).sum(-1).mean(1)[sees].sum()) for w in p["weights"]]
            self.mass = [a + b for a, b in zip(self.mass or [0.0] * len(shares), shares, strict=True)]
        vis = visible.float()
        self.uniform += float(((vis * branch.unsqueeze(1)).sum(-1) / vis.sum(-1).clamp(min=1))[sees].sum())
        self.queries += int(sees.sum())
        self.inputs += len(branch)
        self.with_branch += int(branch.any(-1).sum())
        self.branch_tokens += int(branch.sum())
        rows, cut = self.task.decode(p["out"], batch), self.task.decode(p["out_cut"], batch)
        if golds is not None:
            for row, other, gold in zip(rows, cut, golds, strict=True):  # a file's tags: one per character
                row["gold"] = other["gold"] = gold.split() if isinstance(row["pred"], list) else gold
        self.rows += rows
        self.cut += cut
        self.spans += p["spans"]
        self.chars += chars if chars is not None else [()] * len(rows)

    def figures(self) -> dict[str, Any]:
        """The module documentation's figures, in percent (branch tokens per input aside)."""
        n = max(self.inputs, 1)
        metrics = self.task.metrics
        score, cut = compute(metrics, self.rows), compute(metrics, self.cut)
        tagging = bool(self.rows) and isinstance(self.rows[0]["pred"], list)
        if tagging:
            pairs = [(a, b) for r, c in zip(self.rows, self.cut, strict=True) for a, b in zip(r["pred"], c["pred"],
                                                                                              strict=True)]
        else:
            pairs = [(r["pred"], c["pred"]) for r, c in zip(self.rows, self.cut, strict=True)]
        out = {"inputs": self.inputs, "with_branch": 100 * self.with_branch / n,
               "branch_tokens": self.branch_tokens / n,
               "queries": self.queries, "attention": [100 * m / max(self.queries, 1) for m in self.mass],
               "uniform": 100 * self.uniform / max(self.queries, 1), "score": score, "score_cut": cut,
               "changed": 100 * sum(a != b for a, b in pairs) / max(len(pairs), 1)}
        if tagging:
            out["recall"] = self._recall()
        return out

    def _recall(self) -> dict[str, dict[str, float]]:
        """NER: recall of the gold entities the KG matched (a word with a branch spans them exactly) and of the
        others, and with :attr:`seen` of those unseen and seen in training, with the branches and cut."""
        sides = ("matched", "other", *(("unseen", "seen") if self.seen is not None else ()))
        found = {name: {side: [0, 0] for side in sides} for name in ("with", "cut")}
        for row, cut, spans, chars in zip(self.rows, self.cut, self.spans, self.chars, strict=True):
            if row.get("gold") is None:
                continue
            words = set(spans)
            for name, r in (("with", row), ("cut", cut)):
                pred = bio_spans(r["pred"])
                for entity in bio_spans(row["gold"]):
                    hit = entity in pred
                    groups = ["matched" if entity[1:] in words else "other"]
                    if self.seen is not None:
                        groups.append("seen" if "".join(chars[entity[1]:entity[2]]) in self.seen else "unseen")
                    for group in groups:
                        found[name][group][0] += hit
                        found[name][group][1] += 1
        return {name: {side: 100 * hit / max(total, 1) for side, (hit, total) in sides.items()} |
                {f"{side}_entities": total for side, (_, total) in sides.items()} for name, sides in found.items()}


def entity_texts(items: Sequence[Any]) -> set[str]:
    """The texts of the gold entities of NER inputs (``ItemLine``s of a file with tags)."""
    return {"".join(characters(item.fields[0], tags)[start:end])
            for item in items if item.gold is not None
            for tags in [item.gold.split()] for _, start, end in bio_spans(tags)}


def characters(text: str, tags: Sequence[str]) -> list[str]:
    """An NER input's characters, one per tag: space-separated as the K-BERT files write them, or
    the text's own characters."""
    parts = text.split()
    return parts if len(parts) == len(tags) else list(text)


def probe_graphs(task: Task, model: torch.nn.Module, graphs: Sequence[Any], golds: Sequence[Any] | None = None,
                 batch_size: int = 64, chars: Sequence[Sequence[str]] | None = None,
                 seen: set[str] | None = None) -> dict[str, Any]:
    """The figures (:meth:`Tally.figures`) of ``model`` over ``graphs`` (with their gold labels, or
    ``golds``); with ``seen``, NER recall is also split by the entities' texts (``chars`` per input)."""
    from torch_geometric.data import Batch

    tally = Tally(task, seen)
    model = model.eval()
    device = next(model.parameters()).device
    with torch.inference_mode():
        for lo in range(0, len(graphs), batch_size):
            chunk = [graphs[i] for i in range(lo, min(lo + batch_size, len(graphs)))]
            gold = None if golds is None else golds[lo:lo + batch_size]
            tally.add(model, Batch.from_data_list(chunk).to(device), gold,
                      None if chars is None else chars[lo:lo + batch_size])
    return tally.figures()


def check_probed(task: Task, where: str) -> str:
    """The task's KG path; a one-line :class:`ValueError` naming ``where`` when the run has none or
    the task cannot be probed, or naming the KG when its file is missing."""
    try:
        kg = task.branch_kg()
    except (ValueError, OSError) as err:  # a built-in KG not found under the data root
        raise ValueError(f"{where}: its knowledge graph: {err}") from None
    if kg is None:
        raise ValueError(f"{where}: the probe reads a run whose model hangs knowledge-graph branches on its inputs "
                         "(K-BERT with a KG, its knowledge as a tree, or a relation transformer with a KG); "
                         f"this run's task {task.name!r} has none")
    if not Path(kg).is_file():
        raise ValueError(f"{where}: its knowledge graph {kg} is missing (looked for at {Path(kg).resolve()})")
    return kg


def probe_file(run: str | os.PathLike, path: str | os.PathLike, limit: int | None = None,
               batch_size: int = 64, seen: str | os.PathLike | None = None) -> dict[str, Any]:
    """The figures of a run folder (its ``best.ckpt``) over the inputs of ``path`` with their gold
    labels; ``seen``: the run's training file (NER recall of entities unseen there).

    Raises a one-line :class:`ValueError` naming the run (another family, no KG, a missing KG)
    or the file and line (an input the task refuses, a missing gold label)."""
    from graphmatch.engine.inference.predictor import Predictor
    from graphmatch.engine.runs.restore import load

    task, model = load(run)
    check_probed(task, str(run))
    lines = task.read_inputs(path)
    lines = lines[:limit] if limit else lines
    for item in lines:
        if item.gold is None:
            raise ValueError(f"{name_of(path)}:{item.line}: the probe needs every input's gold label")
    texts, chars = None, None
    if seen is not None:
        texts = entity_texts(task.read_inputs(seen))
        chars = [characters(item.fields[0], item.gold.split()) for item in lines]
    try:
        graphs, _ = Predictor(task, model).encode([item.fields for item in lines])
    except InputError as err:
        raise ValueError(f"{name_of(path)}:{lines[err.index].line}: {err.reason}") from None
    figures = probe_graphs(task, model, graphs, [item.gold for item in lines], batch_size, chars, texts)
    if seen is not None and "recall" not in figures:
        raise ValueError(f"--seen {name_of(seen)}: entities seen in training are a tagger's (NER); {run} classifies")
    return figures


def _fmt(value: float) -> str:
    return f"{value:.2f}"


def report(figures: dict[str, Any], title: str = "Knowledge probe") -> str:
    """The figures as Markdown: coverage, the score with and without branches, attention per layer, NER recall."""
    f = figures
    out = [f"## {title}", "",
           f"{f['inputs']} inputs: {_fmt(f['with_branch'])} % have a branch, {_fmt(f['branch_tokens'])} branch "
           "tokens per input.", "",
           "| metric | with branches | branches cut | Δ |", "|---|---:|---:|---:|"]
    for name, value in f["score"].items():
        cut = f["score_cut"].get(name, float("nan"))
        out.append(f"| {name} | {_fmt(value)} | {_fmt(cut)} | {_fmt(value - cut)} |")
    out += ["", f"Labels changed by the cut: {_fmt(f['changed'])} %."]
    if f["attention"]:
        layers = len(f["attention"])
        out += ["", f"Attention mass on their branches, {f['queries']} trunk queries that see one (% of the query's "
                "attention; uniform over its visible keys in the last column):", "",
                "| " + " | ".join(f"layer {i + 1}" for i in range(layers)) + " | uniform |",
                "|" + "---:|" * (layers + 1),
                "| " + " | ".join(f"{a:.1f}" for a in f["attention"]) + f" | {f['uniform']:.1f} |"]
    if "recall" in f:
        r = f["recall"]
        out += ["", "Recall of gold entities (%):", "", "| gold entities | count | with branches | branches cut |",
                "|---|---:|---:|---:|"]
        names = {"matched": "matched by the KG", "other": "not matched", "unseen": "unseen in training",
                 "seen": "seen in training"}
        for side, name in names.items():
            if f"{side}_entities" not in r["with"]:
                continue
            out.append(f"| {name} | {r['with'][f'{side}_entities']} | {_fmt(r['with'][side])} | "
                       f"{_fmt(r['cut'][side])} |")
    return "\n".join(out)


__all__ = [
    "SUMMARY_INPUTS", "Tally", "characters", "check_probed", "entity_texts", "probe_file", "probe_graphs", "report",
]
