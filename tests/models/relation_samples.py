"""Small relation graphs shared by the relation model tests."""

from torch_geometric.loader import DataLoader

from graphmatch.graphs.relation import RelationGraphBuilder, parse_relation
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
    builder = RelationGraphBuilder(vocab, max_distance=max_distance)
    graphs = [builder(t, label=i) for i, t in enumerate(TEXTS)]
    batch = next(iter(DataLoader(graphs, batch_size=len(graphs))))
    return vocab, builder, graphs, batch


def fit_and_predict(model, graphs, lr: float, epochs: int = 40) -> tuple[list[int], list[int]]:
    """Train ``model`` on ``graphs`` with Adam and return (predicted, gold) labels for all of them."""
    import torch

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
    import torch

    logits, att = model(batch, return_attention=True)
    ptr = batch["token"].ptr
    for k, g in enumerate(graphs):
        single, single_att = model(g, return_attention=True)
        assert torch.allclose(logits[k], single[0], atol=1e-5)
        for key in keys:
            mine = att[key][ptr[k]:ptr[k + 1]] if key == "token" else att[key][k]
            theirs = single_att[key] if key == "token" else single_att[key][0]
            assert torch.allclose(mine, theirs, atol=1e-5)
