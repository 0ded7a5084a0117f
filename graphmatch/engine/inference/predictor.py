r"""Batch prediction with a trained run: :class:`Predictor` (the model built once) and
:func:`read_inputs` (the task's own data files, TSV, CSV or JSONL).

Inputs are encoded many at a time (``task.encode_many``: K-BERT builds every sentence tree of a
chunk in one vectorised pass and keeps them collated) on a second thread while the model reads the
chunk before, sorted by length into batches of ``batch_size`` graphs (little padding; cut straight
out of collated graphs), run without gradients, and returned in input order, one row per input::

    {"label": "1", "prob": 0.93, "probabilities": {"0": 0.07, "1": 0.93}, "entities": [...]}

``probabilities`` is there when the model gives one score vector per input (classification);
``entities`` is what K-BERT injected (``Task.encode_for_prediction``). ``quantize="int8"``
replaces every ``nn.Linear`` by its dynamically quantized version
(:func:`torch.ao.quantization.quantize_dynamic`: int8 weights with one scale per output channel,
activations quantized per batch), for prediction on a CPU; ``"int8-per-tensor"`` uses one scale
per weight matrix, as ``quantize_dynamic``'s default (faster to load, less accurate: on MiniLM
fine-tuned for SemEval 2.5 points of macro-F1 lost against 0.7, ``docs/benchmarks.md``).
With ``calibration`` inputs (``from_run(calibrate=FILE)``) the layers whose input is uneven are
smoothed first (:mod:`graphmatch.engine.inference.quantize`; on that model 0.02 points gained instead of 0.79 lost).

Example::

    from graphmatch.engine.inference.predictor import Predictor

    rows = Predictor.from_run("runs/kbert_chnsenticorp").predict(["这家酒店很好", "太差了"])
"""

from __future__ import annotations

import itertools
import json
import os
import sys
import warnings
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import torch
from torch_geometric.data import Batch

from graphmatch.data.batching import CollatedGraphs, can_gather, gather_batch
from graphmatch.engine import runs
from graphmatch.engine.arguments import SMOOTH_ALPHA, check_keep_fp32, check_precision, check_smoothing
from graphmatch.engine.inference.quantize import input_ranges, quantize_linear
from graphmatch.engine.training.precision import autocast, inference_precision, to_fp32
from graphmatch.io.atomic import write_atomically
from graphmatch.io.input_files import name_of
from graphmatch.tasks.base import InputError, Task

#: ``quantize`` → the weight quantization of every ``nn.Linear`` (:func:`quantize`)
QUANTIZE = {"int8": "per-channel", "int8-per-tensor": "per-tensor"}
#: inputs of a calibration file that smoothing reads (its first ones)
CALIBRATION_INPUTS = 256
Input = str | tuple[str, ...] | Sequence[str]


