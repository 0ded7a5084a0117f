"""Each relation variant declares its own model section (``BiLSTMModel``, ``TransformerModel``),
picked from ``model.name`` by ``TaskKeys.model_section``: another variant's key is an unknown key,
and runs whose ``config.yaml`` lists every key of the one section of earlier releases still load."""

import ast
import dataclasses
import inspect
import warnings
from pathlib import Path

import pytest
import torch
import yaml
from tiny_bert import tiny_bert_folder

import graphmatch.tasks.relation_keys as relation_keys
from graphmatch.cli.main import main as cli
from graphmatch.engine import load, resolve
from graphmatch.tasks.recipes.keys import defaults, specs
from graphmatch.tasks.recipes.resolve import key_reference
from graphmatch.tasks.recipes.sections import Recipe
from graphmatch.tasks.relation import VARIANTS
from graphmatch.tasks.relation_keys import MODELS, BiLSTMModel, RelationKeys, RelationModel, TransformerModel

RECIPES = Path(__file__).resolve().parents[2] / "recipes" / "relation"
QUICK = ["train.epochs=1", "train.max_steps=2", "train.threads=1", "train.progress=false"]
ZH = Path(__file__).resolve().parents[2] / "datasets" / "samples" / "relation_zh"
#: the one model section of the previous release: every key of every variant, at its default
OLD_MODEL = {**defaults(BiLSTMModel), **defaults(TransformerModel)}


def _recipe(tmp_path, text: str) -> Path:
    path = tmp_path / "mine.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_model_name_picks_the_variant_section_for_every_relation_recipe():
    for path in sorted(RECIPES.glob("*.yaml")):
        config = resolve(str(path))
        printed = yaml.safe_load(yaml.safe_dump(config, allow_unicode=True))  # graphmatch recipe, config.yaml
        assert resolve(printed) == config == resolve(printed, stored=True), path.name
        recipe = Recipe.of(config)
        section = RelationKeys.model_section(recipe.model.name)
        assert type(recipe.model) is section and section in (BiLSTMModel, TransformerModel), path.name
        assert VARIANTS[recipe.model.name].model_names == tuple(specs(section)["name"].choices)
    names = [n for v in RelationKeys.variants for n in specs(v)["name"].choices]
    assert sorted(names) == sorted(MODELS) == sorted(VARIANTS)  # each name in exactly one section
    assert RelationKeys.model_section(None) is BiLSTMModel  # the default name's
    assert RelationKeys.model_section("cnn") is RelationModel


@pytest.mark.parametrize(("name", "key", "message"), [
    ("att_blstm", "pretrained: minilm", "unknown recipe key 'model.pretrained' in {file}; valid keys of model: "
                                        "attention_size, class_weight, dropout, emb_dropout, embedding_dim"),
    ("att_blstm", "pack: false", "unknown recipe key 'model.pack' in {file}; valid keys of model: attention_size, "
                                 "class_weight, dropout, emb_dropout, embedding_dim"),
    ("transformer_entity_start", "word_vectors: glove.txt", "unknown recipe key 'model.word_vectors' in {file}; "
                                                            "valid keys of model: attention_size, branch_bias"),
    ("transformer_entity_start", "embeding_dim: 8", "unknown recipe key 'model.embeding_dim' in {file}; valid keys"),
    ("transformer_entity_start", "head_hiden: 8", "unknown recipe key 'model.head_hiden' in {file}; did you mean "
                                                  "'model.head_hidden'?"),
    ("att_blstm", "embeding_dim: 8", "unknown recipe key 'model.embeding_dim' in {file}; did you mean "
                                     "'model.embedding_dim'?"),
])
def test_another_variants_key_is_an_unknown_key_naming_the_file(tmp_path, name, key, message):
    encoder = "  pretrained: minilm\n" if name.startswith("transformer") else ""
    path = _recipe(tmp_path, f"task: relation\nmodel:\n  name: {name}\n{encoder}  {key}\n")
    with pytest.raises(ValueError) as err:
        resolve(path)
    assert "\n" not in str(err.value) and str(err.value).startswith(message.format(file=path))


