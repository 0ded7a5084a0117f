import pytest
import torch
from torch_geometric.data import Batch

from graphmatch.graphs.let import LatticePairBuilder, char_pair_edges
from graphmatch.graphs.let_options import LatticeOptions
from graphmatch.models.let import LETConfig, LETMatcher, match_loss, match_probability
from graphmatch.nn.sememe_attention import SememeAttention

PAIRS = [("苹果手机怎么样", "这个手机好用吗", 1), ("今天天气好", "明天会下雨吗", 0),
         ("？？！", "hello world", 0), ("打篮球的男生", "爱打篮球的男孩", 1)]


@pytest.fixture(autouse=True)
def one_thread():
    """One torch thread: these small models run faster without oversubscribing shared cores."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def tiny(**kw) -> LETConfig:
    base = dict(encoder_hidden=16, encoder_layers=1, encoder_heads=2, encoder_ffn=32, hidden=16,
                heads=2, sagt_heads=1, perspectives=4, sememe_dim=8, dropout=0.0)
    base.update(kw)
    return LETConfig(**base)


@pytest.fixture(scope="module")
def builder(tokenizer, hownet_lexicon):
    return LatticePairBuilder(tokenizer, hownet_lexicon, LatticeOptions(segmenters="jieba"))


@pytest.fixture(scope="module")
def batch(builder):
    return Batch.from_data_list([builder(a, b, y) for a, b, y in PAIRS])


def test_char_pair_edges_match_brute_force(batch):
    tok = batch["token"]
    is_char = tok.char_index >= 0
    self_e, cross_e = char_pair_edges(tok.batch, tok.sent, is_char)
    n = tok.num_nodes
    want_self, want_cross = set(), set()
    for i in range(n):
        for j in range(n):
            if is_char[i] and is_char[j] and tok.batch[i] == tok.batch[j]:
                (want_self if tok.sent[i] == tok.sent[j] else want_cross).add((i, j))
    assert set(map(tuple, self_e.t().tolist())) == want_self
    assert set(map(tuple, cross_e.t().tolist())) == want_cross
    assert self_e.size(1) == len(want_self) and cross_e.size(1) == len(want_cross)


@pytest.mark.parametrize("objective,senses,update", [("bce", True, "gru"), ("softmax", True, "residual"),
                                                      ("bce", False, "gru")])
def test_forward_shapes_loss_and_gradients(batch, builder, objective, senses, update):
    torch.manual_seed(0)
    model = LETMatcher(tiny(objective=objective, senses=senses, update=update,
                            num_sememes=len(builder.sememe_index)))
    logits = model(batch)
    assert logits.shape == ((4,) if objective == "bce" else (4, 2))
    loss = match_loss(logits, batch.y)
    assert torch.isfinite(loss)
    loss.backward()
    assert model.encoder.embeddings.word.weight.grad.abs().sum() > 0
    if senses:
        assert model.sememe_emb.weight.grad.abs().sum() > 0
        assert all(p.grad is not None for p in model.sagt.parameters())
    else:
        assert not hasattr(model, "sagt")
    p = match_probability(logits)
    assert p.shape == (4,) and ((p >= 0) & (p <= 1)).all()


@pytest.mark.parametrize("scope", ["sense", "sentence"])
def test_batched_equals_separate(builder, scope):
    torch.manual_seed(1)
    model = LETMatcher(tiny(num_sememes=len(builder.sememe_index), sememe_scope=scope)).eval()
    graphs = [builder(a, b, y) for a, b, y in PAIRS]
    with torch.no_grad():
        together = model(Batch.from_data_list(graphs))
        alone = torch.cat([model(Batch.from_data_list([g])) for g in graphs])
        single = model(graphs[0])  # an unbatched HeteroData works too
    assert torch.allclose(together, alone, atol=1e-5)
    assert torch.allclose(single, alone[:1], atol=1e-5)


def test_senses_change_the_prediction(builder):
    torch.manual_seed(2)
    model = LETMatcher(tiny(num_sememes=len(builder.sememe_index))).eval()
    data = Batch.from_data_list([builder("苹果手机怎么样", "这个手机好用吗", 1)])
    assert data["sense"].num_nodes > 0
    with torch.no_grad():
        before = model(data)
        data["sememe"].sememe_id = (data["sememe"].sememe_id + 7) % len(builder.sememe_index)
        after = model(data)
    assert not torch.allclose(before, after)


def test_sememe_vectors_initialise_embedding():
    vectors = torch.randn(10, 8)
    vectors[3] = 0.0  # a sememe without a pretrained vector gets a random row
    model = LETMatcher(tiny(num_sememes=10), sememe_vectors=vectors)
    w = model.sememe_emb.weight
    keep = torch.arange(10) != 3
    assert torch.equal(w[keep], vectors[keep])
    assert w[3].abs().sum() > 0 and w.requires_grad
    with pytest.raises(ValueError, match="sememe_vectors must be"):
        LETMatcher(tiny(num_sememes=11), sememe_vectors=vectors)


def test_training_steps_fit_a_small_batch(batch, builder):
    torch.manual_seed(3)
    model = LETMatcher(tiny(num_sememes=len(builder.sememe_index)))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(25):
        opt.zero_grad()
        loss = match_loss(model(batch), batch.y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]
    model.eval()
    pred = (match_probability(model(batch)) > 0.5).long()
    assert torch.equal(pred, batch.y)


def test_sememe_attention_switch(batch, builder):
    torch.manual_seed(4)
    on = LETMatcher(tiny(num_sememes=len(builder.sememe_index))).eval()
    off = LETMatcher(tiny(num_sememes=len(builder.sememe_index), sememe_attention=False)).eval()
    assert isinstance(on.sememe_attention, SememeAttention) and not hasattr(off, "sememe_attention")
    missing, unexpected = off.load_state_dict(on.state_dict(), strict=False)
    assert not missing and unexpected and all(k.startswith("sememe_attention.") for k in unexpected)
    with torch.no_grad():
        assert not torch.allclose(on(batch), off(batch))  # same weights but the attention: it matters
    on.train()
    match_loss(on(batch), batch.y).backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in on.sememe_attention.parameters())


def test_sememe_attention_scopes(batch, builder):
    """sense: the layer within each sense; sentence: the layer over the distinct sememes of each
    sentence of each pair (the released code), shared by all occurrences of a sememe."""
    torch.manual_seed(5)
    model = LETMatcher(tiny(num_sememes=len(builder.sememe_index), sememe_scope="sentence")).eval()
    sem = batch["sememe"]
    sense = batch["sememe", "of", "sense"].edge_index[1]
    e = torch.randn(sem.num_nodes, 16)
    e = e[torch.unique(sem.batch * 100000 + sem.sent * 10000 + sem.sememe_id, return_inverse=True)[1]]
    with torch.no_grad():
        by_sense = model.sememe_attention(e, sense)
        model.config.sememe_scope = "sense"
        assert torch.equal(model._attend_sememes(batch, e, sense, batch["sense"].num_nodes), by_sense)
        model.config.sememe_scope = "sentence"
        got = model._attend_sememes(batch, e, sense, batch["sense"].num_nodes)
        groups = 0
        for g, sent in {(int(b), int(t)) for b, t in zip(sem.batch, sem.sent, strict=True)}:
            rows = ((sem.batch == g) & (sem.sent == sent)).nonzero().view(-1)
            ids, first = [], []
            for r in rows.tolist():  # the distinct sememes of this sentence, in order of first use
                if int(sem.sememe_id[r]) not in ids:
                    ids.append(int(sem.sememe_id[r]))
                    first.append(r)
            want = model.sememe_attention(e[first], torch.zeros(len(first), dtype=torch.long))
            for r in rows.tolist():
                assert torch.allclose(got[r], want[ids.index(int(sem.sememe_id[r]))], atol=1e-5)
            groups += 1
    assert groups >= 4 and not torch.allclose(got, by_sense)
    assert (torch.bincount(sem.sememe_id[sem.batch == 0]) > 1).any()  # a sememe repeated in a sentence


def test_cls_vector_and_sagt_mlp(batch, builder):
    torch.manual_seed(6)
    pooled = LETMatcher(tiny(num_sememes=len(builder.sememe_index))).eval()
    first = LETMatcher(tiny(num_sememes=len(builder.sememe_index), cls="first", sagt_mlp=False)).eval()
    first.load_state_dict(pooled.state_dict(), strict=False)
    with torch.no_grad():
        h, cls_p = pooled.encode_chars(batch)
        _, cls_f = first.encode_chars(batch)
        assert torch.allclose(cls_p, torch.tanh(pooled.encoder.pooler(cls_f)), atol=1e-6)
        assert not torch.allclose(pooled(batch), first(batch))
    assert not isinstance(pooled.sagt.layers[0].word_mlp, torch.nn.Identity)
    assert isinstance(first.sagt.layers[0].word_mlp, torch.nn.Identity)
    assert pooled.interact.bias is None  # no output bias in the MD-GATs (released code)


def test_the_unpadded_encoder_gives_the_same_match(batch, builder):
    torch.manual_seed(7)
    padded = LETMatcher(tiny(num_sememes=len(builder.sememe_index))).eval()
    unpadded = LETMatcher(tiny(num_sememes=len(builder.sememe_index), unpadded=True)).eval()
    unpadded.load_state_dict(padded.state_dict())
    assert unpadded.encoder.config.unpadded and not padded.encoder.config.unpadded
    with torch.no_grad():
        assert torch.allclose(unpadded(batch), padded(batch), atol=1e-5)


def test_config_validation():  # the choices are checked where a recipe is read (tasks/let.py)
    with pytest.raises(ValueError, match="bert_path"):
        LETConfig(encoder="bert")
    with pytest.raises(ValueError, match="divisible by heads"):
        LETConfig(hidden=10, heads=4)
    with pytest.raises(ValueError, match="unknown LET model option"):
        LETMatcher.from_dict({"hiddn": 3})


def test_bert_encoder_from_local_directory(tmp_path, builder, tokenizer, batch):
    from transformers import BertConfig, BertModel

    cfg = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=24, num_hidden_layers=1,
                     num_attention_heads=2, intermediate_size=48, max_position_embeddings=64)
    BertModel(cfg).save_pretrained(tmp_path)
    model = LETMatcher(tiny(encoder="bert", bert_path=str(tmp_path), num_sememes=len(builder.sememe_index)))
    assert model.encoder.hidden_size == 24
    assert model(batch).shape == (4,)


def test_batch_without_any_sense_runs(builder):
    data = Batch.from_data_list([builder("？？！", "hello world", 0), builder("ABC", "。。", 1)])
    assert data["sense"].num_nodes == 0
    model = LETMatcher(tiny(num_sememes=len(builder.sememe_index))).eval()
    with torch.no_grad():
        out = model(data)
    assert out.shape == (2,) and torch.isfinite(out).all()


def test_default_sememe_count_is_the_real_vocabulary(shared_data, hownet_lexicon):
    from graphmatch.graphs.let import sememe_vocabulary
    from graphmatch.knowledge import load_sememe_vectors

    names = sememe_vocabulary(hownet_lexicon, load_sememe_vectors(root=shared_data))
    assert LETConfig().num_sememes == len(names) == 2192
