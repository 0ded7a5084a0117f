"""``graphmatch predict RUN_OR_CKPT "text" ["text_b"]``: label and probability of one input."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "predict",
        help="predict the label of one text (or text pair) with a trained run",
        description="Prints the predicted label and its probability (tags for tagging tasks).",
    )
    p.add_argument("run", metavar="RUN_OR_CKPT", help="run folder (uses its best.ckpt) or checkpoint file")
    p.add_argument("text")
    p.add_argument("text_b", nargs="?", help="second text of a pair")
    p.add_argument("--show", metavar="OUT.png", help="also draw the input graph (PNG, or HTML for .html)")
    p.add_argument("--explain", metavar="OUT.png", help="also draw what the model attends to (task.explain)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from graphmatch.engine import load, predict_graph

    task, model = load(args.run)
    data = task.encode(args.text, args.text_b)
    row = predict_graph(task, model, data)
    pred = row["pred"]
    label = " ".join(map(str, pred)) if isinstance(pred, list) else str(pred)
    prob = row.get("prob")
    print(f"{label}\t{prob:.4f}" if isinstance(prob, (int, float)) else label)
    if args.show:
        from graphmatch.viz.titles import input_title

        if Path(args.show).suffix.lower() in (".html", ".htm"):
            from graphmatch.viz import write_html

            write_html(data, args.show, title=input_title(args.text, args.text_b))
        else:
            from graphmatch.viz import draw_graph

            draw_graph(data, args.show, title=input_title(args.text, args.text_b))
        print(f"input graph: {args.show}")
    if args.explain:
        from graphmatch.viz.attention import draw_token_attention

        try:
            explanation = task.explain(model, data)
        except NotImplementedError as err:
            raise ValueError(str(err)) from err
        draw_token_attention(**explanation, path=args.explain)
        print(f"explanation: {args.explain}")
    return 0
