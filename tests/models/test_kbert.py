import pytest
import torch
from torch_geometric.data import Batch

from graphmatch.graphs.kbert import SentenceTreeBuilder, TreeOptions, dense_inputs, second_text
from graphmatch.knowledge import KnowledgeGraph
from graphmatch.models.kbert import KBert
from graphmatch.nn import HFBertEncoder, MaskTransformerConfig, MaskTransformerEncoder
from graphmatch.text import CharTokenizer

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *"我爱北京天安门苹果手机很好用首都城市水果义原"]
CONFIG = MaskTransformerConfig(vocab_size=len(VOCAB), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                               intermediate_size=48, max_position_embeddings=64, hidden_dropout_prob=0.0,
                               attention_probs_dropout_prob=0.0)


@pytest.fixture(scope="module")
def builder():
    kg = KnowledgeGraph([("北京", "义原", "首都"), ("北京", "义原", "城市"), ("苹果", "义原", "水果")])
    tok = CharTokenizer({t: i for i, t in enumerate(VOCAB)})
    return SentenceTreeBuilder(kg, tok, TreeOptions(max_length=32))


@pytest.fixture(scope="module")
def graphs(builder):
    return [builder("我爱北京天安门"), builder("苹果手机很好用"), builder("好")]


@pytest.fixture(scope="module")
def batch(graphs):
    return Batch.from_data_list(graphs)


def _model(**kw) -> KBert:
    torch.manual_seed(0)
    return KBert(MaskTransformerEncoder(CONFIG), num_labels=3, **kw).eval()


def test_classification_shapes_and_pooling(batch):
    for pooling in ("first", "mean", "max", "last"):
        for head in ("uer", "bert_pooler"):
            out = _model(pooling=pooling, head=head)(batch)
            assert out.shape == (3, 3) and torch.isfinite(out).all()


def test_heads_follow_their_formulas(batch):
    """uer: W_c tanh(W_1 v + b_1) + b_c with a fresh W_1 and no dropout (K-BERT's classifier);
    bert_pooler: W_c Dropout(tanh(W_p v + b_p)) + b_c with the encoder's pooler."""
    inputs = dense_inputs(batch)
    uer, pooler = _model(head="uer").train(), _model(head="bert_pooler").eval()
    hidden = uer.encoder.eval()(inputs["input_ids"], inputs["pos"], inputs["seg"], inputs["visible"])
    v = hidden[:, 0]
    want = uer.classifier(torch.tanh(uer.output_layer(v)))
    assert torch.allclose(uer(batch), want, atol=1e-6)  # training mode: no dropout in the head
    assert not any(isinstance(m, torch.nn.Dropout) for m in (uer.dropout, uer.output_layer))
    assert torch.allclose(pooler(batch), pooler.classifier(torch.tanh(pooler.encoder.pooler(v))), atol=1e-6)
    assert pooler.output_layer is None and isinstance(pooler.dropout, torch.nn.Dropout)
    # the uer head ignores the encoder's (pretrained) pooler; bert_pooler uses it
    before = pooler(batch)
    with torch.no_grad():
        uer.encoder.pooler.weight.mul_(-1.0)
        pooler.encoder.pooler.weight.mul_(-1.0)
    assert torch.allclose(uer(batch), want, atol=1e-6)
    assert not torch.allclose(pooler(batch), before, atol=1e-4)
    # a tagger has no output_layer_1 in either head
    assert _model(tagging=True).output_layer is None


def test_last_pooling_takes_the_last_real_token():
    model = _model(pooling="last")
    hidden = torch.randn(2, 4, 5)
    mask = torch.tensor([[True, True, True, False], [True, True, True, True]])
    assert torch.equal(model.pool(hidden, mask), torch.stack([hidden[0, 2], hidden[1, 3]]))


def test_init_output_bias():
    model = _model(tagging=True)
    prior = torch.tensor([0.8, 0.15, 0.05]).log()
    model.init_output_bias(prior)
    assert torch.equal(model.classifier.bias.detach(), prior)
    with pytest.raises(ValueError, match="3 values"):
        model.init_output_bias(torch.zeros(4))


def test_mean_and_max_pooling_ignore_padding():
    model = _model(pooling="mean")
    hidden = torch.randn(2, 4, 5)
    mask = torch.tensor([[True, True, False, False], [True, True, True, True]])
    assert torch.allclose(model.pool(hidden, mask)[0], hidden[0, :2].mean(0))
    model.pooling = "max"
    hidden[0, 2:] = 100.0  # padding must not win the max
    assert torch.allclose(model.pool(hidden, mask)[0], hidden[0, :2].amax(0))


