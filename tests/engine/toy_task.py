"""A test-only task for the engine: a synthetic graph classification problem a tiny PyG model
learns in seconds. Registered as ``toy``; recipes name it ``toy_task:toy`` (this folder must be
importable, e.g. on ``PYTHONPATH``)."""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor
from torch_geometric.data import HeteroData
from torch_geometric.nn import global_mean_pool
from torch_geometric.utils import scatter

from graphmatch.io import datafiles
from graphmatch.tasks.base import SampleLimits, Task, register
from graphmatch.tasks.recipes.keys import key

FEATURES = 4
#: seconds each training step sleeps, when this environment variable is set
STEP_DELAY = "TOY_STEP_DELAY"
#: seconds each evaluation batch sleeps, when this environment variable is set (after touching
#: the file named by ``TOY_EVAL_MARK``, when that is set)
EVAL_DELAY = "TOY_EVAL_DELAY"
#: ``datasets`` or ``results``: the process sends itself ``$TOY_SIGNAL`` (``SIGTERM`` unless set)
#: while its graphs are built, or while a finished run's results are written
SIGNAL_AT = "TOY_SIGNAL_AT"


def signal_self_at(moment: str) -> None:
    """Send this process the signal :data:`SIGNAL_AT` asks for at ``moment`` (a test's stop)."""
    if os.environ.get(SIGNAL_AT) == moment:
        os.kill(os.getpid(), signal.Signals[os.environ.get("TOY_SIGNAL", "SIGTERM")])


def toy_graph(x: Tensor, word_sizes: list[int], y: int | None = None) -> HeteroData:
    """Tokens with features ``x`` grouped into consecutive words of ``word_sizes`` tokens."""
    data = HeteroData()
    data["token"].x = x
    data["word"].num_nodes = len(word_sizes)
    word_of_token = torch.repeat_interleave(torch.arange(len(word_sizes)), torch.tensor(word_sizes))
    data["token", "in", "word"].edge_index = torch.stack([torch.arange(x.size(0)), word_of_token])
    if y is not None:
        data.y = torch.tensor([y])
    return data


class ToyModel(torch.nn.Module):
    """Token encoder → mean into words → pooled tokens and words → classifier."""

    def __init__(self, hidden: int, num_classes: int, dropout: float, encoder_layers: int = 1):
        super().__init__()
        self.encoder = torch.nn.Linear(FEATURES, hidden)
        self.encoder_stack = torch.nn.ModuleList(torch.nn.Linear(hidden, hidden) for _ in range(encoder_layers - 1))
        self.word = torch.nn.Linear(hidden, hidden)
        self.norm = torch.nn.LayerNorm(2 * hidden)
        self.dropout = torch.nn.Dropout(dropout)
        self.head = torch.nn.Linear(2 * hidden, num_classes)

    def forward(self, batch: Any) -> Tensor:
        if self.training and os.environ.get(STEP_DELAY):  # a slow run, to be stopped by a signal in a test
            time.sleep(float(os.environ[STEP_DELAY]))
        if not self.training and os.environ.get(EVAL_DELAY):  # a slow dev evaluation
            if os.environ.get("TOY_EVAL_MARK"):
                open(os.environ["TOY_EVAL_MARK"], "a").close()
            time.sleep(float(os.environ[EVAL_DELAY]))
        h = self.encoder(batch["token"].x).relu()
        for layer in self.encoder_stack:
            h = layer(h).relu()
        src, dst = batch["token", "in", "word"].edge_index
        w = self.word(scatter(h[src], dst, dim=0, dim_size=batch["word"].num_nodes, reduce="mean")).relu()
        size = batch.num_graphs
        pooled = [global_mean_pool(h, batch["token"].batch, size), global_mean_pool(w, batch["word"].batch, size)]
        g = torch.cat(pooled, -1)
        return self.head(self.dropout(self.norm(g)))


class ToySplit(list):
    """One split's graphs, with the cache key a processed dataset carries (``cache_digest``)."""

    def __init__(self, graphs: list[HeteroData], cache_digest: str):
        super().__init__(graphs)
        self.cache_digest = cache_digest


@dataclass(frozen=True)
class ToyDataKeys:
    """Synthetic graphs."""

    n_train: int = key(128, "training graphs", interval="[1, inf)")
    n_dev: int = key(64, "dev graphs", interval="[1, inf)")
    n_test: int = key(64, "test graphs", interval="[1, inf)")
    num_classes: int = key(2, "classes", interval="[2, inf)")
    seed: int = key(0, "seed of the graphs and of the labelling rule")
    file: str | None = key(None, "a data file that must exist (to test missing files)")
    root: str | None = key(None, "data root")
    limit: SampleLimits = key(SampleLimits(), "samples used per split")


