"""K-BERT pairs read as a bi-encoder (``pair_encoding="separate"``)."""

import pytest
import torch
from torch_geometric.data import Batch

from graphmatch.graphs.kbert import SentenceTreeBuilder, dense_inputs, second_text
from graphmatch.knowledge import KnowledgeGraph
from graphmatch.models.kbert import KBert
from graphmatch.nn import MaskTransformerConfig, MaskTransformerEncoder
from graphmatch.text import CharTokenizer

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *"我爱北京天安门苹果手机很好用首都城市水果义原"]
CONFIG = MaskTransformerConfig(vocab_size=len(VOCAB), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                               intermediate_size=48, max_position_embeddings=64, hidden_dropout_prob=0.0,
                               attention_probs_dropout_prob=0.0)
SEP, CLS = VOCAB.index("[SEP]"), VOCAB.index("[CLS]")


@pytest.fixture(scope="module")
def builder():
    kg = KnowledgeGraph([("北京", "义原", "首都"), ("北京", "义原", "城市"), ("苹果", "义原", "水果")])
    return SentenceTreeBuilder(kg, CharTokenizer({t: i for i, t in enumerate(VOCAB)}), max_length=40)


def _model(pooling="mean", match_label=1, sep_id=SEP, cls_id=CLS) -> KBert:
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
    b, read, pos, visible = _model(sep_id=2, cls_id=0).separated(ids, pos, mask, visible)
    assert b.tolist() == [[False, False, False, True, True, True, True, False]]
    assert read.tolist() == [[0, 7, 2, 0, 8, 8, 2, 1]] and pos[0, 3:7].tolist() == [0, 1, 2, 3]
    assert not visible[0, 1, 4] and not visible[0, 4, 1] and visible[0, 4, 3]
    assert torch.equal(_model(sep_id=2, cls_id=None).separated(ids, pos, mask, visible)[1], ids)


@pytest.mark.parametrize("pooling", ["mean", "first", "max"])
def test_each_text_is_read_alone(builder, pooling):
    """A text's vector does not depend on the other text, its length or its branches: text b's
    positions start again and no token sees across."""
    model = _model(pooling)
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
    model = _model(match_label=match_label)
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
        _model().init_output_bias(torch.zeros(2))
    assert not any(name.startswith(("output_layer", "classifier")) for name in _model().uer_names())
