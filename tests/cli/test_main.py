"""The command's error rule: a user's error is one line on stderr with exit code 2, never a
traceback (``--debug`` shows it); a bug keeps its traceback; warnings are one line."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from graphmatch.cli import main as cli
from graphmatch.cli.main import main

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.usefixtures("no_data_root")


@pytest.fixture()
def no_data_root(monkeypatch):
    monkeypatch.delenv("GRAPHMATCH_DATA", raising=False)


def one_line_error(capsys, argv: list[str]) -> str:
    assert main(argv) == 2, argv
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_a_folder_where_a_file_is_expected(tmp_path, capsys):
    folder = tmp_path / "d"
    folder.mkdir()
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n", encoding="utf-8")
    assert f"{folder} is a folder" in one_line_error(capsys, ["inspect", "kbert", "--vocab", str(vocab), str(folder)])
    text = tmp_path / "in.txt"
    text.write_text("北京\n", encoding="utf-8")
    assert f"{folder}: is a folder" in one_line_error(capsys, ["inspect", "kbert", "--vocab", str(folder), str(text)])
    assert "is a folder" in one_line_error(capsys, ["score", "semeval2010", str(folder), str(folder)])
    err = one_line_error(capsys, ["evaluate", str(tmp_path / "run"), "--predictions", str(folder)])
    assert "--predictions" in err and "is a folder" in err


def test_a_text_file_as_checkpoint(tmp_path, capsys):
    text = tmp_path / "notes.txt"
    text.write_text("these are my notes, not a model\n" * 50, encoding="utf-8")
    err = one_line_error(capsys, ["predict", str(text), "文本"])
    assert "notes.txt is not a checkpoint" in err and "weights_only" not in err


def test_invalid_utf8_names_the_file_and_line(tmp_path, capsys):
    src = tmp_path / "in.txt"
    src.write_bytes("第一行\n".encode() + b"ab\xffc\n")
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n", encoding="utf-8")
    err = one_line_error(capsys, ["inspect", "kbert", "--vocab", str(vocab), str(src)])
    assert "in.txt:2: not valid UTF-8 (byte 0xff" in err


def test_debug_shows_the_traceback(tmp_path):
    folder = tmp_path / "d"
    folder.mkdir()
    with pytest.raises(IsADirectoryError):
        main(["score", "semeval2010", str(folder), str(folder), "--debug"])


@pytest.fixture()
def boom(monkeypatch):
    """A subcommand ``boom`` whose ``run`` raises what the test sets in ``raised[0]``."""
    raised: list[BaseException] = []
    build = cli.build_parser

    def build_parser() -> argparse.ArgumentParser:
        parser = build()
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))

        def run(args):
            warnings.warn("a thing to know", UserWarning, stacklevel=1)
            raise raised[0]

        sub.add_parser("boom").set_defaults(func=run)
        return parser

    monkeypatch.setattr(cli, "build_parser", build_parser)
    return raised


@pytest.mark.parametrize(
    "error,message",
    [
        (IsADirectoryError(21, "Is a directory", "some/dir"), "some/dir: is a folder; a file was expected"),
        (NotADirectoryError(20, "Not a directory", "a/f/x"), "a/f/x: a part of this path is a file, not a folder"),
        (PermissionError(13, "Permission denied", "locked.txt"), "locked.txt: permission denied"),
        (FileNotFoundError(2, "No such file or directory", "gone.txt"), "gone.txt: no such file or folder"),
        (KeyError("unknown task 'x'; known tasks: kbert"), "unknown task 'x'; known tasks: kbert"),
    ],
)
def test_user_errors_are_one_line(boom, capsys, error, message):
    boom.append(error)
    assert main(["boom"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == ["graphmatch boom: warning: a thing to know", f"graphmatch boom: error: {message}"]


@pytest.mark.parametrize("error", [KeyError("y"), TypeError("unsupported operand"), AttributeError("no attribute")])
def test_bugs_keep_their_traceback(boom, error):
    boom.append(error)
    with pytest.raises(type(error)):
        main(["boom"])


def test_ctrl_c_is_one_line(boom, capsys):
    boom.append(KeyboardInterrupt())
    assert main(["boom"]) == 130
    assert capsys.readouterr().err.splitlines()[-1] == "graphmatch boom: interrupted"


def _after_deferral(body: str) -> list[str]:
    """The lines ``body`` prints in a fresh interpreter after :func:`defer_heavy_imports` (``sys``
    imported), as the console script starts."""
    code = "import sys\nfrom graphmatch.cli.lazy_imports import defer_heavy_imports\ndefer_heavy_imports()\n" + body
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}).stdout.splitlines()


def test_the_command_defers_pyg_heavy_imports():
    """What ``graphmatch inspect``/``show`` import: PyG without torch._dynamo, transformers or PyG's
    datasets; a later use of them still works."""
    out = _after_deferral(
        "from graphmatch.graphs.kbert import SentenceTreeBuilder\n"
        "from graphmatch.graphs.let import LatticePairBuilder\n"
        "import torch_geometric\n"
        "ran = ['torch._dynamo.eval_frame', 'sympy', 'torch_geometric.datasets.planetoid', 'transformers']\n"
        "print('torch_geometric' in sys.modules, [name for name in ran if name in sys.modules])\n"
        "import torch\n"
        "from torch_geometric.datasets import KarateClub\n"
        "import lightning.pytorch\n"
        "print(torch._dynamo.OptimizedModule.__name__, KarateClub.__name__, torch_geometric.datasets.__name__,\n"
        "      sys.modules['torch._dynamo'] is torch._dynamo, type(torch._dynamo).__name__)\n"
    )
    assert out == ["True []", "OptimizedModule KarateClub torch_geometric.datasets True module"]


def test_transformers_models_load_after_the_deferral():
    """transformers' models import DTensor, which needs the whole of torch._dynamo: the finder
    loads a deferred torch._dynamo before the first transformers module, never earlier."""
    out = _after_deferral(
        "import torch_geometric\n"
        "print(type(sys.modules['torch._dynamo']).__name__)\n"
        "from transformers import BertConfig, BertModel\n"
        "model = BertModel(BertConfig(vocab_size=10, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,\n"
        "                             intermediate_size=8))\n"
        "print(type(sys.modules['torch._dynamo']).__name__, type(model).__name__)\n"
    )
    assert out == ["_LazyModule", "module BertModel"]


def test_deferring_twice_adds_one_finder(monkeypatch):
    from graphmatch.cli.lazy_imports import LazyFinder, defer_heavy_imports

    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    defer_heavy_imports()
    defer_heavy_imports()
    assert sum(isinstance(f, LazyFinder) for f in sys.meta_path) == 1 and isinstance(sys.meta_path[0], LazyFinder)
    assert LazyFinder().find_spec("json") is None  # other names: the ordinary finders


@pytest.mark.parametrize(("argv", "stdin"), [
    (["inspect", "kbert", "--kg", "hownet", "-"], "中国的首都是北京\n"),
    (["inspect", "kbert", "--kg", "wordnet", "--pretrained", "minilm", "-"], "The companies sold ice creams.\n"),
    (["inspect", "let", "--segmenters", "jieba,thulac", "-"], "南京市长江大桥\t长江大桥在南京\n"),
], ids=["kbert", "kbert-word-pieces", "let"])
def test_inspect_starts_without_torch(shared_data, argv, stdin):
    """``inspect kbert|let`` build with the NumPy cores (``kbert_core``, ``let_core``): torch, the
    slowest import, is never loaded, and the output is the full graph."""
    code = ("import runpy, sys\n"
            "sys.argv = ['graphmatch', *sys.argv[1:]]\n"
            "try:\n"
            "    runpy.run_module('graphmatch.cli.main', run_name='__main__')\n"
            "finally:\n"
            "    print('torch' in sys.modules, 'torch_geometric' in sys.modules, file=sys.stderr)\n")
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-c", code, *argv, "--data-dir", str(shared_data)], input=stdin,
                          cwd=REPO, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines()[-1] == "False False"
    row = json.loads(proc.stdout)
    assert row["visible"] if argv[1] == "kbert" else row["words"]


@pytest.mark.parametrize("argv,message", [
    (["show", "文本", "--kind", "kbret", "-o", "x.png"],
     "graphmatch show: error: argument --kind: invalid choice: 'kbret' (choose from 'kbert', 'let', 'relation') "
     "(see graphmatch show --help)"),
    (["evaluate", "run", "--split", "train"], "graphmatch evaluate: error: argument --split: invalid choice: 'train' "
                                              "(choose from 'dev', 'test') (see graphmatch evaluate --help)"),
    (["trian"], "graphmatch: error: argument COMMAND: invalid choice: 'trian'"),
    (["show", "--kind", "let"], "graphmatch show: error: the following arguments are required:"),
])
def test_unknown_choices_and_missing_arguments_are_one_line(capsys, argv: list[str], message: str) -> None:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith(message), err