@dataclass(frozen=True)
class ToyModelKeys:
    """A tiny graph classifier."""

    hidden: int = key(16, "width", interval="[1, inf)")
    dropout: float = key(0.1, "dropout", interval="[0, 1]")
    encoder_layers: int = key(1, "encoder layers", interval="[1, inf)")


@register
class ToyTask(Task):
    name = "toy"
    Data = ToyDataKeys
    Model = ToyModelKeys
    metrics = ("accuracy", "macro_f1")
    monitor = "accuracy"

    def __init__(self, config: dict[str, Any]):
        super().__init__(config)
        self._labels = [str(i) for i in range(self.data.num_classes)]  # or a checkpoint's

    def _make(self, n: int, gen: torch.Generator, weight: Tensor) -> list[HeteroData]:
        graphs = []
        for _ in range(n):
            length = int(torch.randint(3, 9, (1,), generator=gen))
            x = torch.randn(length, FEATURES, generator=gen)
            split = int(torch.randint(1, length, (1,), generator=gen))
            y = int((weight @ x.mean(0)).argmax())
            graphs.append(toy_graph(x, [split, length - split], y))
        return graphs

    def datasets(self) -> dict[str, list[HeteroData]]:
        signal_self_at("datasets")
        d = self.data
        if d.file:
            datafiles.locate(d.file, d.root, download=False)
        gen = torch.Generator().manual_seed(d.seed)
        weight = torch.randn(d.num_classes, FEATURES, generator=gen)
        sizes = {"train": d.n_train, "dev": d.n_dev, "test": d.n_test}
        return {split: ToySplit(self._make(n, gen, weight), f"toy-{d.seed}-{split}-{n}") for split, n in sizes.items()}

    def label_names(self) -> list[str]:
        return self._labels

    def store_run_files(self, run_dir: Path) -> None:
        signal_self_at("results")
        super().store_run_files(run_dir)

    def get_extra_state(self) -> dict[str, Any]:
        return {"labels": self.label_names()}

    def set_extra_state(self, state: dict[str, Any]) -> None:
        self._labels = list(state["labels"])

    def encode(self, text: str, text_b: str | None = None) -> HeteroData:
        chars = [c for c in text + (text_b or "") if not c.isspace()]
        if not chars:
            raise ValueError("empty input")
        codes = torch.tensor([ord(c) for c in chars], dtype=torch.float)
        x = torch.stack([torch.sin(codes * (k + 1)) for k in range(FEATURES)], -1)
        half = max(1, len(chars) // 2)
        return toy_graph(x, [half, len(chars) - half] if len(chars) > half else [half])

    def build_model(self) -> torch.nn.Module:
        m = self.model
        return ToyModel(m.hidden, len(self.label_names()), m.dropout, m.encoder_layers)

    def encoder_parameters(self, model: torch.nn.Module) -> list[torch.nn.Parameter]:
        return [*model.encoder.parameters(), *model.encoder_stack.parameters()]

    def encoder_layers(self, model: torch.nn.Module) -> list[list[torch.nn.Parameter]]:
        return [list(model.encoder.parameters()), *(list(layer.parameters()) for layer in model.encoder_stack)]

    def loss(self, out: Tensor, batch: Any) -> Tensor:
        return F.cross_entropy(out, batch.y)

    def decode(self, out: Tensor, batch: Any) -> list[dict[str, Any]]:
        prob, pred = out.softmax(-1).max(-1)
        gold = batch.y.tolist() if "y" in batch else [None] * len(pred)
        names = self.label_names()
        return [
            {"pred": names[p], "gold": None if g is None else names[g], "prob": float(q)}
            for p, g, q in zip(pred.tolist(), gold, prob.tolist(), strict=True)
        ]

    def explain(self, model: torch.nn.Module, data: HeteroData) -> dict[str, Any]:
        with torch.no_grad():
            norms = model.encoder(data["token"].x).relu().norm(dim=-1)
        weights = (norms / norms.sum().clamp(min=1e-9)).tolist()
        return {"tokens": [str(i) for i in range(len(weights))], "weights": weights, "entity_tokens": [[], []],
                "type_weights": None, "title": "feature norms"}
