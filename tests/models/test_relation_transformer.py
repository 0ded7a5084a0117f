import pytest
import torch
from torch_geometric.loader import DataLoader

from graphmatch.graphs.relation import RelationGraphBuilder, WordPieces
from graphmatch.models.relation_transformer import RelationTransformer, pack_pairs

TEXTS = [
    "The <e1>company</e1> fabricates plastic <e2>chairs</e2>.",
    "The <e1>child</e1> was carefully wrapped and bound into the <e2>cradle</e2> by means of a cord.",
    "<e1>Audits</e1> were about <e2>waste</e2>.",
    "The <e1>author</e1> of a keygen uses a <e2>disassembler</e2> to look at the raw assembly code.",
    "The <e1>big red car</e1> hit <e2>it</e2>",
]


@pytest.fixture(scope="module")
def graphs(tmp_path_factory):
    from tiny_bert import tiny_bert_folder

    folder = tiny_bert_folder(tmp_path_factory.mktemp("bert"), TEXTS)
    pieces = WordPieces.from_pretrained(folder)
    builder = RelationGraphBuilder.for_pieces(pieces, max_distance=5)
    return folder, [builder(t, label=i % 3) for i, t in enumerate(TEXTS)]


def _model(folder, head, **kw):
    from transformers import BertModel

    torch.manual_seed(0)
    encoder = BertModel.from_pretrained(str(folder), add_pooling_layer=False)
    return RelationTransformer(encoder, 3, head=head, num_positions=11, position_dim=4, attention_size=6, **kw).eval()


def test_pack_pairs_puts_the_longest_with_the_shortest():
    row, offset, width = pack_pairs(torch.tensor([5, 9, 2, 7, 4]))
    # by length: 9 (s1), 7 (s3), 5 (s0), 4 (s4), 2 (s2) -> rows (s1, s2), (s3, s4), (s0)
    assert row.tolist() == [2, 0, 0, 1, 1] and offset.tolist() == [0, 0, 9, 0, 7] and width == 11
    row, offset, width = pack_pairs(torch.tensor([3]))
    assert row.tolist() == [0] and offset.tolist() == [0] and width == 3


@pytest.mark.parametrize("head", ["entity_start", "entity_attention"])
def test_packed_equals_padded_equals_one_by_one(graphs, head):
    folder, gs = graphs
    model = _model(folder, head)
    batch = next(iter(DataLoader(gs, batch_size=len(gs))))
    packed = model(batch)
    assert packed.shape == (5, 3)
    model.pack = False
    padded = model(batch)
    singles = torch.cat([model(g) for g in gs])
    assert torch.allclose(packed, padded, atol=1e-5) and torch.allclose(packed, singles, atol=1e-5)
    model.pack = True
    states = model.encode(batch)
    model.pack = False
    assert torch.allclose(states, model.encode(batch), atol=1e-5)  # every token's state, not just the heads'


def test_entity_attention_returns_normalised_weights(graphs):
    folder, gs = graphs
    model = _model(folder, "entity_attention")
    batch = next(iter(DataLoader(gs, batch_size=len(gs))))
    logits, att = model(batch, return_attention=True)
    sums = torch.zeros(5).index_add(0, batch["token"].batch, att["token"])
    assert torch.allclose(sums, torch.ones(5), atol=1e-5) and att["types"].shape == (5, 2, 3)


def test_entity_start_reads_the_opening_markers(graphs):
    folder, gs = graphs
    model = _model(folder, "entity_start")
    batch = next(iter(DataLoader(gs[:2], batch_size=2)))
    h = model.encode(batch)
    seen = {}
    model.head.forward = lambda cls, entity: seen.update(cls=cls, entity=entity) or torch.zeros(2, 3)
    model(batch)
    src = batch["token", "starts", "entity"].edge_index[0]
    assert torch.allclose(seen["entity"], h[src]) and torch.allclose(seen["cls"], h[batch["token"].ptr[:-1]])
    no_markers = batch.clone()
    del no_markers["token", "starts", "entity"]
    with pytest.raises(ValueError, match="needs graphs built with entity markers"):
        model(no_markers)


@pytest.mark.parametrize("head", ["entity_start", "entity_attention"])
def test_learns_a_small_set(graphs, head):
    folder, gs = graphs
    model = _model(folder, head, dropout=0.0).train()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    loader = DataLoader(gs, batch_size=5)
    for _ in range(30):
        for b in loader:
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(b), b.y).backward()
            opt.step()
    model.eval()
    batch = next(iter(loader))
    assert model(batch).argmax(-1).tolist() == batch.y.tolist()
