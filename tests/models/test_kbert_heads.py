"""The K-BERT model is a body plus one head per subclass, chosen once from the constructor's
arguments; each head keeps the one-class model's parameter names (old checkpoints load)."""

import copy
import pickle

import pytest
import torch

from graphmatch.models.kbert import KBert, KBertPairMatch, KBertSequence, KBertTagger
from graphmatch.nn import MaskTransformerConfig, MaskTransformerEncoder

CONFIG = MaskTransformerConfig(vocab_size=16, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                               intermediate_size=8, max_position_embeddings=16)
HEADS = {
    "sequence_uer": (dict(), KBertSequence, {"output_layer.weight", "output_layer.bias", "classifier.weight",
                                             "classifier.bias"}),
    "sequence_pooler": (dict(head="bert_pooler"), KBertSequence, {"classifier.weight", "classifier.bias"}),
    "token": (dict(tagging=True), KBertTagger, {"classifier.weight", "classifier.bias"}),
    "pair": (dict(num_labels=2, pair_encoding="separate", sep_id=3), KBertPairMatch,
             {"match.log_scale", "match.threshold"}),
}


@pytest.mark.parametrize("name", HEADS)
def test_the_head_is_a_class_with_the_one_class_names(name):
    kw, cls, head = HEADS[name]
    model = KBert(MaskTransformerEncoder(CONFIG), **{"num_labels": 3, **kw})
    assert type(model) is cls and isinstance(model, KBert)
    names = {n for n in model.state_dict() if not n.startswith("encoder.")}
    assert names == head
    assert type(copy.deepcopy(model)) is cls and type(pickle.loads(pickle.dumps(model))) is cls
    again = cls(MaskTransformerEncoder(CONFIG), **{"num_labels": 3, **kw})  # the subclass made directly
    again.load_state_dict(model.state_dict())  # strict: the same names
    assert all(torch.equal(a, b) for a, b in zip(again.state_dict().values(), model.state_dict().values(),
                                                 strict=True))


def test_the_body_has_no_head_of_its_own():
    assert KBert.tagging is False and KBertTagger.tagging is True
    with pytest.raises(NotImplementedError, match="KBertSequence"):
        KBert.build_head(object.__new__(KBert))