def test_tagging_gives_one_row_per_token_node(graphs, batch):
    model = _model(tagging=True)
    out = model(batch)
    assert out.shape == (batch["token"].num_nodes, 3)
    # row k belongs to token node k: compare with a sample run on its own
    single = Batch.from_data_list([graphs[1]])
    ptr = batch["token"].ptr
    assert torch.allclose(out[ptr[1]:ptr[2]], model(single), atol=1e-5)


def test_batching_does_not_change_a_sample(graphs, batch):
    model = _model()
    out = model(batch)
    for i in range(3):
        alone = model(Batch.from_data_list([graphs[i]]))
        assert torch.allclose(out[i], alone[0], atol=1e-5)


def test_branch_is_invisible_to_cls_in_one_layer(builder):
    """[CLS] cannot see a branch: with one layer, changing the branch leaves [CLS] unchanged,
    while the ablation without visible matrix lets it through."""
    config = MaskTransformerConfig(**{**CONFIG.__dict__, "num_hidden_layers": 1})
    torch.manual_seed(0)
    enc = MaskTransformerEncoder(config).eval()
    data = builder("我爱北京天安门")
    inputs = dense_inputs(Batch.from_data_list([data]))
    branch = inputs["branch"][0].nonzero()[0].item()
    ids2 = inputs["input_ids"].clone()
    ids2[0, branch] = VOCAB.index("手")
    for visible_matrix, same in ((True, True), (False, False)):
        model = KBert(enc, 2, visible_matrix=visible_matrix).eval()
        pos, vis = model.attention_inputs(inputs["pos"], inputs["token_mask"], inputs["visible"])
        h1 = model.encoder(inputs["input_ids"], pos, inputs["seg"], vis)
        h2 = model.encoder(ids2, pos, inputs["seg"], vis)
        assert torch.allclose(h1[0, 0], h2[0, 0], atol=1e-6) is same


def test_ablations_change_the_inputs(batch):
    inputs = dense_inputs(batch)
    soft = _model()
    hard = _model(soft_positions=False)
    pos, vis = hard.attention_inputs(inputs["pos"], inputs["token_mask"], inputs["visible"])
    assert torch.equal(pos[0], torch.arange(pos.size(1)))
    assert torch.equal(vis, inputs["visible"])
    assert not torch.equal(inputs["pos"][0], pos[0])  # sample 0 has a branch: soft != hard
    assert not torch.allclose(soft(batch), hard(batch), atol=1e-5)
    full = _model(visible_matrix=False)
    pos, vis = full.attention_inputs(inputs["pos"], inputs["token_mask"], inputs["visible"])
    assert vis.shape == (3, 1, inputs["visible"].size(-1)) and torch.equal(vis[:, 0], inputs["token_mask"])
    assert not torch.allclose(soft(batch), full(batch), atol=1e-5)


def test_hf_backend_matches_ours(tmp_path, batch):
    ours = _model()
    ours.encoder.save_pretrained_hf(tmp_path)
    for impl in ("eager", "sdpa"):
        hf = KBert(HFBertEncoder.from_pretrained(tmp_path, attn_implementation=impl), 3).eval()
        hf.classifier.load_state_dict(ours.classifier.state_dict())
        hf.output_layer.load_state_dict(ours.output_layer.state_dict())
        assert torch.allclose(ours(batch), hf(batch), atol=1e-5)


def test_attention_weights_and_gradients(batch):
    model = _model()
    model.train()
    logits, weights = model(batch, return_attention_weights=True)
    assert len(weights) == 2 and weights[0].shape[:2] == (3, 4)
    logits.sum().backward()
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for n, p in model.named_parameters()
               if not n.startswith(("encoder.embeddings.word", "encoder.pooler")))
    assert model.encoder.pooler.weight.grad is None  # K-BERT's head does not use BERT's pooler


# ---------------------------------------------- pairs read apart (pair_encoding="separate")
SEP, CLS = VOCAB.index("[SEP]"), VOCAB.index("[CLS]")


def _separate(pooling="mean", match_label=1, sep_id=SEP, cls_id=CLS) -> KBert:
    torch.manual_seed(0)
    return KBert(MaskTransformerEncoder(CONFIG), num_labels=2, pooling=pooling, pair_encoding="separate",
                 sep_id=sep_id, match_label=match_label, cls_id=cls_id).eval()


