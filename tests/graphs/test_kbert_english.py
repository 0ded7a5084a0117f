"""K-BERT over word pieces (English): K-Query over lemmatised words with stop words, branches of
word pieces after a matched span's last piece, soft positions, segments, visibility, the cut,
the corpus builder and the knowledge coverage. Expected trees are worked out by hand from
K-BERT's definitions with the real MiniLM vocabulary (ids looked up in its vocab.txt)."""

from __future__ import annotations

import numpy as np
import pytest
from test_kbert_corpus import assert_same, one_by_one

from graphmatch.graphs.kbert import (
    STOP_WORDS,
    Coverage,
    SentenceTreeBuilder,
    TreeCore,
    TreeCorpusBuilder,
    TreeOptions,
    collated_coverage,
    tree_visibility,
    visibility_mask,
)
from graphmatch.knowledge import KnowledgeGraph
from graphmatch.text import CharTokenizer, WordPieceTokenizer

TINY_SPO = """\
ice cream\ttype\tfood
ice cream\tis a\tfrozen dessert
ice cream\tis a\tdessert
ice cream cone\ttype\tfood
cream\ttype\tfood
ice\ttype\tsubstance
dog\ttype\tanimal
a-list\ttype\tgroup
x-ray\ttype\tphenomenon
a\ttype\tquantity
in\ttype\tquantity
it\ttype\tcognition
ha\ttype\tshape
the city\ttype\tlocation
"""
CLS, SEP = 101, 102


@pytest.fixture(scope="module")
def tok(minilm) -> WordPieceTokenizer:
    return WordPieceTokenizer.from_pretrained(minilm)


@pytest.fixture(scope="module")
def tiny_kg(tmp_path_factory) -> KnowledgeGraph:
    path = tmp_path_factory.mktemp("kg") / "tiny.spo"
    path.write_text(TINY_SPO, encoding="utf-8")
    return KnowledgeGraph.load(path)


@pytest.fixture(scope="module")
def wordnet() -> KnowledgeGraph:
    return KnowledgeGraph.load("wordnet")


def columns(data) -> dict[str, list]:
    t = data["token"]
    return {"text": t.text, "ids": t.input_ids.tolist(), "pos": t.pos.tolist(), "seg": t.seg.tolist(),
            "branch": t.branch.int().tolist(), "char": t.char_index.tolist()}


def dense_definition(data) -> np.ndarray:
    """K-BERT's visibility from the token columns and word spans alone (not from the edges):
    a branch is a run of branch tokens whose positions rise by one; it hangs on the trunk token
    right before its run of branches, the last piece of a word (the words in order, one per such
    token); that word's pieces are the trunk tokens of its segment whose characters lie in its span."""
    t = data["token"]
    branch, pos, seg, char = t.branch.tolist(), t.pos.tolist(), t.seg.tolist(), t.char_index.tolist()
    spans = data["word"].span.tolist()
    n = len(branch)
    value, word_tokens = [-1] * n, []
    anchor, anchors = -1, []
    for i in range(n):
        if not branch[i]:
            anchor = i
            continue
        new = not branch[i - 1] or pos[i] != pos[i - 1] + 1
        value[i] = (value[i - 1] + (1 if new else 0)) if branch[i - 1] else max(value) + 1
        if new:
            if not anchors or anchors[-1] != anchor:
                anchors.append(anchor)
            lo, hi = spans[len(anchors) - 1]
            assert lo <= char[anchor] < hi
            word_tokens.append({j for j in range(n) if not branch[j] and seg[j] == seg[anchor] and lo <= char[j] < hi})
    out = np.zeros((n, n), dtype=bool)
    for i in range(n):
        for j in range(n):
            if not branch[i] and not branch[j]:
                out[i, j] = True
            elif branch[i] and branch[j]:
                out[i, j] = value[i] == value[j]
            else:
                b, other = (i, j) if branch[i] else (j, i)
                out[i, j] = other in word_tokens[value[b]]
    return out


def assert_visibility(data, expected: np.ndarray) -> None:
    visible, real = visibility_mask(data)
    assert bool(real.all())
    assert np.array_equal(visible[0].numpy(), expected)


# --------------------------------------------------------------- hand-checked trees
# "I like ice creams.": [CLS] i like ice cream ##s | type food | is a frozen dessert | .
ICE_CREAM_VISIBLE = [
    # C  i  lk ice cr ##s ty fd is a  fr ds .
    [1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1],  # [CLS] sees no branch
    [1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1],  # i
    [1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1],  # like
    [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1],  # ice: a piece of the span sees both branches
    [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1],  # cream
    [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1],  # ##s
    [0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0],  # type: its branch and the span's pieces
    [0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0],  # food
    [0, 0, 0, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0],  # is: not its sibling branch
    [0, 0, 0, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0],  # a
    [0, 0, 0, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0],  # frozen
    [0, 0, 0, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0],  # dessert
    [1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1],  # .
]