class Predictor:
    """A task and its model, loaded once, predicting batches of raw inputs."""

    def __init__(self, task: Task, model: torch.nn.Module, batch_size: int = 64, quantize: str | None = None,
                 keep_fp32: str | None = None, calibration: Sequence[Input] | None = None,
                 alpha: float = SMOOTH_ALPHA, precision: str | None = None):
        if quantize not in (None, *QUANTIZE):
            raise ValueError(f"--quantize must be one of {', '.join(QUANTIZE)}, got {quantize!r}")
        check_precision(precision, quantize)
        check_keep_fp32(keep_fp32, quantize)
        check_smoothing(calibration is not None, quantize, alpha)
        if batch_size < 1:
            raise ValueError(f"--batch-size must be >= 1, got {batch_size}")
        self.task, self.batch_size = task, batch_size
        #: what the model runs in: ``precision``, else the run's ``train.precision``, on this CPU
        #: (:func:`~graphmatch.engine.training.precision.inference_precision`)
        self.precision = inference_precision(precision or task.recipe.train.precision, quantize)
        #: inputs encoded at a time while the model reads the ones before (:meth:`predict`)
        self.chunk_size = 1024
        self.model = model.eval()
        if quantize is not None:
            ranges = None
            if calibration is not None:  # smoothing: each layer's input range, before quantizing
                graphs, _ = self.encode(calibration)
                ranges = input_ranges(self.model, (batch for _, batch in self.batches(graphs)))
            self.model = quantize_linear(self.model, QUANTIZE[quantize], keep_fp32=keep_fp32, ranges=ranges,
                                         alpha=alpha)

    @classmethod
    def from_run(cls, run_or_ckpt: str | os.PathLike, batch_size: int = 64, quantize: str | None = None,
                 keep_fp32: str | None = None, calibrate: str | os.PathLike | None = None,
                 alpha: float = SMOOTH_ALPHA, precision: str | None = None) -> Predictor:
        """The predictor of a run folder (its ``best.ckpt``) or checkpoint file (:func:`graphmatch.engine.load`);
        ``calibrate``: a file of inputs (as :meth:`predict_file` reads them) whose first
        :data:`CALIBRATION_INPUTS` smooth the int8 layers (:mod:`graphmatch.engine.inference.quantize`);
        ``precision``: ``auto``, ``32-true`` or ``bf16-mixed`` instead of the run's ``train.precision``."""
        from graphmatch.engine.runs.restore import load

        check_precision(precision, quantize)
        task, model = load(run_or_ckpt)
        if calibrate is None:
            return cls(task, model, batch_size=batch_size, quantize=quantize, keep_fp32=keep_fp32, alpha=alpha,
                       precision=precision)
        lines = task.read_inputs(calibrate)[:CALIBRATION_INPUTS]
        try:
            return cls(task, model, batch_size=batch_size, quantize=quantize, keep_fp32=keep_fp32,
                       calibration=[item.fields for item in lines], alpha=alpha, precision=precision)
        except InputError as err:  # only the calibration inputs are encoded here
            raise ValueError(f"{name_of(calibrate)}:{lines[err.index].line}: {err.reason}") from None

    def encode(self, inputs: Iterable[Input]) -> tuple[Sequence[Any], list[dict[str, Any]]]:
        """Each input's graph and what the task reports about it (e.g. K-BERT's injected entities),
        all at once (:meth:`Task.encode_many <graphmatch.tasks.base.Task.encode_many>`: a list of
        graphs, or graphs stored collated). An input the task refuses raises
        :class:`~graphmatch.errors.InputError` with its position."""
        return self.task.encode_many([_fields(item) for item in inputs])

    def batches(self, graphs: Sequence[Any]) -> list[tuple[list[int], Batch]]:
        """Length-sorted batches (positions in ``graphs``, the batch): cut straight out of graphs
        stored collated (:func:`~graphmatch.data.batching.gather_batch`), else collated by PyG."""
        sizes = _sizes(graphs)
        order = sorted(range(len(graphs)), key=sizes.__getitem__)
        chunks = [order[i:i + self.batch_size] for i in range(0, len(order), self.batch_size)]
        if can_gather(graphs):
            return [(chunk, gather_batch(graphs, chunk)) for chunk in chunks]
        return [(chunk, Batch.from_data_list([graphs[i] for i in chunk])) for chunk in chunks]

    def predict(self, inputs: Iterable[Input], progress: bool = False) -> list[dict[str, Any]]:
        """One row per input, in input order: ``label``, ``prob`` (its probability), ``probabilities``
        (every class, for classification) and the task's extras (K-BERT: ``entities``). An input is a
        text, or a tuple of the task's fields (a pair: ``(text, text_b)``).

        The inputs are encoded a chunk at a time (:meth:`chunks`) on a second thread while the model
        reads the chunk before (tokenizers and torch leave Python's lock while they work); each
        chunk is cut into its own length-sorted batches. An input the task refuses raises
        :class:`~graphmatch.errors.InputError` with its position among all inputs."""
        from concurrent.futures import ThreadPoolExecutor

        from tqdm import tqdm

        items = [_fields(item) for item in inputs]
        rows: list[dict[str, Any] | None] = [None] * len(items)
        labels = self.task.label_names()
        with ThreadPoolExecutor(max_workers=1) as pool, torch.inference_mode():
            encoded = self._encoded(items, pool)
            first = next(encoded, None)  # a refused input among the first: its error alone, before any bar
            bar = tqdm(total=len(items), desc="predict", unit="input", file=sys.stderr,
                       disable=None if progress else True, dynamic_ncols=True)  # None: on a terminal only
            try:
                for start, graphs, extras in itertools.chain([first] if first else [], encoded):
                    for positions, batch in self.batches(graphs):
                        with autocast(self.precision):
                            out = self.model(batch)
                        out = to_fp32(out)  # probabilities in fp32 whatever the matrix products ran in
                        decoded = self.task.decode(out, batch)
                        probs = _class_probabilities(out, len(positions), len(labels))
                        for j, i in enumerate(positions):
                            row = {"label": decoded[j]["pred"], "prob": decoded[j].get("prob")}
                            if probs is not None:
                                row["probabilities"] = dict(zip(labels, probs[j], strict=True))
                            rows[start + i] = runs.to_plain({**row, **extras[i]})
                        bar.update(len(positions))
            except BaseException:
                bar.leave = False  # a refused input further on: its error line stays, not the bar
                raise
            finally:
                bar.close()
        return rows  # type: ignore[return-value]

    def _encoded(self, items: list[tuple[str, str | None]], pool: Any
                 ) -> Iterator[tuple[int, Sequence[Any], list[dict[str, Any]]]]:
        """Each chunk's ``(start, graphs, extras)``, the next chunk encoded on ``pool`` meanwhile."""
        chunks = self.chunks(len(items))
        pending = pool.submit(self._encode_chunk, items, *chunks[0]) if chunks else None
        for k, (start, _) in enumerate(chunks):
            graphs, extras = pending.result()
            if k + 1 < len(chunks):
                pending = pool.submit(self._encode_chunk, items, *chunks[k + 1])
            yield start, graphs, extras

    def chunks(self, n: int) -> list[tuple[int, int]]:
        """``(start, stop)`` of the chunks :meth:`predict` encodes ``n`` inputs in: two batches
        first (so that the model starts at once), then :attr:`chunk_size` inputs each."""
        first = min(n, 2 * self.batch_size)
        step = max(self.chunk_size, self.batch_size)
        return [(0, first)] * (n > 0) + [(a, min(a + step, n)) for a in range(first, n, step)]

    def _encode_chunk(self, items: list[tuple[str, str | None]], start: int, stop: int
                      ) -> tuple[Sequence[Any], list[dict[str, Any]]]:
        try:
            return self.task.encode_many(items[start:stop])
        except InputError as err:
            raise InputError(start + err.index, err.reason) from err

    def predict_file(self, path: str | os.PathLike, progress: bool = False) -> list[dict[str, Any]]:
        """:meth:`predict` of the inputs of a file (:meth:`Task.read_inputs <graphmatch.tasks.base.Task.read_inputs>`:
        the task's own data files, a header recognised by its column names, or bare inputs; ``-``:
        stdin), each row with its input's ``line`` (and ``gold``, where the file has the label).

        Raises:
            ValueError: ``file:line`` and what is wrong with the line (its columns, or an input the
                task refuses, such as an empty text), or a file without inputs.
        """
        task = self.task
        lines = task.read_inputs(path)
        try:
            rows = self.predict([item.fields for item in lines], progress=progress)
        except InputError as err:
            raise ValueError(f"{name_of(path)}:{lines[err.index].line}: {err.reason}") from None
        for row, item in zip(rows, lines, strict=True):
            row["line"] = item.line
            if item.gold is not None:
                row["gold"] = item.gold.split() if isinstance(row["label"], list) else item.gold
        self._warn_unknown_gold(rows, name_of(path))
        return rows

    def known_gold(self, row: dict[str, Any]) -> bool:
        """Whether every gold label of ``row`` is one of the run's labels."""
        golds = row["gold"] if isinstance(row["gold"], list) else [row["gold"]]
        return set(golds) <= set(self.task.label_names())

    def _warn_unknown_gold(self, rows: Sequence[dict[str, Any]], source: str) -> None:
        """One warning for the rows whose gold labels are not the run's (left out of :meth:`metrics`)."""
        unknown = [row for row in rows if "gold" in row and not self.known_gold(row)]
        if unknown:
            labels = self.task.label_names()
            golds = unknown[0]["gold"] if isinstance(unknown[0]["gold"], list) else [unknown[0]["gold"]]
            bad = next(g for g in golds if g not in set(labels))
            shown = ", ".join(labels) if len(labels) <= 25 else ", ".join(labels[:25]) + ", …"
            scored = sum("gold" in row for row in rows)
            warnings.warn(f"{source}:{unknown[0]['line']}: gold label {bad!r} is not one of the run's labels "
                          f"({shown}); {len(unknown)} of {scored} labelled lines have such labels and are "
                          "left out of the scores", UserWarning, stacklevel=3)

    def metrics(self, rows: Sequence[dict[str, Any]]) -> dict[str, float] | None:
        """The task's metrics (as ``evaluate`` reports them) of the rows that carry a ``gold`` among
        the run's labels; ``None`` when none does."""
        from graphmatch.metrics import compute

        scored = [{**row, "pred": row["label"], "probs": row.get("probabilities")} for row in rows
                  if "gold" in row and self.known_gold(row)]
        return compute(self.task.metrics, scored, self.task.negative_labels()) if scored else None


