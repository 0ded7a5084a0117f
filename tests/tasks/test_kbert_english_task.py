"""K-BERT with an English checkpoint: word pieces chosen from the vocabulary, SST-2 with WordNet,
the knowledge coverage a run reports, and the bad inputs of issue 19."""

import json
import shutil

import pytest
import yaml

from graphmatch.cli.main import main
from graphmatch.engine import resolve
from graphmatch.tasks.recipes.resolve import find_recipe

TINY_RUN = ["data.limit.train=16", "data.limit.dev=8", "data.limit.test=8", "data.max_length=32",
            "train.batch_size=8", "train.eval_batch_size=8", "train.val_every_steps=null", "train.progress=false"]


def _task(tmp_path, shared_data, recipe="kbert/sst2_minilm_wordnet", extra=()):
    from graphmatch.tasks.kbert import KBertTask

    config = resolve(recipe, [*TINY_RUN, f"data.root={shared_data}", f"data.cache_dir={tmp_path / 'cache'}", *extra])
    return KBertTask(config)


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_the_two_sst2_recipes_differ_in_the_knowledge_graph_only():
    def read(name):
        recipe = yaml.safe_load(find_recipe(f"kbert/{name}").read_text(encoding="utf-8"))
        recipe.pop("description")
        return recipe, recipe["data"].pop("kg")

    (plain, none), (knowing, kg) = read("sst2_minilm"), read("sst2_minilm_wordnet")
    assert plain == knowing and none is None and kg == "wordnet"
    assert knowing["model"]["pretrained"] == "minilm" and knowing["train"]["threads"] == 1


@pytest.mark.parametrize("recipe, knowledge", [("sst2_minilm_wordnet", True), ("sst2_minilm", False)])
def test_sst2_recipes_train_and_report_their_knowledge(recipe, knowledge, tmp_path, shared_data, minilm, capsys):
    run = tmp_path / "run"
    sets = [*TINY_RUN, f"data.root={shared_data}", f"data.cache_dir={tmp_path / 'cache'}"]
    assert main(["train", f"kbert/{recipe}", "--set", *sets, "--out", str(run)]) == 0
    err = capsys.readouterr().err
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["steps"] == 2 and metrics["samples"] == {"train": 16, "dev": 8, "test": 8}
    summary = (run / "summary.md").read_text(encoding="utf-8")
    lines = [line for line in err.splitlines() if line.startswith("knowledge coverage")]
    if not knowledge:
        assert not lines and "knowledge coverage" not in summary
        return
    # one line on stderr, the same as an item of summary.md; 14 of the first 16 sentences get a branch
    assert len(lines) == 1 and f"- {lines[0]}" in summary.splitlines()
    assert lines[0].startswith("knowledge coverage (wordnet): train 87.5 % of 16 with a branch, 3.88 branches per "
                               "sentence; ")
    assert "; dev " in lines[0] and "; test " in lines[0] and "warning" not in err
    from graphmatch.engine import load

    task, _ = load(run)
    data = task.encode("The companies sold ice creams.")
    assert data["entity"].num_nodes == 4  # company and ice cream, two values each, over word pieces


def test_word_pieces_are_chosen_from_the_vocabulary_and_key_the_cache(tmp_path, shared_data, minilm):
    english = _task(tmp_path, shared_data)
    assert english.vocab_tokenization() == ("wordpiece", True)
    train = english.train_split()
    options = train.cache_key()["builder"]["options"]
    assert options["tokenizer"] == "wordpiece" and options["lowercase"] is True
    assert options["max_words"] == 3 and "the" in options["stop_words"]
    assert train[0]["token"].input_ids[0] == 101 and english.builder().finder.tokenization == "wordpiece"  # [CLS]
    chars = _task(tmp_path, shared_data, extra=["data.tokenization=chars"])
    assert chars.vocab_tokenization() == ("chars", True)
    assert chars.train_split().cache_digest != train.cache_digest
    chinese = _task(tmp_path, shared_data, "kbert/chnsenticorp_hownet_quick")
    assert chinese.vocab_tokenization()[0] == "chars"
    assert "tokenizer" not in chinese.train_split().cache_key()["builder"]["options"]  # Chinese keys unchanged


def test_english_text_with_a_chinese_kg_gives_the_coverage_warning(tmp_path, shared_data, minilm):
    task = _task(tmp_path, shared_data, extra=["data.kg=hownet"])
    report = task.report(task.datasets())
    assert report[0].startswith("knowledge coverage (hownet): train ")
    assert len(report) == 2 and report[1].startswith("warning: knowledge graph hownet matched ")
    assert "is it the right language for this text?" in report[1]
    assert _task(tmp_path, shared_data, extra=["data.kg=null"]).report({}) == []


def test_word_pieces_refuse_ner(tmp_path, shared_data, minilm):
    task = _task(tmp_path, shared_data, "kbert/medical_ner_medical_quick", extra=["model.pretrained=minilm"])
    with pytest.raises(ValueError, match="word-piece vocabulary, and K-BERT NER .* tags characters"):
        task.datasets()


def test_a_checkpoint_without_vocab_txt_is_one_line(tmp_path, shared_data, minilm, capsys):
    folder = tmp_path / "no_vocab"
    folder.mkdir()
    for name in ("config.json", "model.safetensors"):
        shutil.copy(minilm / name, folder / name)
    sets = [*TINY_RUN, f"data.root={shared_data}", f"data.cache_dir={tmp_path / 'cache'}", f"model.pretrained={folder}"]
    assert main(["train", "kbert/sst2_minilm_wordnet", "--set", *sets, "--out", str(tmp_path / "run")]) == 2
    assert f"model.pretrained: no vocab.txt in the checkpoint folder {folder}" in _one_line_error(capsys)
    assert not (tmp_path / "run").exists()  # nothing half-written