def test_an_unknown_model_name_is_one_line_listing_the_registered_ones(tmp_path, capsys):
    path = _recipe(tmp_path, "task: relation\nmodel:\n  pack: false\n  name: cnn\n")  # a key before the name
    with pytest.raises(ValueError, match=f"^model.name must be one of {', '.join(MODELS)}, got 'cnn' \\({path}\\)$"):
        resolve(path)
    assert cli(["recipe", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "model.name must be one of att_blstm, entity_attention" in err[0]


def test_a_later_layer_that_switches_the_variant_leaves_the_earlier_ones_keys(tmp_path):
    switched = resolve("relation/sample_zh_att_blstm", ["model.name=transformer_entity_start",
                                                        "model.pretrained=minilm", "data.tokenization=null"])
    assert set(switched["model"]) == set(defaults(TransformerModel))  # embedding_dim, hidden_size left behind
    assert switched["model"]["l2"] == 1e-5  # a shared key the base recipe set is kept
    child = _recipe(tmp_path, f"base: {RECIPES / 'sample_zh_att_blstm.yaml'}\nmodel:\n  name: transformer_entity_start"
                              "\n  pretrained: minilm\n  hidden_size: 8\n")
    with pytest.raises(ValueError, match=f"^unknown recipe key 'model.hidden_size' in {child}; "):
        resolve(child)  # the layer that names the transformer is checked against its section


def test_the_rules_of_a_variant_live_in_its_section_not_in_name_tests():
    """``RelationKeys.check_sections`` and the sections' rules compare no model name."""
    tree = ast.parse(inspect.getsource(relation_keys))
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            names = {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
            assert "name" not in names, ast.unparse(node)
    assert not any(hasattr(relation_keys, n) for n in ("BILSTM_MODELS", "TRANSFORMER_MODELS"))
    with pytest.raises(ValueError, match="model.name=transformer_entity_attention needs model.pretrained"):
        resolve("relation/semeval_att_blstm", ["model.name=transformer_entity_attention"])
    with pytest.raises(ValueError, match="data.kg needs a transformer model .*, not model.name=entity_attention"):
        resolve("relation/semeval_entity_attention", ["data.kg=wordnet"])
    with pytest.raises(ValueError, match="model.branch_bias acts on the branches of a knowledge graph"):
        resolve("relation/semeval_minilm_entity_start", ["model.branch_bias=true"])


def test_the_key_reference_has_a_table_per_variant():
    text = key_reference(["relation"])
    tables = {block.split("\n", 1)[0]: block for block in text.split("\n## ")}
    bilstm = tables["`model` of `relation` with `model.name` `att_blstm`, `entity_attention`"]
    transformer = tables["`model` of `relation` with `model.name` `transformer_entity_start`, "
                         "`transformer_entity_attention`"]
    shared = tables["`model` of `relation`"]
    assert "`model.word_vectors`" in bilstm and "`model.word_vectors`" not in transformer + shared
    assert "`model.pack`" in transformer and "`model.pack`" not in bilstm + shared
    assert "`model.dropout`" in shared and "`model.dropout`" not in bilstm + transformer  # once, where it is shared


@pytest.mark.parametrize("recipe", ["relation/semeval_att_blstm", "relation/semeval_minilm_entity_start"])
def test_a_stored_configuration_of_the_previous_release_loads(recipe):
    new = resolve(recipe)
    old = {**new, "model": {**OLD_MODEL, **new["model"]}}
    assert set(old["model"]) - set(new["model"])  # the other variant's keys are there
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert resolve(old, stored=True) == new
    with pytest.raises(ValueError, match="unknown recipe key 'model."):
        resolve(old)  # a recipe a user writes is strict
    with pytest.raises(ValueError, match="unknown recipe key 'model.hiden_size'"):
        resolve({**old, "model": {**old["model"], "hiden_size": 3}}, stored=True)  # a key of no variant


@pytest.mark.parametrize("variant", [BiLSTMModel, TransformerModel])
def test_an_old_run_folder_listing_every_key_loads_and_predicts(tmp_path, capsys, variant):
    run = tmp_path / "run"
    if variant is BiLSTMModel:
        sets = [*QUICK, "model.embedding_dim=8", "model.hidden_size=8"]
    else:
        texts = [line.split("\t")[3] for line in (ZH / "train.tsv").read_text(encoding="utf-8").splitlines()[1:]]
        sets = [*QUICK, "model.name=transformer_entity_start", "data.tokenization=null",
                f"model.pretrained={tiny_bert_folder(tmp_path / 'bert', texts, hidden=16, layers=1)}"]
    assert cli(["train", "relation/sample_zh_att_blstm", "--out", str(run), "--set",
                f"data.cache_dir={tmp_path / 'cache'}", *sets]) == 0
    config = yaml.safe_load((run / "config.yaml").read_text(encoding="utf-8"))
    config["model"] = {**OLD_MODEL, **config["model"]}  # what an earlier release wrote
    (run / "config.yaml").write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    for ckpt in run.glob("*.ckpt"):
        state = torch.load(ckpt, weights_only=True)
        state["graphmatch"]["config"]["model"] = dict(config["model"])
        torch.save(state, ckpt)
    task, _ = load(run)
    other = TransformerModel if variant is BiLSTMModel else BiLSTMModel
    assert type(task.model) is variant and set(dataclasses.asdict(task.model)) == set(defaults(variant))
    assert set(defaults(other)) - set(defaults(variant))  # the keys left out
    capsys.readouterr()
    assert cli(["predict", str(run), "故宫\t北京\t故宫位于北京市中心。"]) == 0
    assert capsys.readouterr().out.splitlines()[1].split("\t")[0] in task.label_names()
    wrong = "model.pack=false" if variant is BiLSTMModel else "model.word_vectors=x.txt"
    assert cli(["evaluate", str(run), "--set", wrong]) == 2  # --set on a run is strict
    assert f"unknown recipe key '{wrong.split('=')[0]}'" in capsys.readouterr().err


def test_every_bilstm_name_has_a_model_and_no_other():
    import typing

    from graphmatch.tasks.relation.bilstm import MODELS
    from graphmatch.tasks.relation_keys import BiLSTMModel

    names = typing.get_args(typing.get_type_hints(BiLSTMModel)["name"])
    assert sorted(MODELS) == sorted(names)