def _fields(item: Input) -> tuple[str, str | None]:
    if isinstance(item, str):
        return item, None
    fields = list(item)
    return fields[0], (fields[1] if len(fields) > 1 else None)


#: the node type whose count is an input's length (the first present), else all nodes count
_LENGTH_TYPES = ("token", "word", "char")


def _sizes(graphs: Sequence[Any]) -> list[int]:
    """How long each input is (its token or word nodes, else all nodes), for length-sorted batches;
    graphs stored collated answer from their stored node counts."""
    if isinstance(graphs, CollatedGraphs):
        types = graphs.node_types
        kinds = [kind for kind in _LENGTH_TYPES if kind in types][:1] or types
        return sum(graphs.node_counts(kind) for kind in kinds).tolist()
    return [_size(data) for data in graphs]


def _size(data: Any) -> int:
    """How long one graph is (see :func:`_sizes`)."""
    for kind in _LENGTH_TYPES:
        if kind in getattr(data, "node_types", ()):
            return int(data[kind].num_nodes)
    return int(data.num_nodes)


def _class_probabilities(out: Any, num_inputs: int, num_classes: int) -> list[list[float]] | None:
    if isinstance(out, torch.Tensor) and out.dim() == 2 and tuple(out.shape) == (num_inputs, num_classes):
        return out.float().softmax(-1).tolist()
    return None


def read_inputs(path: str | os.PathLike, task: Task) -> list[tuple[str, ...]]:
    """The inputs (the task's fields) of a ``predict --input`` file
    (:meth:`Task.read_inputs <graphmatch.tasks.base.Task.read_inputs>`)."""
    return [item.fields for item in task.read_inputs(path)]


def write_jsonl(rows: Iterable[dict[str, Any]], path: str | os.PathLike | None) -> None:
    """JSON lines to ``path`` (written beside it and renamed: never half-written) or to stdout (``None``/``-``)."""
    if path is None or str(path) == "-":
        for row in rows:
            sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")
        sys.stdout.flush()
        return
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"--output {path} is a folder; give the file to write (e.g. OUT.jsonl)")
    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as f:
            for row in rows:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")

    write_atomically(path, write)
