import pytest
import torch
from torch_geometric.loader import DataLoader

from graphmatch.graphs.relation import RelationGraphBuilder, WordPieces
from graphmatch.graphs.relation_options import RelationOptions
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
    builder = RelationGraphBuilder.for_pieces(pieces, RelationOptions(max_distance=5))
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


@pytest.mark.parametrize("knowledge", [False, True])
@pytest.mark.parametrize("head", ["entity_start", "entity_attention"])
def test_learns_a_small_set(graphs, trees, head, knowledge):
    """Plain graphs and knowledge trees (soft positions, visibility) alike."""
    folder, plain = graphs
    model = _model(folder, head, dropout=0.0).train()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    loader = DataLoader(trees if knowledge else plain, batch_size=5)
    for _ in range(30):
        for b in loader:
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(b), b.y).backward()
            opt.step()
    model.eval()
    batch = next(iter(loader))
    assert model(batch).argmax(-1).tolist() == batch.y.tolist()


# ------------------------------------------------------------------ knowledge (sentence trees)
SPO = ("company\ttype\tgroup\ncompany\tis a\tinstitution\nchild\ttype\tperson\ncradle\ttype\tartifact\n"
       "car\ttype\tartifact\n")


def _trees(folder, tmp_path_factory, **kwargs):
    from graphmatch.graphs.relation_kbert import RelationTreeBuilder
    from graphmatch.knowledge import KnowledgeGraph

    spo = tmp_path_factory.mktemp("kg") / "tiny.spo"
    spo.write_text(SPO, encoding="utf-8")
    builder = RelationTreeBuilder(WordPieces.from_pretrained(folder), KnowledgeGraph.load(spo),
                                  RelationOptions(max_distance=5, **kwargs))
    return builder.graphs(TEXTS, [i % 3 for i in range(len(TEXTS))])


@pytest.fixture(scope="module")
def trees(graphs, tmp_path_factory):
    folder, _ = graphs
    return _trees(folder, tmp_path_factory)


def _record_encoder_inputs(model) -> list[dict]:
    seen: list[dict] = []
    model.encoder.register_forward_pre_hook(lambda _, args, kwargs: seen.append(kwargs), with_kwargs=True)
    return seen


@pytest.mark.parametrize("head", ["entity_start", "entity_attention"])
def test_trees_packed_equals_padded_equals_one_by_one(graphs, trees, head):
    folder, _ = graphs
    # company: type group, is a institution (5 pieces); child, cradle, car (the head of big red car): 2 each
    assert [int(t["token"].branch.sum()) for t in trees] == [5, 4, 0, 0, 2]
    model = _model(folder, head)
    seen = _record_encoder_inputs(model)
    batch = next(iter(DataLoader(trees, batch_size=len(trees))))
    packed = model(batch)
    mask = seen[-1]["attention_mask"]
    assert mask.dim() == 4 and mask.dtype == torch.float32 and mask.size(1) == 1  # additive, [rows, 1, L, L]
    model.pack = False
    padded = model(batch)
    position = seen[-1]["position_ids"]
    assert position[0, : trees[0]["token"].num_nodes].tolist() == trees[0]["token"].pos.tolist()  # soft positions
    singles = torch.cat([model(g) for g in trees])
    assert torch.allclose(packed, padded, atol=1e-5) and torch.allclose(packed, singles, atol=1e-5)
    model.pack = True
    states = model.encode(batch)
    model.pack = False
    assert torch.allclose(states, model.encode(batch), atol=1e-5)


@pytest.mark.parametrize("pack", [True, False])
def test_a_tree_without_branches_gives_the_plain_graphs_outputs(graphs, tmp_path_factory, pack):
    """A KG that matches nothing: the trees' soft positions and visibility are the plain graph's."""
    folder, gs = graphs
    empty = _trees(folder, tmp_path_factory, max_entities=0)
    assert all(not t["token"].branch.any() for t in empty)
    for head in ("entity_start", "entity_attention"):
        model = _model(folder, head, pack=pack)
        plain = model(next(iter(DataLoader(gs, batch_size=len(gs)))))
        tree = model(next(iter(DataLoader(empty, batch_size=len(empty)))))
        if pack:  # the same 4D mask and positions, built another way
            assert torch.equal(plain, tree)
        else:  # a 2D padding mask against a 4D one
            assert torch.allclose(plain, tree, atol=1e-6)


@pytest.mark.parametrize("pack", [True, False])
def test_branch_pieces_reach_only_their_span(graphs, trees, pack):
    """One encoder layer: a branch piece's id changes the states of its own value's pieces and of
    its span's pieces, and of nothing else."""
    folder, _ = graphs
    model = _model(folder, "entity_start", pack=pack)
    model.encoder.encoder.layer = model.encoder.encoder.layer[:1]
    batch = next(iter(DataLoader(trees[:2], batch_size=2)))
    before = model.encode(batch)
    tok = batch["token"]
    value_tokens, value = batch["token", "in", "value"].edge_index
    first = value_tokens[value == 0]  # company's "type group", in sentence 0
    changed = batch.clone()
    changed["token"].word_id = tok.word_id.clone()
    changed["token"].word_id[first] = 3
    after = model.encode(changed)
    moved = (after - before).abs().amax(dim=1) > 1e-4
    span = batch["token", "in", "word"].edge_index[0][batch["token", "in", "word"].edge_index[1] == 0]
    assert sorted(moved.nonzero().flatten().tolist()) == sorted(first.tolist() + span.tolist())




@pytest.mark.parametrize("pack", [True, False])
def test_xlmr_encoder_reads_its_positions_from_pad_plus_one(graphs, tmp_path, pack):
    """An XLM-R checkpoint (position table from row pad + 1 = 2): every token's state is
    XLMRobertaModel's own on that sentence, packed or padded."""
    from transformers import BertModel, XLMRobertaModel

    from graphmatch.nn.pretrained import load_weights
    from graphmatch.pretrained import resolve_pretrained
    from tests.checkpoint_folders import xlmr_folder

    folder, gs = graphs
    rows = WordPieces.from_pretrained(folder).vocab_size
    xlmr = xlmr_folder(tmp_path / "xlmr", [f"t{i}" for i in range(rows)], max_positions=64)
    found = resolve_pretrained(xlmr)
    encoder = BertModel(found.bert_config(), add_pooling_layer=False)
    load_weights(encoder, found.read_weights(), log=False)
    model = RelationTransformer(encoder, 3, head="entity_start", pack=pack, pad_id=1).eval()
    reference = XLMRobertaModel.from_pretrained(xlmr, add_pooling_layer=False).eval()
    batch = next(iter(DataLoader(gs, batch_size=len(gs))))
    with torch.no_grad():
        states = model.encode(batch)
        # the positions XLM-R gives a sentence without pads (its own count would skip the markers here,
        # which hold id 1, the pad id, in this tiny vocabulary; tests/nn/test_roberta_positions.py lets
        # XLMRobertaModel count them itself)
        expected = torch.cat([reference(input_ids=g["token"].word_id[None],
                                        position_ids=torch.arange(2, g["token"].num_nodes + 2)[None]
                                        ).last_hidden_state[0] for g in gs])
    assert torch.allclose(states, expected, atol=1e-5)
