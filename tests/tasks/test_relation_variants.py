"""The relation family is one class per variant, chosen once from ``model.name``: neither task
branches on the encoder kind, and neither carries the other's attributes."""

import ast
import importlib
import inspect
import pickle
import sys

import pytest

import graphmatch.tasks.relation.base as base_module
import graphmatch.tasks.relation.bilstm as bilstm_module
import graphmatch.tasks.relation.transformer as transformer_module
from graphmatch.engine import resolve
from graphmatch.tasks.base import Task, get_task
from graphmatch.tasks.relation import VARIANTS, RelationTask
from graphmatch.tasks.relation.bilstm import BiLSTMRelationTask
from graphmatch.tasks.relation.transformer import TransformerRelationTask
from graphmatch.tasks.relation_keys import MODELS

KINDS = {"BILSTM_MODELS", "TRANSFORMER_MODELS", "transformer"}


def test_the_variant_is_chosen_once_from_the_model_name(tmp_path):
    for recipe, cls in (("relation/semeval_att_blstm_quick", BiLSTMRelationTask),
                        ("relation/semeval_entity_attention_quick", BiLSTMRelationTask),
                        ("relation/semeval_minilm_entity_start", TransformerRelationTask),
                        ("relation/semeval_minilm_entity_attention", TransformerRelationTask)):
        task = get_task("relation")(resolve(recipe, [f"data.cache_dir={tmp_path}"]))
        assert type(task) is cls and isinstance(task, RelationTask) and task.name == "relation"
        assert type(pickle.loads(pickle.dumps(task))) is cls  # made again without a config


def test_no_relation_task_branches_on_the_encoder_kind():
    """Only the registry names the model lists; nothing reads a ``transformer`` flag."""
    for module in (base_module, bilstm_module, transformer_module):
        tree = ast.parse(inspect.getsource(module))
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
            for fn in (n for n in cls.body if isinstance(n, ast.FunctionDef)):
                names = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
                names |= {n.attr for n in ast.walk(fn) if isinstance(n, ast.Attribute)}
                assert not names & KINDS, f"{module.__name__}.{cls.name}.{fn.name} reads {names & KINDS}"


def test_each_variant_has_only_its_own_attributes(tmp_path):
    bilstm = get_task("relation")(resolve("relation/semeval_att_blstm_quick", [f"data.cache_dir={tmp_path}"]))
    for name in ("pieces", "pretrained_dir", "_pieces", "_trees", "transformer"):
        assert not hasattr(bilstm, name), name
    assert bilstm.pretrained is None and bilstm.encoder_parameters(None) == [] and bilstm.tokenizer_folder() is None
    assert BiLSTMRelationTask.encoder_layers is Task.encoder_layers
    transformer = get_task("relation")(resolve("relation/semeval_minilm_entity_start", [f"data.cache_dir={tmp_path}"]))
    for name in ("vocab", "_vocab", "transformer"):
        assert not hasattr(transformer, name), name
    assert transformer.tokenization == "pieces" and transformer.pretrained is not None
    assert transformer.token_vocab() is None and transformer.vocabulary_state() == {}


def test_the_base_imports_none_of_its_variants():
    """``relation.base`` imports no variant module (not even inside a function): each variant's
    module registers itself, and the package imports them all."""
    tree = ast.parse(inspect.getsource(base_module))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    variants = {bilstm_module.__name__, transformer_module.__name__, "graphmatch.tasks.relation"}
    assert not imported & variants and not any(m.startswith("graphmatch.tasks.relation_") and m != "graphmatch"
                                                 ".tasks.relation_keys" for m in imported)


def test_the_registry_holds_every_model_name():
    assert set(VARIANTS) == set(MODELS)
    assert {VARIANTS[n] for n in BiLSTMRelationTask.model_names} == {BiLSTMRelationTask}
    assert {VARIANTS[n] for n in TransformerRelationTask.model_names} == {TransformerRelationTask}


def test_an_unknown_variant_is_one_line_naming_the_registered_ones():
    with pytest.raises(ValueError) as err:
        RelationTask.variant_of("lstm_crf")
    message = str(err.value)
    assert "\n" not in message and "'lstm_crf'" in message
    assert all(name in message for name in MODELS)


@pytest.mark.parametrize(("old", "new", "name"), [
    ("graphmatch.tasks.relation_bilstm", "graphmatch.tasks.relation.bilstm", "BiLSTMRelationTask"),
    ("graphmatch.tasks.relation_transformer", "graphmatch.tasks.relation.transformer", "TransformerRelationTask"),
])
def test_old_import_paths_warn_once_and_work(old, new, name):
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=new.replace(".", r"\.")) as caught:
        module = importlib.import_module(old)
    assert len([w for w in caught if issubclass(w.category, DeprecationWarning)]) == 1
    assert getattr(module, name) is getattr(importlib.import_module(new), name)
