"""The relation transformer's knowledge keys end to end: data.entity_mask (training steps only, the
entities' pieces masked with their branches, markers and positions left), its one-line errors, the
marked + masked recipe, and ``graphmatch probe`` on a tiny trained relation run."""

import json
from pathlib import Path

import pytest
import torch
from tiny_bert import tiny_bert_folder
from torch_geometric.data import Batch

from graphmatch.cli.main import main as cli
from graphmatch.data.relation_formats import read_semeval_file
from graphmatch.engine import load, resolve
from graphmatch.engine.runner import predict_graph
from graphmatch.tasks.relation import RelationTask

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "datasets" / "samples" / "relation"
QUIET = ["train.progress=false", "train.threads=1"]
#: a KG whose subjects are some of the sample's entities (fire, jar, accident ...), so some entities get a branch
TINY_SPO = "\n".join(f"{w}\ttype\t{t}" for w, t in (("fire", "phenomenon"), ("smoke", "cloud"), ("camera", "artifact"),
                                                     ("lens", "artifact"), ("tree", "plant"), ("leaf", "plant"),
                                                     ("accident", "event"), ("jar", "artifact"))) + "\n"
SENTENCES = ["The <e1>fire</e1> caused <e2>smoke</e2>.", "The <e1>lid</e1> of the <e2>jar</e2> would not open.",
             "The <e1>camera</e1> has a <e2>lens</e2>.", "A <e1>desk drawer</e1> holds <e2>paper</e2>."]


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    texts = [e.sentence.text for f in ("train.txt", "test.txt") for e in read_semeval_file(SAMPLE / f)]
    values = " ".join(line.split("\t")[2] for line in TINY_SPO.splitlines())  # the branches in the vocabulary
    return tiny_bert_folder(tmp_path_factory.mktemp("bert") / "tiny", [*texts, *SENTENCES, values])


@pytest.fixture(scope="module")
def spo(tmp_path_factory):
    path = tmp_path_factory.mktemp("kg") / "tiny.spo"
    path.write_text(TINY_SPO, encoding="utf-8")
    return path


def _sets(bert, spo, cache, extra=()):
    return [f"model.pretrained={bert}", f"data.cache_dir={cache}", f"data.kg={spo}",
            f"data.train_file={SAMPLE / 'train.txt'}", f"data.test_file={SAMPLE / 'test.txt'}", "data.dev_size=10",
            "train.batch_size=8", "optim.lr=3e-3", "optim.encoder_lr=1e-3", *QUIET, *extra]


def _task(bert, spo, tmp_path, p):
    return RelationTask(resolve("relation/semeval_minilm_wordnet_marked",
                            _sets(bert, spo, tmp_path / "cache", [f"data.entity_mask={p}"])))


def _batch(task):
    return Batch.from_data_list([task.encode(s) for s in SENTENCES])


def _entity_pieces(batch):
    """``[N, 2]`` bool: each token is a piece of its sentence's e1, e2 (not a marker, not a branch)."""
    src, dst = batch["token", "in", "entity"].edge_index
    out = torch.zeros((batch["token"].num_nodes, 2), dtype=torch.bool)
    out[src, batch["entity"].kind[dst]] = True
    return out


def test_p_1_masks_exactly_the_pieces_of_the_entities_with_a_branch(bert, spo, tmp_path):
    task = _task(bert, spo, tmp_path, 1)
    batch = _batch(task)
    before = {k: v.clone() for k, v in batch["token"].items() if isinstance(v, torch.Tensor)}
    out = task.training_batch(batch)
    tok = out["token"]
    mask_id = task.pieces().tokenizer.mask_token_id
    assert task.pieces().tokenizer.convert_ids_to_tokens(mask_id) == "[MASK]"
    pieces = _entity_pieces(out)
    sentence = out["token"].batch
    # the entities whose head word kept a branch: fire, smoke | jar | camera, lens | none (drawer, paper: no subject)
    branched = torch.tensor([[True, True], [False, True], [True, True], [False, False]])
    expected = (pieces & branched[sentence]).any(1)
    assert expected.any() and not (expected & tok.branch).any()
    assert torch.equal(tok.word_id, before["word_id"].masked_fill(expected, mask_id))
    for name in ("pos", "pos1", "pos2", "branch"):  # positions, branches and markers as they were
        assert torch.equal(tok[name], before[name]), name
    markers = torch.isin(before["word_id"], torch.tensor(task.pieces().tokenizer.convert_tokens_to_ids(
        list(task.pieces().markers))))
    assert markers.sum() == 16 and torch.equal(tok.word_id[markers], before["word_id"][markers])
    assert torch.equal(batch["token"].word_id[tok.branch], before["word_id"][tok.branch])  # the branches read as is


