"""Training, evaluation and prediction of any registered task on PyTorch Lightning.

Public entry points (imported lazily, so that importing the package stays light)::

    from graphmatch.engine import train, evaluate, predict, load, resolve
    run_dir = train("kbert/chnsenticorp_hownet_quick", ["train.epochs=1"])
    evaluate(run_dir, split="test")          # {"accuracy": ...}
    task, model = load(run_dir)
"""

from __future__ import annotations

from typing import Any

__all__ = ["train", "evaluate", "predict", "predict_graph", "load", "resolve"]


def __getattr__(name: str) -> Any:
    if name in ("train", "evaluate", "predict", "predict_graph", "load"):
        from graphmatch.engine import runner

        return getattr(runner, name)
    if name == "resolve":
        from graphmatch.tasks.recipes.resolve import resolve

        return resolve
    raise AttributeError(f"module 'graphmatch.engine' has no attribute {name!r}")
