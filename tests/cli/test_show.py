import argparse
import json
import re

import numpy as np
import pytest
from matplotlib.colors import to_rgb
from PIL import Image

from graphmatch.cli.main import main
from graphmatch.cli.show import LET_CLOSURES, _kg_texts, build_graph
from graphmatch.viz.layout import NODE_COLORS

RELATION = "The <e1>storm</e1> caused severe <e2>flooding</e2> in the valley."


@pytest.fixture(autouse=True)
def no_data_root(monkeypatch):
    """Every test says where its data come from."""
    monkeypatch.delenv("GRAPHMATCH_DATA", raising=False)


def _has_color(path, color: str) -> bool:
    with Image.open(path) as img:
        pixels = np.asarray(img.convert("RGB")).astype(int)
    rgb = np.array([round(255 * c) for c in to_rgb(color)])
    return bool((np.abs(pixels - rgb).max(axis=-1) <= 3).any())


def _args(**kw) -> argparse.Namespace:
    base = dict(text_b=None, kg=None, max_length=None, segmenters="jieba", no_senses=False, vocab=None, data_dir=None,
                select=None, pretrained=None)
    return argparse.Namespace(**{**base, **kw})


def test_kbert_png_with_the_sample_kg_offline(samples, tmp_path, capsys):
    out, matrix = tmp_path / "tree.png", tmp_path / "matrix.png"
    kg = str(samples / "kg" / "sample.spo")
    rc = main(["show", "我在北京吃苹果", "--kind", "kbert", "--kg", kg, "-o", str(out), "--matrix", str(matrix)])
    assert rc == 0
    stdout = capsys.readouterr().err
    assert "2 word" in stdout and "3 entity" in stdout  # 北京 (2 values) and 苹果 (1 value)
    assert out.is_file() and matrix.is_file()
    assert _has_color(out, NODE_COLORS["entity"]) and _has_color(out, NODE_COLORS["word"])
    with Image.open(out) as tree, Image.open(matrix) as vis:
        assert tree.width > vis.width  # the tree picture carries the matrix beside it
    rc = main(["show", "我在北京吃苹果", "--kind", "kbert", "--kg", kg, "--no-visible", "-o", str(tmp_path / "b.png")])
    with Image.open(tmp_path / "b.png") as alone, Image.open(out) as tree:
        assert rc == 0 and alone.width < tree.width


