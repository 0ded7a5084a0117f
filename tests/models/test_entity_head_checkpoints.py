"""Weights written by the release before the shared entity-aware head
(``tests/fixtures/entity_attention``, see ``make_fixtures.py`` there) load into today's models
through their ``RENAMED_KEYS`` and give the same outputs (bit for bit on the CPU that made the
fixtures; another CPU's kernels round differently, by about 1e-7, so outputs are compared at 1e-6);
built from the same seed, today's models draw the same weights (bit for bit)."""

from pathlib import Path

import pytest
import torch
from torch_geometric.data import HeteroData

from graphmatch.engine.runs.checkpoint import check_state_dict
from graphmatch.models.entity_attention import EntityAttentionBiLSTM
from graphmatch.models.relation_transformer import RelationTransformer
from graphmatch.models.renamed_keys import rename_keys, upgrade_state_dict

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "entity_attention"


def _fixture(name: str) -> dict:
    return torch.load(FIXTURES / f"{name}.pt", weights_only=True)


def _same(*pairs: tuple[torch.Tensor, torch.Tensor]) -> bool:
    """Every ``(computed, stored)`` output pair equal up to float rounding (1e-6)."""
    return all(torch.allclose(a, b, rtol=0.0, atol=1e-6) for a, b in pairs)


def _graph(g: dict) -> HeteroData:
    data = HeteroData()
    data["token"].word_id, data["token"].pos1, data["token"].pos2 = g["word_id"], g["pos1"], g["pos2"]
    data["token"].batch = g["batch"]
    data["sentence"].num_nodes = g["num_sentences"]
    data["entity"].num_nodes = 2 * g["num_sentences"]
    data["token", "in", "entity"].edge_index = g["in_entity"]
    data["token", "in", "sentence"].edge_index = g["in_sentence"]
    return data


@pytest.mark.parametrize("name", ["bilstm_pytorch", "bilstm_official"])
def test_bilstm_checkpoint_of_the_release_before_loads_and_computes_the_same(name):
    old = _fixture(name)
    assert {k for k in old["state_dict"] if k.startswith(("typing.", "pool.", "classifier."))}  # the old names
    model = EntityAttentionBiLSTM(**old["config"]).eval()
    check_state_dict(model, upgrade_state_dict(model, old["state_dict"]), name)
    model.load_state_dict(old["state_dict"])  # strict: every old name maps onto a new one
    with torch.no_grad():
        logits, att = model(_graph(old["graph"]), return_attention=True)
    assert _same((logits, old["logits"]), (att["token"], old["token"]), (att["types"], old["types"]))

    torch.manual_seed(old["seed"])
    fresh = EntityAttentionBiLSTM(**old["config"]).state_dict()
    upgraded = upgrade_state_dict(model, old["state_dict"])
    assert list(fresh) == list(upgraded)  # same names, same order
    assert all(torch.equal(fresh[k], upgraded[k]) for k in fresh)


def test_bilstm_inside_a_lightning_style_wrapper_loads_old_names():
    """Lightning's resume loads the model as ``model.*`` of its module: the hook sees the prefix."""
    old = _fixture("bilstm_pytorch")
    wrapper = torch.nn.Module()
    wrapper.model = EntityAttentionBiLSTM(**old["config"]).eval()
    wrapper.load_state_dict({f"model.{k}": v for k, v in old["state_dict"].items()})
    with torch.no_grad():
        assert _same((wrapper.model(_graph(old["graph"])), old["logits"]))


def _transformer(c: dict) -> RelationTransformer:
    return RelationTransformer(_Encoder(c["channels"]), c["num_classes"], head="entity_attention",
                               dropout=c["dropout"], num_positions=c["num_positions"], position_dim=c["position_dim"],
                               latent_types=c["latent_types"], attention_size=c["attention_size"]).eval()


def test_a_model_that_accepts_old_names_still_pickles():
    import pickle

    old = _fixture("bilstm_pytorch")
    model = pickle.loads(pickle.dumps(EntityAttentionBiLSTM(**old["config"]).eval()))
    model.load_state_dict(old["state_dict"])
    with torch.no_grad():
        assert _same((model(_graph(old["graph"])), old["logits"]))


def test_transformer_head_of_the_release_before_loads_and_computes_the_same():
    old = _fixture("transformer_head")  # the old head alone: position, typing, pool, classifier
    model = _transformer(old["config"])
    state = {"encoder.weight": torch.zeros(1), **{f"head.{k}": v for k, v in old["state_dict"].items()}}
    assert "head.position.weight" in state and "head.position.weight" not in model.state_dict()
    check_state_dict(model, upgrade_state_dict(model, state), "transformer_head")
    model.load_state_dict(state)
    x = old["inputs"]
    positions = torch.cat([model.position(x["pos1"]), model.position(x["pos2"])], dim=-1)
    with torch.no_grad():
        logits, alpha, types = model.head(x["x"], positions, x["entity"], x["index"], return_attention=True)
    assert _same((logits, old["logits"]), (alpha, old["token"]), (types, old["types"]))

    torch.manual_seed(old["seed"])  # the table and the head draw their weights in the old order
    fresh = _transformer(old["config"]).state_dict()
    upgraded = upgrade_state_dict(model, state)
    assert list(fresh) == list(upgraded)
    assert all(torch.equal(fresh[k], upgraded[k]) for k in fresh)


class _Encoder(torch.nn.Module):
    """Stands in for a BERT encoder where only the head is compared: ``config.hidden_size`` and a
    parameter (``RelationTransformer.encode`` is not called)."""

    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.config = type("Config", (), {"hidden_size": hidden})()
        self.weight = torch.nn.Parameter(torch.zeros(1))


def test_rename_keys_maps_each_old_prefix_under_the_given_prefix():
    state = {"m.typing.types": 1, "m.pool.score": 2, "m.head.classifier.bias": 3, "other.pool.score": 4}
    rename_keys(state, {"pool.": "head.pool.", "typing.": "head.typing.", "classifier.": "head.classifier."}, "m.")
    assert state == {"m.head.typing.types": 1, "m.head.pool.score": 2, "m.head.classifier.bias": 3,
                     "other.pool.score": 4}