def test_a_multiword_subject_is_one_span_and_its_branches_follow_the_last_piece(tok, tiny_kg):
    data = SentenceTreeBuilder(tiny_kg, tok, keep_text=True)("I like ice creams.")
    assert columns(data) == {
        "text": ["[CLS]", "i", "like", "ice", "cream", "##s", "type", "food", "is", "a", "frozen", "dessert", "."],
        "ids": [CLS, 1045, 2066, 3256, 6949, 2015, 2828, 2833, 2003, 1037, 7708, 18064, 1012],
        "pos": [0, 1, 2, 3, 4, 5, 6, 7, 6, 7, 8, 9, 6],  # siblings reuse 6, 7; the trunk goes on at 6
        "seg": [0] * 13,
        "branch": [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0],
        "char": [-1, 0, 2, 7, 11, 16, -1, -1, -1, -1, -1, -1, 17],
    }
    # "ice creams" (2 words, 3 pieces) is one match of the lemma "ice cream", not "ice" + "cream"
    assert data["word"].text == ["ice cream"] and data["word"].span.tolist() == [[7, 17]]
    assert data["entity"].text == ["type food", "is a frozen dessert"]  # predicate, space, object
    assert data["entity"].length.tolist() == [2, 4]  # the first 2 values in file order
    assert data["token", "in", "word"].edge_index.tolist() == [[3, 4, 5], [0, 0, 0]]
    assert data["token", "in", "entity"].edge_index.tolist() == [[6, 7, 8, 9, 10, 11], [0, 0, 1, 1, 1, 1]]
    assert data["entity", "on", "word"].edge_index.tolist() == [[0, 1], [0, 0]]
    expected = np.array(ICE_CREAM_VISIBLE, dtype=bool)
    assert_visibility(data, expected)
    assert np.array_equal(dense_definition(data), expected)
    trees = TreeCore(tiny_kg, tok).build(["I like ice creams."])
    assert np.array_equal(tree_visibility(trees), expected)


def test_morphy_finds_the_lemmas_in_wordnet(tok, wordnet):
    data = SentenceTreeBuilder(wordnet, tok, keep_text=True)("The companies sold geese.")
    assert data["word"].text == ["company", "goose"]  # -ies -> y; geese from noun.exc
    assert data["word"].span.tolist() == [[4, 13], [19, 24]]
    assert data["entity"].text == ["type group", "is a institution", "type animal", "is a anseriform bird"]
    got = columns(data)
    assert got["text"] == ["[CLS]", "the", "companies", "type", "group", "is", "a", "institution", "sold", "geese",
                           "type", "animal", "is", "a", "an", "##ser", "##iform", "bird", "."]
    assert got["pos"] == [0, 1, 2, 3, 4, 3, 4, 5, 3, 4, 5, 6, 5, 6, 7, 8, 9, 10, 5]
    assert got["branch"] == [0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0]
    assert got["ids"][14:17] == [2019, 8043, 22631]  # a branch of several pieces: "anseriform"
    assert_visibility(data, dense_definition(data))


def test_a_pair_gets_segments_and_branches_in_both_texts(tok, tiny_kg):
    data = SentenceTreeBuilder(tiny_kg, tok, keep_text=True)("Has he a dog?", "It is in ice cream.")
    got = columns(data)
    assert got["text"] == ["[CLS]", "has", "he", "a", "dog", "type", "animal", "?", "[SEP]",
                           "it", "is", "in", "ice", "cream", "type", "food", "is", "a", "frozen", "dessert", ".",
                           "[SEP]"]
    assert got["ids"][:9] == [CLS, 2038, 2002, 1037, 3899, 2828, 4111, 1029, SEP] and got["ids"][-1] == SEP
    assert got["pos"] == [0, 1, 2, 3, 4, 5, 6, 5, 6, 7, 8, 9, 10, 11, 12, 13, 12, 13, 14, 15, 12, 13]
    assert got["seg"] == [0] * 9 + [1] * 13  # the first [SEP] closes text a; a branch takes its word's segment
    assert got["char"] == [-1, 0, 4, 7, 9, -1, -1, 12, -1, 0, 3, 6, 9, 13, -1, -1, -1, -1, -1, -1, 18, -1]
    assert data["word"].text == ["dog", "ice cream"]
    assert data["word"].span.tolist() == [[9, 12], [9, 18]]  # offsets in their own text
    # "has" (-> "ha"), "a", "it", "in" are subjects of this KG, but function words get no branch
    assert_visibility(data, dense_definition(data))
    visible = visibility_mask(data)[0][0]
    assert visible[5, 4] and not visible[5, 13] and not visible[14, 4] and visible[14, 12] and visible[19, 13]
    assert visible[4, 13] and not visible[0, 5]  # trunk sees trunk across texts; [CLS] sees no branch


