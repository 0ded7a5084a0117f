"""Small relation graphs and dense references of the formulas, shared by the relation model tests."""

import torch
from torch_geometric.loader import DataLoader

from graphmatch.graphs.relation import RelationGraphBuilder, parse_relation
from graphmatch.graphs.relation_options import RelationOptions
from graphmatch.text.vocab import Vocab

TEXTS = [
    "The <e1>company</e1> fabricates plastic <e2>chairs</e2>.",
    "The <e1>child</e1> was carefully wrapped and bound into the <e2>cradle</e2> by means of a cord.",
    "The <e1>author</e1> of a keygen uses a <e2>disassembler</e2> to look at the raw assembly code.",
    "<e1>Audits</e1> were about <e2>waste</e2>.",
    "A few days before the service , Tom had thrown into Karen 's <e1>casket</e1> his wedding <e2>ring</e2> .",
    "The <e1>big red car</e1> hit <e2>it</e2>",
]


def relation_batch(max_distance: int = 5):
    vocab = Vocab.build(parse_relation(t).tokens for t in TEXTS)
    builder = RelationGraphBuilder(vocab, RelationOptions(max_distance=max_distance))
    graphs = [builder(t, label=i) for i, t in enumerate(TEXTS)]
    batch = next(iter(DataLoader(graphs, batch_size=len(graphs))))
    return vocab, builder, graphs, batch


def fit_and_predict(model, graphs, lr: float, epochs: int = 40) -> tuple[list[int], list[int]]:
    """Train ``model`` on ``graphs`` with Adam and return (predicted, gold) labels for all of them."""
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    loader = DataLoader(graphs, batch_size=3, shuffle=True)
    for _ in range(epochs):
        for b in loader:
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(b), b.y).backward()
            opt.step()
    model.eval()
    batch = next(iter(DataLoader(graphs, batch_size=len(graphs))))
    return model(batch).argmax(-1).tolist(), batch.y.tolist()


def assert_batch_equals_singles(model, graphs, batch, keys=("token",)) -> None:
    """Logits and attention of a batch equal those of each graph run alone (``keys`` are the
    attention outputs to compare: per-token ``"token"``, per-sentence ones otherwise)."""
    logits, att = model(batch, return_attention=True)
    ptr = batch["token"].ptr
    for k, g in enumerate(graphs):
        single, single_att = model(g, return_attention=True)
        assert torch.allclose(logits[k], single[0], atol=1e-5)
        for key in keys:
            mine = att[key][ptr[k]:ptr[k + 1]] if key == "token" else att[key][k]
            theirs = single_att[key] if key == "token" else single_att[key][0]
            assert torch.allclose(mine, theirs, atol=1e-5)


# ---------------------------------------------------------------- dense references of the formulas
class Scale(torch.nn.Module):
    """A deterministic stand-in for a dropout module: multiplies by ``c`` (``drop(x) = c·x`` in a
    reference) and records the shapes it was applied to, so a test can tell where a model applies
    each of its dropouts (scaling commutes with pooling; the shape tells per-token from per-sentence)."""

    def __init__(self, c: float):
        super().__init__()
        self.c = c
        self.shapes: list[tuple[int, ...]] = []

    def forward(self, x):
        self.shapes.append(tuple(x.shape))
        return self.c * x


def lstm_dense(x, w_ih, w_hh, b_ih, b_hh, reverse: bool = False):
    """One LSTM direction over ``x`` [L, F], step by step with the gate equations
    (gates in PyTorch's order: input, forget, cell, output)."""
    hidden = w_hh.size(1)
    h, c = x.new_zeros(hidden), x.new_zeros(hidden)
    out = [None] * x.size(0)
    steps = range(x.size(0) - 1, -1, -1) if reverse else range(x.size(0))
    for t in steps:
        i, f, g, o = (w_ih @ x[t] + b_ih + w_hh @ h + b_hh).chunk(4)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        out[t] = h
    return torch.stack(out)


def bilstm_dense(lstm, x_fw, x_bw=None):
    """Forward and backward states [L, H] of a ``torch.nn.LSTM(bidirectional=True)``'s weights,
    the backward direction reading ``x_bw`` (default: the same input)."""
    p = dict(lstm.named_parameters())
    fw = lstm_dense(x_fw, p["weight_ih_l0"], p["weight_hh_l0"], p["bias_ih_l0"], p["bias_hh_l0"])
    bw = lstm_dense(x_fw if x_bw is None else x_bw, p["weight_ih_l0_reverse"], p["weight_hh_l0_reverse"],
                    p["bias_ih_l0_reverse"], p["bias_hh_l0_reverse"], reverse=True)
    return fw, bw


def multihead_dense(mha, x):
    """Scaled dot-product self-attention of ``torch.nn.MultiheadAttention``'s weights over ``x``
    [L, E]: per head softmax(q kᵀ / √d) v, heads concatenated, then the output projection."""
    e, heads = mha.embed_dim, mha.num_heads
    q, k, v = (x @ mha.in_proj_weight[j * e:(j + 1) * e].t() + mha.in_proj_bias[j * e:(j + 1) * e] for j in range(3))
    d = e // heads
    out = []
    for j in range(heads):
        sl = slice(j * d, (j + 1) * d)
        out.append(torch.softmax(q[:, sl] @ k[:, sl].t() / d**0.5, dim=-1) @ v[:, sl])
    return mha.out_proj(torch.cat(out, dim=-1))
