"""The relation family is one class per variant, chosen once from ``model.name``: neither task
branches on the encoder kind, and neither carries the other's attributes."""

import ast
import inspect
import pickle

import graphmatch.tasks.relation as base_module
import graphmatch.tasks.relation_bilstm as bilstm_module
import graphmatch.tasks.relation_transformer as transformer_module
from graphmatch.engine import resolve
from graphmatch.tasks.base import Task, get_task
from graphmatch.tasks.relation import RelationTask
from graphmatch.tasks.relation_bilstm import BiLSTMRelationTask
from graphmatch.tasks.relation_transformer import TransformerRelationTask

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
    """Only :meth:`RelationTask.variant` names the model lists; nothing reads a ``transformer`` flag."""
    for module in (base_module, bilstm_module, transformer_module):
        tree = ast.parse(inspect.getsource(module))
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
            for fn in (n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name != "variant"):
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