def _vectors(model, batch):
    """(u, v): each text's pooled vector, read through the model's own steps."""
    x = dense_inputs(batch)
    pos, visible = model.attention_inputs(x["pos"], x["token_mask"], x["visible"])
    b, ids, pos, visible = model.separated(x["input_ids"], pos, x["token_mask"], visible)
    assert torch.equal(ids, x["input_ids"])  # BERT's layout: text b opens with a character, kept
    hidden = model.encoder(ids, pos, torch.zeros_like(x["seg"]), visible)
    return model.pool(hidden, x["token_mask"] & ~b), model.pool(hidden, b)


def test_second_text_in_both_pair_layouts():
    bert = torch.tensor([[2, 7, 7, 3, 8, 8, 3, 0]])  # [CLS] a a [SEP] b b [SEP] pad
    xlmr = torch.tensor([[0, 7, 2, 2, 8, 8, 2, 1]])  # <s> a </s></s> b b </s> pad
    assert second_text(bert, 3).tolist() == [[False, False, False, False, True, True, True, True]]
    assert second_text(xlmr, 2).tolist() == [[False, False, False, True, True, True, True, True]]


def test_a_separator_opening_text_b_reads_as_the_first_token():
    """e5's <s> a </s></s> b </s>: text b is read as <s> b </s>, as e5 reads a text alone."""
    ids = torch.tensor([[0, 7, 2, 2, 8, 8, 2, 1]])  # <s> a </s></s> b b </s> pad
    mask = ids != 1
    pos = torch.tensor([[0, 1, 2, 3, 4, 5, 6, 0]])
    visible = mask.unsqueeze(1) & mask.unsqueeze(2)
    b, read, pos, visible = _separate(sep_id=2, cls_id=0).separated(ids, pos, mask, visible)
    assert b.tolist() == [[False, False, False, True, True, True, True, False]]
    assert read.tolist() == [[0, 7, 2, 0, 8, 8, 2, 1]] and pos[0, 3:7].tolist() == [0, 1, 2, 3]
    assert not visible[0, 1, 4] and not visible[0, 4, 1] and visible[0, 4, 3]
    assert torch.equal(_separate(sep_id=2, cls_id=None).separated(ids, pos, mask, visible)[1], ids)


@pytest.mark.parametrize("pooling", ["mean", "first", "max"])
def test_each_text_is_read_alone(builder, pooling):
    """A text's vector does not depend on the other text, its length or its branches: text b's
    positions start again and no token sees across."""
    model = _separate(pooling)
    # 北京 and 苹果 take branches: text a's length (and text b's soft positions) change
    batch = Batch.from_data_list([builder("我爱北京", "苹果手机"), builder("我爱天安门", "苹果手机"),
                                  builder("我爱北京", "很好用")])
    u, v = _vectors(model, batch)
    assert torch.allclose(v[0], v[1], atol=1e-5) and not torch.allclose(v[0], v[2], atol=1e-3)
    assert torch.allclose(u[0], u[2], atol=1e-5) and not torch.allclose(u[0], u[1], atol=1e-3)
    # text b's first token is at text a's first position
    x = dense_inputs(batch)
    b, _, pos, _ = model.separated(x["input_ids"], x["pos"], x["token_mask"], x["visible"])
    first_b = b.long().argmax(1)
    assert pos[torch.arange(3), first_b].tolist() == [0, 0, 0]


@pytest.mark.parametrize("match_label", [0, 1])
def test_logits_are_the_cosine_head_on_the_matching_label(builder, match_label):
    model = _separate(match_label=match_label)
    with torch.no_grad():
        model.match.threshold.fill_(0.3)
    batch = Batch.from_data_list([builder("我爱北京", "苹果手机"), builder("好", "很好用")])
    logits = model(batch)
    u, v = _vectors(model, batch)
    z = logits[:, match_label] - logits[:, 1 - match_label]
    assert torch.allclose(z, model.match(u, v), atol=1e-5)
    assert torch.allclose(logits.sum(1), torch.zeros(2), atol=1e-6)
    cos = torch.nn.functional.cosine_similarity(u, v, dim=-1)
    assert torch.allclose(model.match_cosine(batch), cos, atol=1e-5)
    assert model.output_layer is None and model.classifier is None


def test_separate_needs_two_labels_a_separator_and_no_tagging():
    encoder = MaskTransformerEncoder(CONFIG)
    for kw in (dict(num_labels=3, sep_id=SEP), dict(num_labels=2), dict(num_labels=2, sep_id=SEP, tagging=True)):
        with pytest.raises(ValueError, match="two labels"):
            KBert(encoder, pair_encoding="separate", **kw)
    with pytest.raises(ValueError, match="no output bias"):
        _separate().init_output_bias(torch.zeros(2))
    assert not any(name.startswith(("output_layer", "classifier")) for name in _separate().uer_names())
