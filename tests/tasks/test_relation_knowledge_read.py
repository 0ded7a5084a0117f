"""The relation transformer's knowledge keys end to end: data.entity_mask (training steps only, the
entities' pieces masked with their branches, markers and positions left), its one-line errors, the
marked + masked recipe, and ``graphmatch probe`` on a tiny trained relation run."""

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
    return tiny_bert_folder(tmp_path_factory.mktemp("bert") / "tiny", [*texts, *SENTENCES])


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