def test_function_words_never_get_a_branch(tok, tiny_kg, wordnet):
    text = "He has it in a bag in the city."
    assert SentenceTreeBuilder(tiny_kg, tok, keep_text=True)(text)["word"].text == []
    without = SentenceTreeBuilder(tiny_kg, tok, TreeOptions(stop_words=()), keep_text=True)(text)
    assert without["word"].text == ["ha", "it", "in", "a", "in", "the city"]  # what the list prevents
    data = SentenceTreeBuilder(wordnet, tok, keep_text=True)("He has it in a way, as it should be; does he?")
    assert data["word"].text == ["way"]
    assert {"a", "in", "it", "as", "be", "has", "his", "does", "was", "us", "one", "don", "t", "s"} <= STOP_WORDS


def test_glued_stop_words_and_the_longest_match(tok, tiny_kg):
    build = SentenceTreeBuilder(tiny_kg, tok, keep_text=True)
    data = build("an A-list x-ray")
    assert data["word"].text == ["a-list", "x-ray"]  # 3 words each; "a" is glued to "-list"
    assert data["word"].span.tolist() == [[3, 9], [10, 15]]
    assert build("ice cream cones")["word"].text == ["ice cream cone"]  # 3 words beat 2
    assert SentenceTreeBuilder(tiny_kg, tok, TreeOptions(max_words=2),
                               keep_text=True)("ice cream cones")["word"].text == \
        ["ice cream"]
    assert build("ice , cream")["word"].text == ["ice", "cream"]  # a match never spans punctuation with spaces


@pytest.mark.parametrize(("max_length", "kept", "lengths"), [
    (9, ["[CLS]", "i", "like", "ice", "cream", "##s", "type", "food", "is"], [2, 1]),  # cut inside a branch
    (8, ["[CLS]", "i", "like", "ice", "cream", "##s", "type", "food"], [2]),
    (6, ["[CLS]", "i", "like", "ice", "cream", "##s"], []),  # no branch token left: the word goes too
])
def test_the_cut_at_max_length(tok, tiny_kg, max_length, kept, lengths):
    data = SentenceTreeBuilder(tiny_kg, tok, TreeOptions(max_length=max_length), keep_text=True)("I like ice creams.")
    assert data["token"].text == kept
    assert data["token"].pos.tolist() == [0, 1, 2, 3, 4, 5, 6, 7, 6][:max_length]
    assert data["entity"].length.tolist() == lengths
    assert data["word"].num_nodes == (1 if lengths else 0)
    assert_visibility(data, dense_definition(data))


def test_visibility_of_real_sentences_matches_the_dense_definition(tok, wordnet):
    build = SentenceTreeBuilder(wordnet, tok, TreeOptions(max_length=40), keep_text=True)
    for a, b in [("The ice creams of the companies were eaten by geese near the river bank.", None),
                 ("A man walks his dog in the park.", "Dogs and cats are animals; the x-ray shows bones."),
                 ("Prices of crude oil rose sharply in Rotterdam.", "Oil tankers carried the oil.")]:
        data = build(a, b)
        assert data["entity"].num_nodes >= 2
        expected = dense_definition(data)
        assert_visibility(data, expected)
        assert np.array_equal(tree_visibility(build.build([a], None if b is None else [b])), expected)


SENTENCES = ["The companies sold geese.", "I like ice creams.", "Nothing here is of use to us.",
             "An x-ray of the dog's paw", "Oil prices rose.", "   spaces   around   ", "Café au lait, s'il vous plaît",
             "中文 and English", "ice cream cones and ice creams", "a", "The children played in the garden all day."]


@pytest.mark.parametrize("max_length", [64, 7])
def test_the_corpus_builder_equals_the_one_by_one_builder(tok, wordnet, max_length):
    builder = SentenceTreeBuilder(wordnet, tok, TreeOptions(max_length=max_length), keep_text=True)
    corpus = TreeCorpusBuilder(builder)
    labels = list(range(len(SENTENCES)))
    assert_same(corpus(SENTENCES, labels=labels, chunk_size=4), one_by_one(builder, SENTENCES, labels=labels))
    half = len(SENTENCES) // 2
    assert_same(corpus(SENTENCES[:half], SENTENCES[half:2 * half], chunk_size=3),
                one_by_one(builder, SENTENCES[:half], SENTENCES[half:2 * half]))


