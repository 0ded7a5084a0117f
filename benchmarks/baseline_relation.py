"""Plain PyTorch baselines of the two SemEval-2010 Task 8 relation models, for equal-budget comparisons.

Att-BLSTM (Zhou et al., 2016) and the entity-aware BiLSTM with latent entity types (Lee et al.,
2019) written as plainly as possible, following their official TensorFlow code: padded batches
with a length mask, Keras initialisation (embeddings U(-0.25, 0.25), Glorot-normal kernels,
forget-gate bias 1), dropout on the embeddings, on the LSTM inputs (one mask per direction) and
before the classifier, L2 over every parameter, AdaDelta (lr 1.0, rho 0.9, eps 1e-6) with
gradients clipped to [-1, 1], the entity state at the entity's last token. No graphmatch model,
layer, task or engine code is used: only graphmatch's SemEval reader (same tokens, same 800
held-out dev sentences, vocabulary from the training split) and its port of the official scorer,
so data and metric are identical to ``graphmatch train``. The checkpoint (epoch) is selected on
dev; test is scored once with it. ``--out`` receives ``metrics.json`` and ``history.json`` with
the keys of a graphmatch run folder.

    PYTHONPATH=. python benchmarks/baseline_relation.py att_blstm --epochs 17 --seed 42 \\
        --data-dir $GRAPHMATCH_DATA --out runs/baseline-att_blstm-s42
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from graphmatch.data.relation_formats import SEMEVAL_LABELS, RelationExample
from graphmatch.data.semeval import TEST_FILE, TRAIN_FILE, dev_ids, read_semeval_file
from graphmatch.graphs.relation import RelationSentence, tokenize_marked, with_markers
from graphmatch.io.datafiles import locate
from graphmatch.metrics.semeval import semeval_official_score

SETTINGS = {  # the official code's defaults
    "att_blstm": dict(batch_size=10, embedding_dim=100, hidden_size=100),
    "entity_attention": dict(batch_size=20, embedding_dim=300, hidden_size=300),
}
MAX_DISTANCE = 50


def glorot_(w: torch.Tensor, fan_in: int, fan_out: int) -> None:
    """Keras' glorot_normal: a normal truncated at two standard deviations."""
    std = math.sqrt(2.0 / (fan_in + fan_out)) / 0.87962566103423978
    nn.init.trunc_normal_(w, 0.0, std, -2 * std, 2 * std)


def keras_lstm(n_in: int, hidden: int) -> nn.LSTM:
    """One LSTM direction as TensorFlow's LSTMCell: one [in + h, 4h] Glorot kernel, forget bias 1."""
    lstm = nn.LSTM(n_in, hidden, batch_first=True)
    for name, p in lstm.named_parameters():
        if name.startswith("weight"):
            glorot_(p, n_in + hidden, 4 * hidden)
        else:
            nn.init.zeros_(p)
            if name.startswith("bias_ih"):
                p.data[hidden : 2 * hidden] = 1.0  # forget gate
    return lstm