def test_kbert_html_shows_branches_and_their_visibility(samples, tmp_path):
    out = tmp_path / "tree.html"
    kg = str(samples / "kg" / "sample.spo")
    assert main(["show", "我在北京吃苹果", "--kind", "kbert", "--kg", kg, "-o", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert "http://" not in page and "https://" not in page
    for label in ("北京", "苹果", "类别 → 城市", "属于 → 中国", "类别 → 水果"):
        assert f">{label}</text>" in page
    assert "token -sees-&gt; token" in page and 'class="edge hidden" data-type="token -sees-&gt; token"' in page
    nodes = json.loads(re.search(r'id="graph-nodes">(.*?)</script>', page).group(1))
    branch_token = next(n for n in nodes.values() if n["type"] == "token" and n["attrs"]["branch"] == "True")
    assert set(branch_token["attrs"]) >= {"input_ids", "pos", "seg", "char_index"}


def test_kbert_with_hownet_and_the_bert_vocabulary(shared_data, tmp_path, capsys, monkeypatch):
    """The vocabulary under the data root is found, so the KG's values are never listed (for a vocabulary
    made from texts, only without one)."""
    import graphmatch.tasks.graph_kinds.kbert as kinds

    monkeypatch.setattr(kinds, "kg_texts", lambda kg: pytest.fail("the KG's values were listed"))
    out = tmp_path / "tree.html"
    rc = main(["show", "洗手间很干净，离火车站很近", "--kind", "kbert", "--data-dir", str(shared_data), "-o", str(out)])
    assert rc == 0
    captured = capsys.readouterr()
    assert "own characters" not in captured.err  # the real vocabulary was found
    page = out.read_text(encoding="utf-8")
    assert ">义原 → 设施</text>" in page and ">火车站</text>" in page
    nodes = json.loads(re.search(r'id="graph-nodes">(.*?)</script>', page).group(1))
    assert nodes["token:0"]["attrs"]["input_ids"] == "101"  # [CLS] in Google's vocabulary


def test_kbert_over_word_pieces_with_wordnet(minilm, tmp_path, capsys):
    """``--pretrained minilm``: an English checkpoint's word pieces; ``ice creams`` is one span of
    three pieces with WordNet's values of ``ice cream``."""
    out = tmp_path / "tree.html"
    argv = ["show", "The companies sold ice creams.", "--kind", "kbert", "--kg", "wordnet", "--pretrained", "minilm"]
    assert main([*argv, "-o", str(out)]) == 0
    assert "kbert graph (19 token, 2 word, 4 entity)" in capsys.readouterr().err
    page = out.read_text(encoding="utf-8")
    assert ">ice cream</text>" in page and ">##s</text>" in page and ">is a → frozen dessert</text>" in page
    nodes = json.loads(re.search(r'id="graph-nodes">(.*?)</script>', page).group(1))
    assert nodes["token:0"]["attrs"]["input_ids"] == "101"  # [CLS] in MiniLM's vocabulary


def test_a_checkpoint_without_vocab_txt_is_one_line(minilm, tmp_path, capsys):
    folder = tmp_path / "no_vocab"
    folder.mkdir()
    (folder / "config.json").write_text((minilm / "config.json").read_text())
    (tmp_path / "in.txt").write_text("Geese eat corn.\n", encoding="utf-8")  # the input is read first
    for command in (["show", "Geese eat corn.", "--kind", "kbert", "--kg", "wordnet", "-o", str(tmp_path / "t.png")],
                    ["inspect", "kbert", str(tmp_path / "in.txt")]):
        assert main([*command, "--pretrained", str(folder)]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and f"no vocab.txt (a BERT vocabulary) in the checkpoint folder " \
            f"{folder}" in err
    assert not (tmp_path / "t.png").exists()


def test_select_keeps_the_branches_that_fit(e5_small, shared_data, tmp_path, capsys):
    """``--select``: 笔记本 (a laptop here) loses the sememe 簿册 (a paper notebook), keeps 电脑."""
    text = "这台笔记本的键盘确实爽，跟台式机差不多，做工也相当不错"
    argv = ["show", text, "--kind", "kbert", "--pretrained", "e5-small", "--data-dir", str(shared_data)]
    assert main([*argv, "-o", str(tmp_path / "all.html")]) == 0
    assert "2 word, 4 entity" in capsys.readouterr().err
    assert main([*argv, "--select", "0.84", "-o", str(tmp_path / "kept.html")]) == 0
    captured = capsys.readouterr()
    assert "2 word, 2 entity" in captured.err
    assert "dropped 笔记本 → 簿册" in captured.err
    page = (tmp_path / "kept.html").read_text(encoding="utf-8")
    assert ">义原 → 电脑</text>" in page and "簿册</text>" not in page
    assert main(["show", text, "--kind", "kbert", "--select", "0.8", "-o", str(tmp_path / "x.png")]) == 2
    assert "--select scores K-BERT's branches with an encoder" in capsys.readouterr().err


def test_let_png_leaves_out_the_closures(shared_data, tmp_path, capsys):
    args = _args(kind="let", text="南京市长江大桥", text_b="长江大桥在南京", data_dir=str(shared_data), closures=False)
    data, options = build_graph(args)
    assert data["sense"].num_nodes > 0 and data["sememe"].num_nodes > 0
    assert options["hidden_edge_types"] == list(LET_CLOSURES)
    assert not set(LET_CLOSURES) & set(options["edge_types"])
    out = tmp_path / "lattice.png"
    rc = main(
        ["show", "南京市长江大桥", "长江大桥在南京", "--kind", "let", "--segmenters", "jieba",
         "--data-dir", str(shared_data), "-o", str(out)]
    )  # fmt: skip
    assert rc == 0 and _has_color(out, NODE_COLORS["sememe"]) and _has_color(out, NODE_COLORS["sense"])
    assert "0 sense" not in capsys.readouterr().err


def test_let_without_senses_works_offline(tmp_path, capsys):
    out = tmp_path / "lattice.html"
    rc = main(
        ["show", "南京市长江大桥", "长江大桥在南京", "--kind", "let", "--segmenters", "jieba", "--no-senses",
         "-o", str(out)]
    )  # fmt: skip
    assert rc == 0
    captured = capsys.readouterr()
    assert "0 sense" in captured.err
    page = out.read_text(encoding="utf-8")
    assert ">长江大桥</text>" in page and ">[SEP]</text>" in page
    assert 'class="item edge-item off" data-type="word -reach_fwd-&gt; word"' in page  # closures start hidden


def test_let_with_the_encoders_own_pieces(e5_small, tmp_path, capsys):
    out = tmp_path / "pieces.html"
    rc = main(["show", "苹果手机怎么样", "这个手机电池耐用吗？", "--kind", "let", "--pretrained", "e5-small",
               "--tokenization", "pieces", "--segmenters", "jieba", "--no-senses", "-o", str(out)])
    assert rc == 0
    printed = capsys.readouterr().err
    assert "(20 token, " in printed and ", 15 piece)" in printed  # <s> ▁ 苹果 手机 怎么样 </s> ▁ … ? </s>
    page = out.read_text(encoding="utf-8")
    assert ">苹果</text>" in page and ">&lt;s&gt;</text>" in page and "piece -covers-&gt; token" in page


def test_relation_png_and_html(tmp_path, capsys):
    png, html = tmp_path / "rel.png", tmp_path / "rel.html"
    assert main(["show", RELATION, "--kind", "relation", "-o", str(png)]) == 0
    assert main(["show", RELATION, "--kind", "relation", "-o", str(html), "--title", "a relation"]) == 0
    assert "13 token, 2 entity, 1 sentence" in capsys.readouterr().err  # 9 words + 4 entity markers
    assert _has_color(png, NODE_COLORS["entity"])
    page = html.read_text(encoding="utf-8")
    assert "<h1>a relation</h1>" in page and ">flooding</text>" in page


@pytest.mark.parametrize(
    "argv, message",
    [
        (["show", "no markup here", "--kind", "relation"], "missing entity marker <e1>"),
        (["show", RELATION, "b", "--kind", "relation"], "not a pair"),
        (["show", RELATION, "--kind", "relation", "--kg", "hownet"], "--kg applies to --kind kbert"),
        (["show", "南京", "--kind", "let", "--no-senses"], "give text and text_b"),
        (["show", "南京", "--kind", "kbert", "--kg", "no/such/file.spo"], "not found"),
        (["show", RELATION, "--kind", "relation", "--matrix", "m.png"], "--matrix"),
        (["show", RELATION, "--kind", "relation", "--data-dir", "no/such/dir"], "is not a folder"),
        (["show", RELATION, "--kind", "relation", "--max-length", "0"], "must be positive"),
        (["show", "x", "--kind", "kbert", "--kg", "none", "--pretrained", "no/such"], "no checkpoint folder"),
        (["show", "南京", "长江", "--kind", "let", "--tokenization", "pieces"], "give --pretrained"),
        (["show", "南京", "长江", "--kind", "let", "--tokenization", "words"], "chars or (with --pretrained) pieces"),
    ],
)
def test_bad_input_is_one_clear_error(argv, message, tmp_path, capsys):
    assert main([*argv, "-o", str(tmp_path / "out.png")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("graphmatch show: error:") and message in err


def test_unknown_picture_format(tmp_path, capsys):
    assert main(["show", RELATION, "--kind", "relation", "-o", str(tmp_path / "out.jpg")]) == 2
    assert ".png or .html" in capsys.readouterr().err
    assert not (tmp_path / "out.jpg").exists()


MATRIX = {
    # kind: {knowledge: (texts, extra arguments)}; every cell is drawn as PNG and as HTML
    "kbert": {
        "sample KG": (["我在北京吃苹果"], ["--kg", "SAMPLE_KG"]),
        "no match in the KG": (["今天天气很好"], ["--kg", "SAMPLE_KG"]),
        "no KG": (["我在北京吃苹果"], ["--kg", "none"]),
    },
    "let": {
        "HowNet senses": (["南京市长江大桥", "长江大桥在南京"], ["--data-dir", "SHARED"]),
        "no word with senses": (["Hello world", "12345 abc"], ["--data-dir", "SHARED"]),
        "no senses": (["南京市长江大桥", "长江大桥在南京"], ["--no-senses"]),
    },
    "relation": {"none": ([RELATION], [])},
}
CELLS = [(kind, knowledge, fmt) for kind, cells in MATRIX.items() for knowledge in cells for fmt in ("png", "html")]


@pytest.mark.parametrize("kind,knowledge,fmt", CELLS)
def test_every_kind_format_and_knowledge_draws(kind, knowledge, fmt, samples, request, tmp_path, capsys):
    texts, extra = MATRIX[kind][knowledge]
    if "SHARED" in extra:
        extra = [str(request.getfixturevalue("shared_data")) if a == "SHARED" else a for a in extra]
    extra = [str(samples / "kg" / "sample.spo") if a == "SAMPLE_KG" else a for a in extra]
    out = tmp_path / f"graph.{fmt}"
    segmenters = ["--segmenters", "jieba"] if kind == "let" else []
    assert main(["show", *texts, "--kind", kind, *segmenters, *extra, "-o", str(out)]) == 0
    captured = capsys.readouterr()  # stdout carries results only: the status line is on stderr
    printed = captured.err
    assert captured.out == "" and f"{kind} graph (" in printed and str(out) in printed
    if fmt == "png":
        with Image.open(out) as img:
            assert img.format == "PNG" and img.width > 200
    else:
        page = out.read_text(encoding="utf-8")
        assert "<svg" in page and f">{texts[0][:2]}" in page  # the first characters are drawn
    no_knowledge = knowledge.startswith("no ")
    if kind == "kbert":
        assert ("0 entity" in printed) == no_knowledge
    if kind == "let":
        assert ("0 sense" in printed) == no_knowledge


def test_text_from_stdin(monkeypatch, tmp_path, capsys):
    import io

    raw = io.BytesIO("\ufeffThe <e1>storm</e1> caused <e2>floods</e2>.\n".encode())
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(raw, encoding="utf-8"))
    out = tmp_path / "rel.html"
    assert main(["show", "-", "--kind", "relation", "-o", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert ">storm</text>" in page and ">-</text>" not in page and "\ufeff" not in page
    monkeypatch.setattr("sys.stdin", io.StringIO("南京市长江大桥\n长江大桥在南京\n"))  # a pair on two lines
    assert main(["show", "-", "--kind", "let", "--no-senses", "--segmenters", "jieba", "-o", str(out)]) == 0
    assert ">长江大桥</text>" in out.read_text(encoding="utf-8")
    monkeypatch.setattr("sys.stdin", io.StringIO("\n\n"))
    assert main(["show", "-", "--kind", "relation", "-o", str(out)]) == 2
    assert "no input" in capsys.readouterr().err


def test_kbert_pair_read_apart(samples, tmp_path, capsys):
    """--pair-encoding separate draws the visibility a bi-encoder reads: no token sees the other
    text's, each text's own pairs as before; a single text or another kind is one line."""

    from graphmatch.graphs.kbert import SentenceTreeBuilder, second_text, visible_edge_index
    from graphmatch.knowledge import KnowledgeGraph
    from graphmatch.text import CharTokenizer

    kg = KnowledgeGraph.from_spo(samples / "kg" / "sample.spo")
    tokenizer = CharTokenizer.from_texts(["我在北京吃苹果", "北京的苹果", *_kg_texts(kg)])
    data = SentenceTreeBuilder(kg, tokenizer, keep_text=True)("我在北京吃苹果", "北京的苹果")
    joint, apart = visible_edge_index(data), visible_edge_index(data, tokenizer.sep_id)
    b = second_text(data["token"].input_ids.unsqueeze(0), tokenizer.sep_id)[0]
    crosses = b[joint[0]] != b[joint[1]]
    assert crosses.any() and not (b[apart[0]] != b[apart[1]]).any()
    assert set(map(tuple, apart.t().tolist())) == set(map(tuple, joint[:, ~crosses].t().tolist()))

    out = tmp_path / "pair.png"
    kgfile = str(samples / "kg" / "sample.spo")
    assert main(["show", "我在北京吃苹果", "北京的苹果", "--kind", "kbert", "--kg", kgfile, "--pair-encoding",
                 "separate", "-o", str(out)]) == 0 and out.is_file()
    capsys.readouterr()
    assert main(["show", "我在北京吃苹果", "--kind", "kbert", "--kg", kgfile, "--pair-encoding", "separate",
                 "-o", str(tmp_path / "one.png")]) == 2
    err = capsys.readouterr().err
    assert "--pair-encoding separate reads a K-BERT pair apart" in err and len(err.strip().splitlines()) == 1
