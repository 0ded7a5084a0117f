"""Pictures of Chinese relation inputs: ``show --kind relation`` on the four-column form with
``--tokenization``, ``--explain`` in the CJK font, titles without raw tabs."""

import argparse
import warnings

import pytest

from graphmatch.cli.main import main
from graphmatch.cli.show import build_graph
from graphmatch.viz.attention import draw_token_attention
from graphmatch.viz.titles import input_title

LINE = "母亲\t母亲四十岁时\t无关系\t母亲四十岁时生下了他。"


def _args(text, **kw):
    base = dict(text=text, text_b=None, kind="relation", kg=None, max_length=None, tokenization=None)
    return argparse.Namespace(**{**base, **kw})


def test_show_takes_the_four_column_form_and_draws_the_model_tokens(tmp_path, capsys):
    data, _ = build_graph(_args(LINE))
    tokens = list(data["token"].text)
    assert tokens[:5] == ["<e2>", "<e1>", "母", "亲", "</e1>"] and "</e2>" in tokens  # nested: e1 inside e2
    assert list(data["entity"].text) == ["母 亲", "母 亲 四 十 岁 时"]
    marked = "<e1>故宫</e1>位于<e2>北京</e2>市中心。"
    chars, _ = build_graph(_args(marked))  # Chinese: characters by default
    words, _ = build_graph(_args(marked, tokenization="words"))  # word runs on request
    assert "宫" in list(chars["token"].text) and "宫" not in list(words["token"].text)
    three, _ = build_graph(_args("母亲\t母亲四十岁时\t母亲四十岁时生下了他。", tokenization="jieba"))
    assert len(three["token"].text) < len(tokens)  # a segmenter's words
    out = tmp_path / "rel.png"
    assert main(["show", LINE, "--kind", "relation", "-o", str(out), "--tokenization", "chars"]) == 0
    assert out.is_file() and "relation graph (15 token, 2 entity, 1 sentence)" in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "message"), [
    (["a\tb", "--kind", "relation"], "expected a marked sentence or head<TAB>tail[<TAB>relation]<TAB>sentence"),
    ([LINE, "--kind", "relation", "--tokenization", "bpe"], "unknown tokenization 'bpe'"),
    (["洗手间很干净", "--kind", "kbert", "--tokenization", "chars"], "--tokenization applies to --kind relation"),
])
def test_bad_relation_input_is_one_line(argv, message, tmp_path, capsys):
    assert main(["show", *argv, "-o", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_titles_show_fields_with_visible_separators():
    assert input_title(LINE) == "母亲  |  母亲四十岁时  |  无关系  |  母亲四十岁时生下了他。"
    assert input_title("a\r\n", "b\tc") == "a  |  b  |  c"
    assert "\t" not in input_title("x \t y\n")


def test_explain_draws_chinese_in_the_cjk_font(tmp_path, cjk_font):
    tokens = ["<e1>", "故", "宫", "</e1>", "位", "于", "<e2>", "北", "京", "</e2>"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        draw_token_attention(tokens, [0.1] * 10, [[1, 2], [7, 8]], [[0.2, 0.3, 0.5], [0.6, 0.2, 0.2]],
                             "位于  (p = 0.90)\tx", tmp_path / "explain.png")
    assert not [w for w in caught if "Glyph" in str(w.message)], [str(w.message) for w in caught]
    assert (tmp_path / "explain.png").is_file()
