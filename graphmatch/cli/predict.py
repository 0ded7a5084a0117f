"""``graphmatch predict RUN_OR_CKPT "text" ["text_b"]``: label and probability of one input, under a
header line (``label\tprobability``), or one JSON line with ``--json``;
``graphmatch predict RUN_OR_CKPT --input FILE [--output OUT.jsonl]``: one JSON line per input line
(:class:`graphmatch.engine.inference.predictor.Predictor`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "predict",
        help="predict the label of one text (or text pair), or of every line of a file, with a trained run",
        description="Prints the predicted label and its probability (tags for tagging tasks) under a header "
                    "line, or one JSON line with --json; with --input, "
                    "one JSON line per input line (label, probabilities and, for K-BERT, the injected entities).",
    )
    p.add_argument("run", metavar="RUN_OR_CKPT", help="run folder (uses its best.ckpt) or checkpoint file")
    p.add_argument("text", nargs="?")
    p.add_argument("text_b", nargs="?", help="second text of a pair")
    p.add_argument("--json", action="store_true", help="one JSON line (label, prob) instead of the header and row")
    p.add_argument("--show", metavar="OUT.png", help="also draw the input graph (PNG, or HTML for .html)")
    p.add_argument("--explain", metavar="OUT.png", help="also draw what the model attends to (task.explain)")
    p.add_argument("--input", metavar="FILE", help="TSV/CSV/JSONL file of inputs (the task's columns), or - for stdin")
    p.add_argument("--output", metavar="OUT.jsonl", help="where the JSON lines go (written whole or not at all); "
                                                         "default stdout")
    p.add_argument("--batch-size", type=int, default=64, help="inputs per batch (length-sorted; default 64)")
    p.add_argument("--quantize", choices=["int8", "int8-per-tensor"],
                   help="int8 dynamic quantization of the linear layers (CPU): int8 scales the weights per output "
                        "channel, int8-per-tensor per matrix (less accurate)")
    p.add_argument("--keep-fp32", metavar="PATTERN",
                   help="with --quantize: linear layers whose name this regular expression finds stay fp32 "
                        "(e.g. 'output.dense'; benchmarks/int8_sensitivity.py ranks them)")
    p.add_argument("--calibrate", metavar="FILE",
                   help="with --quantize: smooth the int8 layers (move each layer's input range into its weights, "
                        "SmoothQuant), the ranges read from the first 256 inputs of FILE (e.g. the training file; "
                        "a relative FILE not in the working folder is looked up under $GRAPHMATCH_DATA)")
    p.add_argument("--smooth-alpha", type=float, default=None, metavar="A",
                   help="with --calibrate: the share of the range moved, 0 to 1 (default 0.8)")
    p.add_argument("--precision", choices=["auto", "32-true", "bf16-mixed"],
                   help="what the model runs in on the CPU (default: the run's train.precision; auto = bf16-mixed "
                        "where the CPU has bf16 units, else 32-true)")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True,
                   help="progress bar on stderr (default on)")
    p.set_defaults(func=run)


def run_file(args: argparse.Namespace) -> int:
    """``--input``: every line predicted in length-sorted batches, written in input order (without
    gradients inside :meth:`Predictor.predict`; the process's grad mode is left as it was)."""
    from graphmatch.engine.inference.predictor import Predictor, write_jsonl

    predictor = Predictor.from_run(args.run, batch_size=args.batch_size, quantize=args.quantize,
                                  keep_fp32=args.keep_fp32, calibrate=args.calibrate, alpha=_alpha(args),
                                  precision=args.precision)
    rows = predictor.predict_file(args.input, progress=args.progress)
    write_jsonl(rows, args.output)
    metrics = predictor.metrics(rows)  # the file had the gold labels: scored as evaluate does
    if metrics is not None:
        scored = sum("gold" in row and predictor.known_gold(row) for row in rows)
        print(f"{scored} gold labels: " + "  ".join(f"{k} {v:.2f}" for k, v in metrics.items()), file=sys.stderr)
    return 0


def _alpha(args: argparse.Namespace) -> float:
    from graphmatch.engine.arguments import SMOOTH_ALPHA

    return SMOOTH_ALPHA if args.smooth_alpha is None else args.smooth_alpha


def run(args: argparse.Namespace) -> int:
    from graphmatch.engine.arguments import (  # no torch: arguments refused at once
        check_keep_fp32,
        check_precision,
        check_predict,
        check_smoothing,
    )

    if args.input is not None and (args.text is not None or args.show or args.explain):
        raise ValueError("--input predicts a file: give no text, --show or --explain with it")
    if args.input is None and args.text is None:
        raise ValueError("give a text to predict, or --input FILE")
    if args.calibrate not in (None, "-"):  # relative: the working folder, then $GRAPHMATCH_DATA, as data files are
        from graphmatch.io.datafiles import resolve_path

        args.calibrate = str(resolve_path(args.calibrate, what="--calibrate file"))
    check_predict(args.run, args.input, args.output, args.calibrate)
    check_keep_fp32(args.keep_fp32, args.quantize)
    check_precision(args.precision, args.quantize)
    if args.smooth_alpha is not None and args.calibrate is None:
        raise ValueError("--smooth-alpha sets the smoothing of --calibrate: give --calibrate FILE with it")
    check_smoothing(args.calibrate is not None, args.quantize, _alpha(args))
    if args.calibrate is not None and args.input is None:
        raise ValueError("--calibrate smooths the int8 layers of --input's prediction: give --input FILE with it")
    if args.input is not None:
        return run_file(args)
    from graphmatch.engine.runs.restore import load, predict_graph

    task, model = load(args.run)
    data = task.encode(args.text, args.text_b)
    row = predict_graph(task, model, data, precision=args.precision)
    pred = row["pred"]
    label = " ".join(map(str, pred)) if isinstance(pred, list) else str(pred)
    prob = row.get("prob")
    if args.json:
        print(json.dumps({"label": pred, "prob": prob} if prob is not None else {"label": pred}, ensure_ascii=False))
    elif isinstance(prob, (int, float)):
        print(f"label\tprobability\n{label}\t{prob:.4f}")
    else:
        print(f"{'tags' if isinstance(pred, list) else 'label'}\n{label}")
    if args.show:
        from graphmatch.viz import HTML_SUFFIXES, draw_graph, write_html
        from graphmatch.viz.titles import prediction_title

        title = prediction_title(args.text, args.text_b, label, prob if isinstance(prob, (int, float)) else None)
        draw = write_html if Path(args.show).suffix.lower() in HTML_SUFFIXES else draw_graph
        draw(task.encode_with_text(args.text, args.text_b), args.show, title=title)
        print(f"input graph: {args.show}", file=sys.stderr)
    if args.explain:
        from graphmatch.viz.attention import draw_token_attention

        try:
            explanation = task.explain(model, data)
        except NotImplementedError as err:
            raise ValueError(str(err)) from err
        draw_token_attention(**explanation, path=args.explain)
        print(f"explanation: {args.explain}", file=sys.stderr)
    return 0
