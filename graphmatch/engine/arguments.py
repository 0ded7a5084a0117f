"""A command's arguments checked before torch and Lightning are imported (``graphmatch evaluate``
and ``predict``; ``train`` checks its recipe with :func:`graphmatch.engine.runs.folder.plan`).

Every check here reads only files (a run folder's ``config.yaml``, the recipe keys' declarations,
:mod:`graphmatch.tasks.keys`), so a bad ``--set``, a run folder that is not there or a missing
input file is refused in a fraction of a second; the command repeats the checks that need the
checkpoint itself once torch is loaded.
"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from graphmatch.engine.runs import read_yaml
from graphmatch.tasks.recipes.resolve import check_run_overrides, diff, resolve


def run_path(run_or_ckpt: str | os.PathLike) -> Path:
    """``run_or_ckpt`` when it is a run folder or a file; the error of a missing one
    (:func:`graphmatch.engine.runs.checkpoint.find_checkpoint`'s) otherwise."""
    path = Path(run_or_ckpt)
    if not path.exists():
        raise FileNotFoundError(f"no run folder or checkpoint at {path}")
    return path


def run_folders(run_or_ckpt: str | os.PathLike) -> list[Path]:
    """The run folders ``run_or_ckpt`` belongs to (resolved): the folder given, or the folder of
    the checkpoint given where it is a run folder (it holds ``config.yaml``), and the folder of
    several seeds (``seeds.json``) that holds it."""
    path = Path(run_or_ckpt).resolve()
    folder = path if path.is_dir() else path.parent
    if not path.is_dir() and not (folder / "config.yaml").is_file():
        return []
    return [folder, *([folder.parent] if (folder.parent / "seeds.json").is_file() else [])]


def check_output(flag: str, output: str | os.PathLike | None, run_or_ckpt: str | os.PathLike,
                 inputs: Iterable[str | os.PathLike | None] = (), owned: str | None = None) -> None:
    """Refuse an ``output`` path that would overwrite what the command reads or what the run
    holds: one of ``inputs``, a checkpoint (``*.ckpt``, anywhere), or a file of the run folder
    other than the one the command owns there (``owned``, a name in the folder of the checkpoint)."""
    if output is None or str(output) == "-":
        return
    out = Path(output)
    target = out.resolve()
    if out.suffix == ".ckpt" or target.suffix == ".ckpt":
        raise ValueError(f"{flag} {output} is a checkpoint; give another file to write (e.g. OUT.jsonl)")
    for given in inputs:
        if given is not None and str(given) != "-" and (
                target == Path(given).resolve() or (out.exists() and Path(given).exists() and out.samefile(given))):
            raise ValueError(f"{flag} {output} is the input file {given}; give another file to write")
    folders = run_folders(run_or_ckpt)
    for folder in folders:
        if target.is_relative_to(folder) and not (owned is not None and target == folders[0] / owned):
            mine = f", or its {owned}" if owned is not None else ""
            raise ValueError(f"{flag} {output} is inside the run folder {folder}, which holds what the run keeps; "
                             f"write it elsewhere{mine}")


def check_evaluate(run_or_ckpt: str | os.PathLike, split: str, overrides: Sequence[str],
                   predictions: str | os.PathLike | None) -> None:
    """What :func:`graphmatch.engine.runs.restore.evaluate` refuses that the run folder's
    ``config.yaml`` shows: a bad ``--split``, ``--predictions`` at a folder, a missing run, an
    unknown or bad ``--set`` key, a ``model.`` key changed, ``--predictions`` over a checkpoint or a
    file of the run (:func:`check_output`; the data files are checked once the task is loaded)."""
    if split not in ("dev", "test"):
        raise ValueError(f"--split must be dev or test, got {split!r}")
    if predictions is not None and Path(predictions).is_dir():
        raise ValueError(f"--predictions {predictions} is a folder; give the file to write (e.g. OUT.jsonl)")
    path = run_path(run_or_ckpt)
    check_output("--predictions", predictions, path, owned=f"predictions_{split}.jsonl")
    stored = path / "config.yaml"
    if path.is_dir() and stored.is_file() and overrides:
        saved = read_yaml(stored)
        check_run_overrides(overrides, saved.get("task") if isinstance(saved, dict) else None)
        given = resolve(saved, overrides, stored=True)  # first: --set task= may import the run's task
        changed = [k for k in diff(resolve(saved, stored=True), given) if k.startswith("model.")]
        if changed:
            raise ValueError(f"model keys cannot change when evaluating a checkpoint: {', '.join(changed)}")


def check_predict(run_or_ckpt: str | os.PathLike, input_file: str | None, output: str | None,
                  calibrate: str | None = None) -> None:
    """What ``graphmatch predict`` refuses without its model: a missing run, a missing
    ``--input`` or ``--calibrate`` file, ``--output`` at a folder, over an input, a checkpoint or a
    file of the run (:func:`check_output`)."""
    run_path(run_or_ckpt)
    if calibrate == "-":
        raise ValueError("--calibrate reads a file, not stdin")
    for path in (input_file, calibrate):
        if path is not None and path != "-":  # the errors open() gives (one line each, cli.main)
            if not Path(path).exists():
                raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
            if Path(path).is_dir():
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    if output is not None and output != "-" and Path(output).is_dir():
        raise ValueError(f"--output {output} is a folder; give the file to write (e.g. OUT.jsonl)")
    check_output("--output", output, run_or_ckpt, [input_file, calibrate])


#: ``--smooth-alpha``'s default: how much of each input range smoothing moves into the weights
#: (:mod:`graphmatch.engine.inference.quantize`)
SMOOTH_ALPHA = 0.8


def check_smoothing(calibrate: bool, quantize: str | None, alpha: float) -> None:
    """``--calibrate`` only with ``--quantize``; ``--smooth-alpha`` in [0, 1]."""
    if calibrate and quantize is None:
        raise ValueError("--calibrate smooths the layers of --quantize: give --quantize int8 with it")
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"--smooth-alpha must be in [0, 1], got {alpha:g}")


def check_precision(precision: str | None, quantize: str | None = None) -> None:
    """``--precision``: one of :data:`~graphmatch.engine.training.precision.INFERENCE_PRECISIONS`, and not
    bf16 with ``--quantize`` (an int8 model runs in int8 and fp32)."""
    from graphmatch.engine.training.precision import INFERENCE_PRECISIONS

    if precision is None:
        return
    if precision not in INFERENCE_PRECISIONS:
        raise ValueError(f"--precision must be one of {', '.join(INFERENCE_PRECISIONS)}, got {precision!r}")
    if quantize is not None and precision == "bf16-mixed":
        raise ValueError("--precision bf16-mixed and --quantize both set what the linear layers run in: give one")


def check_keep_fp32(pattern: str | None, quantize: str | None) -> None:
    """``--keep-fp32``: a regular expression, and only with ``--quantize``."""
    if pattern is None:
        return
    if quantize is None:
        raise ValueError("--keep-fp32 keeps layers out of --quantize: give --quantize int8 with it")
    try:
        re.compile(pattern)
    except re.error as err:
        raise ValueError(f"--keep-fp32 {pattern!r} is not a regular expression: {err}") from None