def run_lstm(lstm: nn.LSTM, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    return pad_packed_sequence(lstm(packed)[0], batch_first=True, total_length=x.size(1))[0]


def reverse(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Each sequence reversed within its length (padding stays in place)."""
    t = torch.arange(x.size(1))
    order = torch.where(t < lengths[:, None], lengths[:, None] - 1 - t, t)
    return x.gather(1, order.unsqueeze(-1).expand_as(x))


def bilstm(fw: nn.LSTM, bw: nn.LSTM, x: torch.Tensor, lengths: torch.Tensor, p: float, training: bool):
    """Forward and backward states; each direction gets its own dropout mask on its inputs."""
    x_fw, x_bw = F.dropout(x, p, training), F.dropout(x, p, training)
    return run_lstm(fw, x_fw, lengths), reverse(run_lstm(bw, reverse(x_bw, lengths), lengths), lengths)


class AttBLSTM(nn.Module):
    def __init__(self, vocab: int, classes: int, embedding_dim: int, hidden_size: int, **_):
        super().__init__()
        self.emb = nn.Embedding(vocab, embedding_dim)
        nn.init.uniform_(self.emb.weight, -0.25, 0.25)
        self.fw, self.bw = keras_lstm(embedding_dim, hidden_size), keras_lstm(embedding_dim, hidden_size)
        self.w = nn.Parameter(torch.empty(hidden_size))
        glorot_(self.w, hidden_size, hidden_size)
        self.out = nn.Linear(hidden_size, classes)
        glorot_(self.out.weight, hidden_size, classes)
        nn.init.zeros_(self.out.bias)

    def forward(self, x, lengths, mask, **_):
        fw, bw = bilstm(self.fw, self.bw, F.dropout(self.emb(x), 0.3, self.training), lengths, 0.3, self.training)
        h = fw + bw
        alpha = torch.softmax((torch.tanh(h) @ self.w).masked_fill(~mask, -math.inf), dim=1)
        r = torch.tanh((alpha.unsqueeze(-1) * h).sum(1))
        return self.out(F.dropout(r, 0.5, self.training))


class EntityAttentionBiLSTM(nn.Module):
    def __init__(self, vocab: int, classes: int, embedding_dim: int, hidden_size: int, positions: int,
                 position_dim: int = 50, heads: int = 4, types: int = 3, attention_size: int = 50, **_):
        super().__init__()
        e, h2 = embedding_dim, 2 * hidden_size
        self.emb = nn.Embedding(vocab, e)
        nn.init.uniform_(self.emb.weight, -0.25, 0.25)
        self.pos = nn.Embedding(positions, position_dim)
        glorot_(self.pos.weight, positions, position_dim)
        self.mha = nn.MultiheadAttention(e, heads, batch_first=True)
        for k in range(3):  # separate Q, K, V dense layers in the official code
            glorot_(self.mha.in_proj_weight.data[k * e : (k + 1) * e], e, e)
        glorot_(self.mha.out_proj.weight, e, e)
        nn.init.zeros_(self.mha.in_proj_bias)
        nn.init.zeros_(self.mha.out_proj.bias)
        self.norm = nn.LayerNorm(e, eps=1e-8)
        self.fw, self.bw = keras_lstm(e, hidden_size), keras_lstm(e, hidden_size)
        self.types = nn.Parameter(torch.empty(types, h2))
        glorot_(self.types, types, h2)
        self.wh = nn.Linear(h2 + 2 * position_dim, attention_size, bias=False)
        self.we = nn.Linear(4 * h2, attention_size, bias=False)
        self.v = nn.Parameter(torch.empty(attention_size))
        self.out = nn.Linear(h2, classes)
        for lin in (self.wh, self.we, self.out):
            glorot_(lin.weight, lin.in_features, lin.out_features)
        glorot_(self.v, attention_size, attention_size)
        nn.init.zeros_(self.out.bias)

    def forward(self, x, lengths, mask, e1, e2, p1, p2, **_):
        emb = F.dropout(self.emb(x), 0.3, self.training)
        att = self.mha(emb, emb, emb, key_padding_mask=~mask, need_weights=False)[0]
        h = torch.cat(bilstm(self.fw, self.bw, self.norm(emb + F.relu(att)), lengths, 0.3, self.training), dim=-1)
        rows = torch.arange(x.size(0))
        ent = torch.stack([h[rows, e1], h[rows, e2]], dim=1)  # [B, 2, 2H] at the entities' last tokens
        typed = torch.softmax(ent @ self.types.t(), dim=-1) @ self.types
        query = self.we(torch.cat([ent, typed], dim=-1).flatten(1))  # [h_e1; t1; h_e2; t2]
        u = torch.tanh(self.wh(torch.cat([h, self.pos(p1), self.pos(p2)], dim=-1)) + query.unsqueeze(1))
        alpha = torch.softmax((u @ self.v).masked_fill(~mask, -math.inf), dim=1)
        return self.out(F.dropout((alpha.unsqueeze(-1) * h).sum(1), 0.5, self.training))


def marked(ex: RelationExample) -> RelationSentence:
    """The example's words (graphmatch's tokenisation) with the four entity markers."""
    return with_markers(tokenize_marked(ex.sentence))


def encode(examples, stoi: dict[str, int]) -> list[dict]:
    """Token ids with the entity markers, the entities' last tokens, positions relative to them."""
    out = []
    for ex in examples:
        sent = marked(ex)
        n, (l1, l2) = len(sent.tokens), (sent.e1[1], sent.e2[1])
        rel = [[min(max(i - last, -MAX_DISTANCE), MAX_DISTANCE) + MAX_DISTANCE for i in range(n)] for last in (l1, l2)]
        out.append(dict(x=[stoi.get(t, 1) for t in sent.tokens], e1=l1, e2=l2, p1=rel[0], p2=rel[1],
                        y=SEMEVAL_LABELS.index(ex.label)))
    return out


def collate(items: list[dict]) -> dict[str, torch.Tensor]:
    lengths = torch.tensor([len(it["x"]) for it in items])
    pad = lambda key: torch.nn.utils.rnn.pad_sequence([torch.tensor(it[key]) for it in items], batch_first=True)  # noqa: E731
    return dict(x=pad("x"), p1=pad("p1"), p2=pad("p2"), lengths=lengths,
                mask=torch.arange(int(lengths.max())) < lengths[:, None],
                e1=torch.tensor([it["e1"] for it in items]), e2=torch.tensor([it["e2"] for it in items]),
                y=torch.tensor([it["y"] for it in items]))


@torch.no_grad()
def evaluate(model: nn.Module, data: list[dict]) -> dict[str, float]:
    model.eval()
    pred = torch.cat([model(**collate(data[k : k + 200])).argmax(-1) for k in range(0, len(data), 200)])
    gold = [it["y"] for it in data]
    return {"semeval2010": semeval_official_score([SEMEVAL_LABELS[p] for p in pred.tolist()],
                                                  [SEMEVAL_LABELS[g] for g in gold]),
            "accuracy": 100.0 * sum(p == g for p, g in zip(pred.tolist(), gold, strict=True)) / len(gold)}


def run(args: argparse.Namespace) -> dict:
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    train_all = read_semeval_file(args.train_file or locate(TRAIN_FILE, args.data_dir))
    held_out = dev_ids(train_all, args.dev_size, 1)
    train_ex = [ex for ex in train_all if ex.sid not in held_out]
    words: dict[str, int] = {}
    for ex in train_ex:
        for t in marked(ex).tokens:
            words[t] = words.get(t, 0) + 1
    stoi = {w: i + 2 for i, w in enumerate(sorted(words, key=lambda w: -words[w]))}  # 0 pad, 1 unknown
    train = encode(train_ex, stoi)
    dev = encode([ex for ex in train_all if ex.sid in held_out], stoi)
    test = encode(read_semeval_file(args.test_file or locate(TEST_FILE, args.data_dir)), stoi)
    s = SETTINGS[args.model]
    cls = AttBLSTM if args.model == "att_blstm" else EntityAttentionBiLSTM
    model = cls(len(stoi) + 2, len(SEMEVAL_LABELS), positions=2 * MAX_DISTANCE + 1, **s)
    opt = torch.optim.Adadelta(model.parameters(), lr=1.0, rho=0.9, eps=1e-6)
    order = torch.Generator().manual_seed(args.seed)
    history, best, best_state, start = [], -1.0, None, time.time()
    for epoch in range(1, args.epochs + 1):
        model.train()
        total = 0.0
        for idx in torch.randperm(len(train), generator=order).split(s["batch_size"]):
            batch = collate([train[i] for i in idx.tolist()])
            loss = F.cross_entropy(model(**batch), batch["y"])
            loss = loss + args.l2 * 0.5 * sum(p.pow(2).sum() for p in model.parameters())
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_value_(model.parameters(), 1.0)
            opt.step()
            total += float(loss.detach()) * len(idx)
        scores = evaluate(model, dev)
        history.append({"epoch": epoch, "train_loss": total / len(train), "dev": scores})
        print(f"epoch {epoch}: loss {total / len(train):.4f}, dev F1 {scores['semeval2010']:.2f}", flush=True)
        if scores["semeval2010"] > best:
            best, best_state, best_epoch = scores["semeval2010"], copy.deepcopy(model.state_dict()), epoch
    train_time = time.time() - start
    model.load_state_dict(best_state)
    return {"task": "relation", "recipe": f"baseline_{args.model}", "seed": args.seed, "monitor": "semeval2010",
            "dev": evaluate(model, dev), "test": evaluate(model, test), "best_epoch": best_epoch,
            "epochs": args.epochs, "time_s": round(train_time, 3), "history": history}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", choices=sorted(SETTINGS))
    parser.add_argument("--epochs", type=int, default=17)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--l2", type=float, default=1e-5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--data-dir", default=None, help="data root holding semeval2010_task8/ ($GRAPHMATCH_DATA)")
    parser.add_argument("--train-file", type=Path, help="instead of TRAIN_FILE.TXT (organisers' format)")
    parser.add_argument("--test-file", type=Path, help="instead of TEST_FILE_FULL.TXT")
    parser.add_argument("--dev-size", type=int, default=800, help="training sentences held out as dev (split seed 1)")
    parser.add_argument("--out", type=Path, required=True, help="folder for metrics.json and history.json")
    args = parser.parse_args(argv)
    result = run(args)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "history.json").write_text(json.dumps(result.pop("history"), indent=2) + "\n")
    (args.out / "metrics.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: result[k] for k in ("dev", "test", "best_epoch", "time_s")}))


if __name__ == "__main__":
    main()