def test_p_0_masks_nothing_and_draws_nothing(bert, spo, tmp_path):
    task = _task(bert, spo, tmp_path, 0)
    batch = _batch(task)
    ids = batch["token"].word_id.clone()
    state = torch.get_rng_state()
    assert task.training_batch(batch) is batch
    assert torch.equal(batch["token"].word_id, ids) and torch.equal(torch.get_rng_state(), state)


def test_the_two_entities_are_drawn_apart(bert, spo, tmp_path):
    task = _task(bert, spo, tmp_path, 0.5)
    graph = task.encode(SENTENCES[0])
    mask_id = task.pieces().tokenizer.mask_token_id
    torch.manual_seed(0)
    seen = set()
    for _ in range(40):
        out = task.training_batch(Batch.from_data_list([graph]))
        pieces = _entity_pieces(out)
        seen.add(tuple(bool((out["token"].word_id[pieces[:, k]] == mask_id).all()) for k in (0, 1)))
    assert seen == {(False, False), (True, False), (False, True), (True, True)}


def test_entity_mask_acts_in_training_steps_only(bert, spo, tmp_path, monkeypatch, capsys):
    import graphmatch.tasks.relation.transformer as transformer

    calls = []

    def spy(batch, p, mask_id):
        calls.append((p, mask_id, batch.num_graphs))
        return real(batch, p, mask_id)

    real = transformer.mask_entities
    monkeypatch.setattr(transformer, "mask_entities", spy)
    run = tmp_path / "run"
    assert cli(["train", "relation/semeval_minilm_wordnet_marked", "--out", str(run), "--set",
                *_sets(bert, spo, tmp_path / "cache", ["train.max_steps=2"])]) == 0
    task, model = load(run)
    assert task.data.entity_mask == 0.3 and task.model.branch_embedding and task.model.branch_bias
    mask_id = task.pieces().tokenizer.mask_token_id
    assert calls == [(0.3, mask_id, 8)] * 2  # the two training steps; not dev, test, the probe or the checks after
    predict_graph(task, model, task.encode(SENTENCES[0]))
    assert cli(["predict", str(run), SENTENCES[0]]) == 0
    assert len(calls) == 2  # prediction masks nothing


