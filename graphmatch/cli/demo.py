"""``graphmatch demo``: the whole way through on the project's own sample data, offline.

1. builds K-BERT sentence trees for sample sentences with the sample knowledge graph and prints
   what the model is given (tokens, soft positions, branches);
2. trains a small K-BERT from scratch on the sample sentiment set through the engine;
3. evaluates the best-on-dev checkpoint on the sample test set;
4. draws the input graph of a sentence (PNG with the visible matrix, and interactive HTML).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from graphmatch.io.datafiles import samples_dir

SAMPLES = samples_dir()
SENTENCES = ("酒店的房间很干净，早餐也不错。", "手机电池不耐用，很失望。", "我在北京吃苹果")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="build graphs, train and evaluate a small K-BERT on the sample data, draw a graph",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="demo_out", help="output folder (default: demo_out)")
    p.add_argument("--samples", default=str(SAMPLES), help="the sample data folder (default: datasets/samples)")
    p.add_argument("--epochs", type=int, default=12, help="training epochs (default: 12)")
    p.add_argument("--no-progress", action="store_true", help="hide progress bars")
    p.set_defaults(func=run)


def _describe(data) -> str:
    tokens, pos, branch = data["token"].text, data["token"].pos.tolist(), data["token"].branch.tolist()
    shown = [f"{t}{'*' if b else ''}:{p}" for t, p, b in zip(tokens, pos, branch, strict=True)]
    return " ".join(shown)


def run(args: argparse.Namespace) -> int:
    from graphmatch.engine import evaluate, train
    from graphmatch.graphs.kbert import SentenceTreeBuilder, TreeOptions, visible_edge_index
    from graphmatch.knowledge import KnowledgeGraph
    from graphmatch.text import CharTokenizer
    from graphmatch.viz import save_picture

    samples, out = Path(args.samples), Path(args.out)
    sentiment, kg_path = samples / "sentiment", samples / "kg" / "sample.spo"
    if not (sentiment / "train.tsv").is_file():
        raise FileNotFoundError(f"sample data not found under {samples} (pass --samples DIR)")
    out.mkdir(parents=True, exist_ok=True)
    start = time.time()

    # a character vocabulary of the sample data: the demo needs no download
    texts = [line for f in sorted(sentiment.glob("*.tsv")) for line in f.read_text(encoding="utf-8").splitlines()]
    texts += [kg_path.read_text(encoding="utf-8"), *SENTENCES]
    tokenizer = CharTokenizer.from_texts(texts)
    vocab = out / "vocab.txt"
    vocab.write_text("\n".join(tokenizer.id_to_token(i) for i in range(len(tokenizer))) + "\n", encoding="utf-8")

    print("== 1. K-BERT sentence trees (token:soft position, * = injected from the KG)")
    kg = KnowledgeGraph.from_spo(kg_path)
    builder = SentenceTreeBuilder(kg, tokenizer, TreeOptions(max_length=64), keep_text=True)
    graphs = [builder(s) for s in SENTENCES]
    for sentence, data in zip(SENTENCES, graphs, strict=True):
        print(f"  {sentence}\n    {_describe(data)}")

    print("\n== 2. Training a small K-BERT from scratch on the sample sentiment set")
    recipe = {
        "task": "kbert",
        "name": "demo",
        "data": {"dataset": str(sentiment), "kg": str(kg_path), "vocab": str(vocab), "max_length": 64},
        "model": {"hidden_size": 64, "num_layers": 2, "num_heads": 4, "intermediate_size": 128,
                  "max_position": 64, "dropout": 0.1, "attention_dropout": 0.0},
        "optim": {"lr": 2e-3, "warmup": 0.1},
        "train": {"batch_size": 16, "epochs": args.epochs, "seed": 7, "progress": not args.no_progress},
    }
    run_dir = train(recipe, run_dir=out / "run")
    metrics = json.loads((run_dir / "metrics.json").read_text())

    print("\n== 3. Evaluation of the best-on-dev checkpoint")
    test = evaluate(run_dir, split="test")
    print(f"  dev accuracy {metrics['dev']['accuracy']:.1f} %   test accuracy {test['accuracy']:.1f} %")

    print("\n== 4. Pictures of an input graph")
    png = save_picture(graphs[0], out / "kbert_graph.png", title=SENTENCES[0], visible=visible_edge_index(graphs[0]))
    html = save_picture(graphs[0], out / "kbert_graph.html", title=SENTENCES[0])
    print(f"  {png}\n  {html}")
    print(f"\nDone in {time.time() - start:.0f} s. Run folder: {run_dir} (metrics.json, curve.png, summary.md)")
    return 0
