"""Issue 44's bad input: each case that was silently wrong or messy is one line on stderr and exit
code 2 (the README's promise), or a one-line warning where the run may go on."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from graphmatch.cli.main import MAX_MESSAGE, main

TINY = ["model.hidden_size=16", "model.num_layers=1", "model.num_heads=2", "model.intermediate_size=16",
        "model.max_position=64", "data.max_length=32", "train.progress=false", "train.epochs=1",
        "train.batch_size=8"]
RECIPE = "kbert/chnsenticorp_hownet_quick"
LIMITS = ["data.limit.train=16", "data.limit.dev=8", "data.limit.test=8"]


@pytest.fixture(scope="module")
def kbert_run(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    run = tmp_path_factory.mktemp("kbert") / "run"
    assert main(["train", RECIPE, "--out", str(run), "--set", *TINY, *LIMITS, f"data.root={shared_data}",
                 f"data.cache_dir={run.parent / 'cache'}"]) == 0
    return run


def _dataset(folder: Path, train: str, dev: str = "label\ttext_a\n0\t苹果\n1\t很好\n") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "train.tsv").write_text(train, encoding="utf-8")
    (folder / "dev.tsv").write_text(dev, encoding="utf-8")
    (folder / "test.tsv").write_text(dev, encoding="utf-8")
    return folder


def _mixed_labels(tmp_path: Path, shared_data: Path) -> tuple[list[str], str]:
    folder = _dataset(tmp_path / "mixed", "label\ttext_a\n0\t苹果不好\n1\t很好\n0.0\t不好\n1.0\t北京很好\n")
    return (["train", RECIPE, "--out", str(tmp_path / "run"), "--set", *TINY, f"data.dataset={folder}",
             f"data.root={shared_data}", f"data.cache_dir={tmp_path / 'cache'}"],
            f"{folder / 'train.tsv'}:4: label '0.0' is the number of label '0' ({folder / 'train.tsv'}:2)")


def _max_length_1(tmp_path: Path, shared_data: Path) -> tuple[list[str], str]:
    return (["train", RECIPE, "--out", str(tmp_path / "run"), "--set", *TINY, *LIMITS, "data.max_length=1",
             f"data.root={shared_data}", f"data.cache_dir={tmp_path / 'cache'}"],
            "data.max_length=1 holds only the [CLS] tag and no text token: give at least 2")


def _inspect(kind: str, length: str, message: str):
    def case(tmp_path: Path, shared_data: Path) -> tuple[list[str], str]:
        source = tmp_path / "input.txt"
        source.write_text("<e1>很</e1>好<e2>的</e2>\t很好\n", encoding="utf-8")
        return ["inspect", kind, "--max-length", length, str(source)], message
    return case


#: a "billion laughs": nine levels of nine aliases, 9**9 values once expanded
LEVELS = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"] + [
    f"{b}: &{b} [{', '.join([f'*{a}'] * 9)}]" for a, b in zip("abcdefgh", "bcdefghi", strict=True)]
BOMB = "task: kbert\n" + "\n".join(LEVELS) + "\ndata:\n  dataset: *i\n"


def _billion_laughs(tmp_path: Path, shared_data: Path) -> tuple[list[str], str]:
    recipe = tmp_path / "bomb.yaml"
    recipe.write_text(BOMB, encoding="utf-8")
    return ["train", str(recipe)], f"recipe {recipe}: its aliases (*name) expand it to more than 100,000 values"


def _billion_laughs_set(tmp_path: Path, shared_data: Path) -> tuple[list[str], str]:
    return (["train", RECIPE, "--set", "data.dataset={" + ", ".join(LEVELS) + ", j: *i}"],
            "--set data.dataset: its aliases (*name) expand it to more than 100,000 values")


def _long_value(tmp_path: Path, shared_data: Path) -> tuple[list[str], str]:
    return (["train", RECIPE, "--set", f"data.dataset={'x' * 5000}", "--out", str(tmp_path / "run")],
            "xxx: the name is too long for this system")


def _truncated_safetensors(tmp_path: Path, shared_data: Path) -> tuple[list[str], str]:
    from tiny_bert import tiny_bert_folder

    folder = tiny_bert_folder(tmp_path / "bert", ["很好", "不好"], hidden=16, layers=1)
    weights = folder / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:100])
    return (["train", RECIPE, "--out", str(tmp_path / "run"), "--set", *TINY, *LIMITS, f"model.pretrained={folder}",
             f"data.root={shared_data}", f"data.cache_dir={tmp_path / 'cache'}"],
            f"cannot read the weights {weights}: SafetensorError")


def stalled_server() -> str:
    """The address of a local TCP server that accepts connections and never answers (one per
    process, on a daemon thread)."""
    global _STALLED
    if _STALLED is None:
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen(64)
        held: list[socket.socket] = []
        threading.Thread(target=lambda: [held.append(server.accept()[0]) for _ in iter(int, 1)], daemon=True).start()
        _STALLED = f"http://127.0.0.1:{server.getsockname()[1]}"
    return _STALLED


_STALLED: str | None = None


def _stalled_hub(tmp_path: Path, shared_data: Path) -> tuple[list[str], str, dict[str, str]]:
    env = {"HF_ENDPOINT": stalled_server(), "HF_HUB_CACHE": str(tmp_path / "hub"), "GRAPHMATCH_HUB_TIMEOUT": "2"}
    return (["train", RECIPE, "--out", str(tmp_path / "run"), "--set", *TINY, *LIMITS,
             "model.pretrained=someone/stalled-model", f"data.root={shared_data}",
             f"data.cache_dir={tmp_path / 'cache'}"],
            "cannot be downloaded (the hub did not answer within 2 s; GRAPHMATCH_HUB_TIMEOUT sets the limit)", env)


def _bad_hub_timeout(tmp_path: Path, shared_data: Path) -> tuple[list[str], str, dict[str, str]]:
    argv, _, env = _stalled_hub(tmp_path, shared_data)
    return argv, "GRAPHMATCH_HUB_TIMEOUT='0': give the hub's timeout in seconds, a positive number", {
        **env, "GRAPHMATCH_HUB_TIMEOUT": "0"}


CASES = {
    "a hub that never answers": _stalled_hub,
    "GRAPHMATCH_HUB_TIMEOUT=0": _bad_hub_timeout,
    "truncated model.safetensors": _truncated_safetensors,
    "billion laughs recipe": _billion_laughs,
    "billion laughs --set": _billion_laughs_set,
    "a 5000-character value": _long_value,
    "model.max_position=10000000": lambda tmp_path, shared_data: (
        ["train", RECIPE, "--set", "model.max_position=10000000"],
        "model.max_position must be an integer in [1, 65536], got 10000000"),
    "mixed label spellings": _mixed_labels,
    "data.max_length too short": _max_length_1,
    **{f"inspect {kind} --max-length {n}": _inspect(kind, n, message)
       for kind, message in (("kbert", "max_length must be at least 1"),
                             ("let", "max_length must leave room for [CLS], [SEP], [SEP]"),
                             ("relation", "max_length must be at least 2"))
       for n in ("0", "-5")},
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_one_line_and_exit_2(case: str, tmp_path: Path, shared_data: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GRAPHMATCH_DATA", str(shared_data))
    argv, message, *env = CASES[case](tmp_path, shared_data)
    for name, value in (env[0] if env else {}).items():
        monkeypatch.setenv(name, value)
        if name == "HF_ENDPOINT":  # read when huggingface_hub is imported
            import huggingface_hub.constants

            monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", value)
    capsys.readouterr()  # what making the case printed
    start = time.monotonic()
    assert main(argv) == 2
    elapsed = time.monotonic() - start
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith(f"graphmatch {argv[0]}: error: ") and message in lines[0], lines[0]
    assert len(lines[0]) <= MAX_MESSAGE + len(f"graphmatch {argv[0]}: error: ")
    assert elapsed < 30, f"{elapsed:.1f} s"
    assert not (tmp_path / "run" / ".owner.lock").exists()


@pytest.mark.parametrize("argv", [["evaluate", "RUN", "--set", "task=relation"],
                                  ["evaluate", "RUN", "--set", "task=relation", "data.root=/nowhere"]])
def test_evaluate_refuses_another_task(kbert_run: Path, argv: list[str], capsys) -> None:
    from graphmatch.engine import evaluate

    capsys.readouterr()
    assert main([str(kbert_run) if a == "RUN" else a for a in argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["graphmatch evaluate: error: --set task=relation: task cannot change on a run (this run's is "
                   "'kbert'); train a new run for another task"]
    with pytest.raises(ValueError, match="task cannot change on a run"):  # the library's own check
        evaluate(kbert_run / "best.ckpt", overrides=["task=relation"])


def test_a_max_length_of_the_leading_tags_alone_is_refused_by_the_builder(shared_data: Path) -> None:
    from graphmatch.graphs.kbert import TreeOptions
    from graphmatch.graphs.kbert.core import TreeCore
    from graphmatch.text import CharTokenizer

    tokenizer = CharTokenizer.default(str(shared_data))
    with pytest.raises(ValueError, match=r"max_length=1 holds only the leading tags \(\[CLS\]\) and no text token"):
        TreeCore(None, tokenizer, TreeOptions(max_length=1))
    assert TreeCore(None, tokenizer, TreeOptions(max_length=1, kind="ner", predicate=True)).max_length == 1
    assert TreeCore(None, tokenizer, TreeOptions(max_length=2)).max_length == 2


def test_predict_leaves_gold_labels_outside_the_run_out_of_the_scores(kbert_run: Path, tmp_path: Path,
                                                                      capsys) -> None:
    source = tmp_path / "gold.tsv"
    source.write_text("label\ttext_a\n1.0\t很好\n2\t不好\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["predict", str(kbert_run), "--input", str(source), "--output", str(tmp_path / "out.jsonl"),
                 "--no-progress"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"graphmatch predict: warning: {source}:2: gold label '1.0' is not one of the run's labels "
                   "(0, 1); 2 of 2 labelled lines have such labels and are left out of the scores"]
    source.write_text("label\ttext_a\n1\t很好\n2\t不好\n", encoding="utf-8")
    assert main(["predict", str(kbert_run), "--input", str(source), "--output", str(tmp_path / "out.jsonl"),
                 "--no-progress"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert "3: gold label '2'" in err[0] and "1 of 2 labelled lines" in err[0]
    assert err[1].startswith("1 gold labels: accuracy ")


def test_kg_fields_with_spaces_are_stripped_and_counted(tmp_path: Path, shared_data: Path, capsys,
                                                        monkeypatch) -> None:
    monkeypatch.setenv("GRAPHMATCH_DATA", str(shared_data))
    spo = tmp_path / "padded.spo"
    spo.write_text("苹果\t类别\t水果\n酒店 \t类别\t住宿\n北京\t 位于 \t中国\n", encoding="utf-8")
    source = tmp_path / "input.txt"
    source.write_text("酒店很好\n", encoding="utf-8")
    assert main(["inspect", "kbert", "--kg", str(spo), str(source)]) == 0
    captured = capsys.readouterr()
    assert captured.err.strip().splitlines() == [
        f"graphmatch inspect: warning: {spo}:2: 2 line(s) of the knowledge graph have spaces around a subject, "
        "predicate or object (first here); read with the spaces stripped"]
    assert "".join(json.loads(captured.out)["tokens"]).startswith("[CLS]酒店类别住宿很好")


def test_resume_warns_about_a_changed_kg_and_the_epoch_line_names_the_selected_step(
        tmp_path: Path, shared_data: Path, capsys) -> None:
    import re

    spo = tmp_path / "kg.spo"
    spo.write_text("苹果\t类别\t水果\n酒店\t类别\t住宿\n", encoding="utf-8")
    texts = ["苹果很好吃", "酒店不好", "北京很好", "手机很差"] * 4
    rows = "".join(f"{i % 2}\t{text}\n" for i, text in enumerate(texts))
    dev = "label\ttext_a\n" + "".join(rows.splitlines(keepends=True)[:8])
    folder = _dataset(tmp_path / "data", "label\ttext_a\n" + rows, dev)
    common = [*TINY, "train.epochs=3", "train.batch_size=4", "train.val_every_steps=2", f"data.dataset={folder}",
              f"data.kg={spo}",
              f"data.root={shared_data}", f"data.cache_dir={tmp_path / 'cache'}"]
    run, again = tmp_path / "run", tmp_path / "again"
    assert main(["train", RECIPE, "--out", str(run), "--set", *common]) == 0
    inputs = json.loads((run / "inputs.json").read_text())
    assert set(inputs) >= {"kg", "vocab", "train data", "dev data", "test data"}
    before = inputs["kg"]["sha256"]
    spo.write_text("苹果\t类别\t水果\n酒店\t类别\t宾馆\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["train", "--resume", str(run / "best.ckpt"), "--out", str(again)]) == 0
    err = capsys.readouterr().err
    after = json.loads((again / "inputs.json").read_text())["kg"]["sha256"]
    assert after != before
    assert (f"graphmatch train: warning: {spo}: the kg file changed since the checkpoint was trained (sha256 "
            f"{before[:16]}… then, {after[:16]}… now); the run goes on with it as it is now") in err
    shown = re.findall(r"\(best [\d.]+, step (\d+)\)", err)
    assert shown and int(shown[-1]) == json.loads((again / "metrics.json").read_text())["best_step"], err


def test_a_checkpoint_refused_for_a_pickle_global_names_it(kbert_run: Path, tmp_path: Path, capsys) -> None:
    import os
    import shutil

    import torch

    run = tmp_path / "run"
    shutil.copytree(kbert_run, run)
    (run / "COMPLETE").unlink()
    for name in ("best.ckpt", "last.ckpt"):
        torch.save({"graphmatch": {}, "state_dict": {}, "hook": os.getcwd}, run / name)
    capsys.readouterr()
    for argv, ckpt in ((["evaluate", str(run / "best.ckpt")], "best.ckpt"),
                       (["train", "--resume", str(run)], "last.ckpt")):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err[-1] == (f"graphmatch {argv[0]}: error: {run / ckpt} is refused: it names the Python global "
                           f"{os.getcwd.__module__}.getcwd, which a checkpoint may not hold (loading it could run "
                           "code); nothing was run"), err
        assert not (run / ".owner.lock").exists()


def test_train_parses_the_kg_once_for_every_split(tmp_path: Path, shared_data: Path, monkeypatch) -> None:
    """One parse and one K-Query trie per KG file, shared by the builders of the three splits."""
    from graphmatch.knowledge import KnowledgeGraph
    from graphmatch.knowledge.trie import FlatTrie

    spo = tmp_path / "kg.spo"
    spo.write_text("苹果\t类别\t水果\n酒店\t类别\t住宿\n", encoding="utf-8")
    parsed, tries = [], []
    real = KnowledgeGraph.from_spo.__func__
    real_trie = FlatTrie._compile

    def counting(cls, paths, on_error="raise", **kwargs):
        parsed.append(paths)
        return real(cls, paths, on_error, **kwargs)

    def counting_trie(self, keys, level_ptr, ends, words):
        tries.append(len(words))
        real_trie(self, keys, level_ptr, ends, words)

    monkeypatch.setattr(KnowledgeGraph, "from_spo", classmethod(counting))
    monkeypatch.setattr(FlatTrie, "_compile", counting_trie)
    folder = _dataset(tmp_path / "data", "label\ttext_a\n0\t苹果不好\n1\t酒店很好\n0\t不好\n1\t北京很好\n")
    assert main(["train", RECIPE, "--out", str(tmp_path / "run"), "--set", *TINY, f"data.dataset={folder}",
                 f"data.kg={spo}", f"data.root={shared_data}", f"data.cache_dir={tmp_path / 'cache'}"]) == 0
    assert len(parsed) == 1
    assert tries == [2]  # the two subjects, once


def test_a_cached_trie_shares_the_strings_of_its_words(tmp_path: Path) -> None:
    from graphmatch.knowledge.trie import CACHE_MIN_WORDS, FlatTrie

    words = [f"词{i}" for i in range(CACHE_MIN_WORDS)]
    built = FlatTrie(words, cache_dir=tmp_path)
    read = FlatTrie(words, cache_dir=tmp_path)
    assert len(list(tmp_path.iterdir())) == 1 and read.words == built.words == words
    assert all(a is b for a, b in zip(read.words, words, strict=True))  # the caller's strings, not copies
    twice = [*words, words[0]]  # a repeated word: the stored words (without it) are read back
    assert FlatTrie(twice, cache_dir=tmp_path).words == FlatTrie(twice, cache_dir=False).words == words
    codes = np.array([ord(c) for c in "x词12y"])
    assert FlatTrie(words, cache_dir=tmp_path).longest(codes, np.full(5, 5))[0].tolist() == [0, 3, 0, 0, 0]


def test_make_big_kg_writes_a_cn_dbpedia_shaped_graph(tmp_path: Path) -> None:
    from benchmark_scripts import load

    from graphmatch.knowledge import KnowledgeGraph

    out = tmp_path / "big.spo"
    load("make_big_kg").main(["--triples", "5000", "--out", str(out), "--seed", "3"])
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 5000
    subjects, predicates, objects = zip(*(line.split("\t") for line in lines), strict=True)
    assert all(2 <= len(s) <= 12 and all("\u4e00" <= c <= "\u9fff" for c in s) for s in subjects)
    assert len(set(subjects)) > 4000 and 5 <= len(set(predicates)) <= 10
    counts = sorted((objects.count(o) for o in set(objects)), reverse=True)
    assert counts[0] > 20 * counts[len(counts) // 2]  # a long tail of objects
    assert len(KnowledgeGraph.from_spo(out)) == len(set(subjects))


def test_an_empty_input_is_refused_before_the_kg_loads(tmp_path: Path, shared_data: Path, capsys,
                                                       monkeypatch) -> None:
    from graphmatch.knowledge import KnowledgeGraph

    def refuse(*args, **kwargs):
        raise AssertionError("the KG was loaded")

    monkeypatch.setattr(KnowledgeGraph, "from_spo", refuse)
    monkeypatch.setenv("GRAPHMATCH_DATA", str(shared_data))
    spo, empty = tmp_path / "kg.spo", tmp_path / "empty.txt"
    spo.write_text("苹果\t类别\t水果\n", encoding="utf-8")
    empty.write_text("\n  \n", encoding="utf-8")
    assert main(["inspect", "kbert", "--kg", str(spo), str(empty)]) == 2
    assert capsys.readouterr().err == "graphmatch inspect: error: no input: every line is empty\n"


def test_a_hub_that_never_answers_ends_train_within_the_timeout(tmp_path: Path, shared_data: Path) -> None:
    """A real ``train`` process whose hub endpoint accepts and never answers: one line within the
    timeout (2 s a request; huggingface_hub's own telemetry look-up waits up to 3 s more), exit 2,
    no ``.owner.lock``."""
    argv, message, env = _stalled_hub(tmp_path, shared_data)
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, **env, "PYTHONPATH": str(root), "GRAPHMATCH_DATA": str(shared_data)}
    probe = ("import sys, time; from graphmatch.cli.main import main; import huggingface_hub; "
             "start = time.monotonic(); status = main(sys.argv[1:]); "
             "print(f'{time.monotonic() - start:.2f}'); sys.exit(status)")
    proc = subprocess.run([sys.executable, "-c", probe, *argv], env=env, capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "'someone/stalled-model'" in lines[0], proc.stderr
    assert float(proc.stdout.split()[-1]) < 2 * 2 + 3 + 20  # two bounded requests; generous for a loaded machine
    assert not (tmp_path / "run" / ".owner.lock").exists() and not (tmp_path / "run").exists()


def test_hub_requests_get_the_timeout_only_where_they_have_none() -> None:
    import httpx2
    from huggingface_hub import get_session

    from graphmatch.pretrained.hub import bounded_requests

    session = get_session()
    before = list(session.event_hooks["request"])
    with bounded_requests(2.5):
        request = session.build_request("GET", "http://127.0.0.1:9/x", timeout=httpx2.Timeout(None, connect=7))
        for hook in session.event_hooks["request"]:
            hook(request)
    assert request.extensions["timeout"] == {"connect": 7, "read": 2.5, "write": 2.5, "pool": 2.5}
    assert session.event_hooks["request"] == before