def test_knowledge_coverage_and_the_wrong_language_warning(tok, tiny_kg, wordnet):
    texts = ["I like ice creams.", "He has it.", "A dog and an x-ray", "nothing"]
    builder = SentenceTreeBuilder(tiny_kg, tok)
    data, slices = TreeCorpusBuilder(builder)(texts)
    coverage = collated_coverage(slices)
    # branches 2 + 0 + (1 + 1) + 0; trunk tokens 7 + 5 + 8 + 2, of them in a matched word 3 + 0 + (1 + 3) + 0
    assert coverage == Coverage(inputs=4, with_branch=2, branches=4, tokens=22, matched=7)
    assert coverage == Coverage.of(builder.build(texts).counts)
    assert (coverage.share, coverage.per_input, coverage.token_share) == (0.5, 1.0, 7 / 22)
    assert str(coverage) == ("knowledge: 50.0 % of 4 inputs have a branch, 1.00 branches per input, "
                             "31.8 % of their tokens matched")
    assert coverage.warning("tiny") is None
    # Chinese text with the English graph (word pieces), English text with a Chinese graph (characters)
    chinese = ["我喜欢吃冰淇淋", "他有一条狗"]
    zh = collated_coverage(TreeCorpusBuilder(SentenceTreeBuilder(wordnet, tok))(chinese)[1])
    assert zh == Coverage(2, 0, 0, 14, 0)
    assert zh.warning("wordnet") == ("knowledge graph wordnet matched 0.0 % of the sentences and 0.0 % of their "
                                     "tokens: is it the right language for this text?")
    hanzi = KnowledgeGraph([("冰淇淋", "类别", "食品"), ("狗", "类别", "动物")])
    chars = CharTokenizer.from_texts(texts + chinese)
    en = collated_coverage(TreeCorpusBuilder(SentenceTreeBuilder(hanzi, chars))(texts)[1])
    assert en.share == 0.0 and en.warning("hownet").startswith("knowledge graph hownet matched 0.0 %")
    # the line is about tokens: a graph that finds a few Latin words in Chinese text still warns
    assert Coverage(10, 4, 9, 1000, 19).warning("x") is not None and Coverage(10, 1, 1, 1000, 20).warning("x") is None
    assert Coverage(0, 0, 0, 0, 0).share == Coverage(0, 0, 0, 0, 0).token_share == 0.0


def test_word_pieces_refuse_what_only_characters_have(tok, tiny_kg):
    with pytest.raises(ValueError, match="mode='reference' is K-BERT's character layer"):
        SentenceTreeBuilder(tiny_kg, tok, TreeOptions(mode="reference"))
    with pytest.raises(ValueError, match="queries the KG over its words"):
        SentenceTreeBuilder(tiny_kg, tok, TreeOptions(query="trie"))
    with pytest.raises(ValueError, match="max_words must be at least 1"):
        SentenceTreeBuilder(tiny_kg, tok, TreeOptions(max_words=0))
    tagger = SentenceTreeBuilder(tiny_kg, tok, TreeOptions(kind="ner"), labels=["O"])
    with pytest.raises(ValueError, match="NER tags are per character"):
        tagger("a dog", tags=["O"] * 5)
    assert SentenceTreeBuilder(tiny_kg, tok).query == "words"
    assert repr(SentenceTreeBuilder(tiny_kg, tok)).endswith(
        ", tokenizer=WordPieceTokenizer(30522 pieces, lowercase=True))")
    assert SentenceTreeBuilder(tiny_kg, CharTokenizer.from_texts(["ab"])).query == "trie"  # characters: as before


def test_objects_alone_and_no_cls(tok, tiny_kg):
    data = SentenceTreeBuilder(tiny_kg, tok, TreeOptions(kind="ner"), keep_text=True)("a dog")
    assert data["token"].text == ["a", "dog", "animal"] and data["token"].pos.tolist() == [0, 1, 2]
    assert data["entity"].text == ["animal"]


def test_no_knowledge_is_plain_bert_input(tok, tiny_kg):
    plain = SentenceTreeBuilder(None, tok, keep_text=True)("I like ice creams.", "Dogs!")
    assert plain["token"].text == ["[CLS]", "i", "like", "ice", "cream", "##s", ".", "[SEP]", "dogs", "!", "[SEP]"]
    assert plain["token"].pos.tolist() == list(range(11)) and not plain["token"].branch.any()
    assert SentenceTreeBuilder(tiny_kg, tok, TreeOptions(max_entities=0))("ice cream")["entity"].num_nodes == 0


def test_joined_values():
    kg = KnowledgeGraph([("dog", "is a", "canine"), ("苹果", "义原", "水果")])
    assert kg.values("dog", joiner=" ") == ["is a canine"]
    assert kg.values("苹果") == ["义原水果"]  # the Chinese glue is unchanged
    assert kg.values("dog", predicate=False, joiner=" ") == ["canine"]