@pytest.mark.parametrize(("setting", "key"), [
    (["data.kg=null", "data.entity_mask=0.15"], "data.entity_mask"),
    (["data.entity_mask=1.5"], "data.entity_mask"),
    (["data.entity_mask=-0.1"], "data.entity_mask"),
])
def test_bad_entity_mask_is_a_one_line_error(bert, spo, tmp_path, capsys, setting, key):
    run = tmp_path / "run"
    assert cli(["train", "relation/semeval_minilm_wordnet", "--out", str(run), "--set",
                *_sets(bert, spo, tmp_path / "cache", setting)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err and key in err, err
    assert not run.exists()


def test_the_marked_recipe_is_the_wordnet_recipe_with_the_three_keys():
    marked, base = resolve("relation/semeval_minilm_wordnet_marked", []), resolve("relation/semeval_minilm_wordnet", [])
    assert marked["data"] == {**base["data"], "entity_mask": 0.3}
    assert marked["model"] == {**base["model"], "branch_embedding": True, "branch_bias": True}
    assert base["data"]["entity_mask"] == 0.0
    assert {k: v for k, v in marked.items() if k not in ("name", "description", "data", "model")} == \
        {k: v for k, v in base.items() if k not in ("name", "description", "data", "model")}


# ------------------------------------------------------------------------------------ the probe
def test_the_cut_is_the_model_on_the_sentence_without_knowledge(bert, spo, tmp_path):
    from graphmatch.graphs.relation_kbert import trunk_only

    task = _task(bert, spo, tmp_path, 0)
    plain = RelationTask(resolve("relation/semeval_minilm_entity_start", _sets(bert, spo, tmp_path / "cache",
                                                                               ["data.kg=null"])))
    torch.manual_seed(0)
    model = task.build_model().eval()
    with torch.no_grad():  # the marks trained away from zero: a cut sentence still reads none of them
        model.branch_marking.embedding.normal_()
        model.branch_marking.bias.normal_()
    trees = _batch(task)
    cut = trunk_only(trees)
    assert cut["token"].num_nodes == int((~trees["token"].branch).sum()) and not cut["token"].branch.any()
    with torch.no_grad():
        without = model(cut)
        alone = model(Batch.from_data_list([plain.encode(s) for s in SENTENCES]))
        change = (model.encode(trees)[~trees["token"].branch] - model.encode(cut)).abs().amax(1)
    torch.testing.assert_close(without, alone, atol=1e-5, rtol=1e-5)
    # the branches change the states of the pieces that see them (a random encoder: little beyond them)
    matched = torch.zeros_like(change, dtype=torch.bool)
    matched[cut["token", "in", "word"].edge_index[0]] = True
    assert matched.sum() == 5 and (change[matched] > 1e-3).all() and (change[~matched] < 1e-3).all()


def test_probe_reads_a_relation_run(bert, spo, tmp_path, capsys):
    run = tmp_path / "run"
    assert cli(["train", "relation/semeval_minilm_wordnet_marked", "--out", str(run), "--set",
                *_sets(bert, spo, tmp_path / "cache", ["train.epochs=1"])]) == 0
    summary = (run / "summary.md").read_text()
    assert "## Knowledge probe (the dev split's first 10 inputs" in summary and "| semeval2010 |" in summary
    capsys.readouterr()
    assert cli(["probe", str(run), "--input", str(SAMPLE / "test.txt"), "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["inputs"] == 15 and 0 < figures["with_branch"] < 100 and figures["branch_tokens"] > 0
    assert len(figures["attention"]) == 2 and figures["queries"] > 0  # the tiny encoder's 2 layers
    assert all(0 < a < 100 for a in figures["attention"]) and 0 < figures["uniform"] < 100
    assert set(figures["score"]) == set(figures["score_cut"]) >= {"semeval2010", "accuracy"}
    assert "recall" not in figures
    assert cli(["probe", str(run), "--input", str(SAMPLE / "test.txt")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("## Knowledge probe\n\n15 inputs:") and "| layer 1 | layer 2 | uniform |" in out


def test_probe_refuses_a_relation_run_without_a_kg_and_a_missing_kg(bert, spo, tmp_path, capsys):
    run = tmp_path / "plain"
    assert cli(["train", "relation/semeval_minilm_entity_start", "--out", str(run), "--set",
                *_sets(bert, spo, tmp_path / "cache", ["data.kg=null", "train.max_steps=1"])]) == 0
    capsys.readouterr()
    assert cli(["probe", str(run), "--input", str(SAMPLE / "test.txt")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(run) in err and "'relation' has none" in err, err
    gone = tmp_path / "gone.spo"
    gone.write_text(TINY_SPO, encoding="utf-8")
    with_kg = tmp_path / "kg"
    assert cli(["train", "relation/semeval_minilm_wordnet", "--out", str(with_kg), "--set",
                *_sets(bert, gone, tmp_path / "cache", ["train.max_steps=1"])]) == 0
    gone.unlink()  # the run carries its copy (RUN/inputs/): the probe still reads it
    capsys.readouterr()
    assert cli(["probe", str(with_kg), "--input", str(SAMPLE / "test.txt")]) == 0
    for copy in (with_kg / "inputs").rglob("*.spo"):
        copy.unlink()  # now neither the copy nor the original is there
    capsys.readouterr()
    assert cli(["probe", str(with_kg), "--input", str(SAMPLE / "test.txt")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "gone.spo" in err and "Traceback" not in err, err
