"""The vectorised K-BERT core against an independent, plain per-sentence oracle (kbert_oracle.py).

Random inputs are built to hit nested, overlapping, folded and whitespace subjects, literal
special tags, the reference's forced-word quirk, pairs, NER tags and cuts at many lengths; each
is built in one corpus (so inputs sit next to each other in one array) and compared sample by
sample, tensor for tensor, with the oracle's tree and visible matrix."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from kbert_oracle import SPECIAL_TAGS, oracle_tree
from torch_geometric.data import InMemoryDataset

from graphmatch.graphs.kbert import SentenceTreeBuilder, TreeCorpusBuilder, TreeOptions, visibility_mask
from graphmatch.knowledge import KnowledgeGraph
from graphmatch.text import CharTokenizer, get_segmenter

# pieces that hit subjects, nest (ab < abc < abcd), overlap (abc / bcd, ab / b c), fold (ＡＢ, AB),
# hold whitespace or special tags, or make the reference's walk run past a subject (ezyq: the walk
# passes the subject ez, goes on towards ezyx and stops at q, so the forced word is ezy)
PIECES = ["ab", "abc", "bcd", "abcd", "abcx", "cx", "de", "天安门", "门", "ex", "a b", " ab ", "qqqqqqqq",
          "x", "c", " ", "\t", "\u3000", "ＡＢ", "AB", "Ａb", "[UNK]", "[SEP]", "[unk]", "[CL", "☃", "z",
          "ezyq", "ezy", "ezyx"]
TRIPLES = [("ab", "r", "xy"), ("ab", "r", "z"), ("ab", "s", "q"),  # three values, the first two in file order
           ("abc", "r", "q"), ("bcd", "r", "x y"), ("abcd", "r", "z"), ("cx", "r", "y"), ("de", "r", "q"),
           ("天安门", "r", "天"), ("门", "", "安门"), ("ex", "", "\u3000"),  # a value of whitespace only
           ("a b", "r", "q"), (" ab ", "r", "e"),  # a space inside, spaces around
           ("qqqqqqqq", "r", "abcdexyz"), ("[UNK]", "r", "x"), ("[unk]", "r", "☃e"),
           ("ez", "r", "a"), ("ezyx", "r", "bc")]  # no subject between: a walk can run past ez and stop
TAGS = {"O": 0, "B-X": 1, "I-X": 2}


@pytest.fixture(scope="module")
def tok() -> CharTokenizer:  # no uppercase, no ☃: [UNK] in the reference, normalised by default
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    return CharTokenizer({t: i for i, t in enumerate(specials + list("abcdexyzqrs天安门[]"))})


@pytest.fixture(scope="module")
def kg() -> KnowledgeGraph:
    return KnowledgeGraph(TRIPLES)


class Stored(InMemoryDataset):
    def __init__(self, data, slices):
        super().__init__()
        self.data, self.slices = data, slices


def random_text(rng: random.Random) -> str:
    text = "".join(rng.choices(PIECES, k=rng.randint(1, 8)))
    return text if text.strip() else "ab"


def compare(graph, expected, tags: bool) -> None:
    tokens = expected["tokens"]
    t = graph["token"]
    assert t.text == [x.text for x in tokens]
    assert t.input_ids.tolist() == [x.id for x in tokens]
    assert t.pos.tolist() == [x.pos for x in tokens]
    assert t.seg.tolist() == [x.seg for x in tokens]
    assert t.char_index.tolist() == [x.char_index for x in tokens]
    assert t.branch.tolist() == [x.entity is not None for x in tokens]
    assert ("y" in t) == tags
    if tags:
        assert t.y.tolist() == [x.tag for x in tokens]
    assert graph["word"].span.tolist() == [list(span) for span, _ in expected["words"]]
    assert graph["word"].text == [subject for _, subject in expected["words"]]
    assert graph["entity"].text == [value for value, _, _ in expected["entities"]]
    assert graph["entity"].length.tolist() == [length for _, _, length in expected["entities"]]
    assert graph["entity", "on", "word"].edge_index.tolist() == [
        list(range(len(expected["entities"]))), [word for _, word, _ in expected["entities"]]]
    in_entity = [(i, x.entity) for i, x in enumerate(tokens) if x.entity is not None]
    in_word = [(i, x.word) for i, x in enumerate(tokens) if x.word is not None]
    assert graph["token", "in", "entity"].edge_index.t().tolist() == [list(p) for p in in_entity]
    assert graph["token", "in", "word"].edge_index.t().tolist() == [list(p) for p in in_word]
    visible, real = visibility_mask(graph)
    assert bool(real.all()) and visible[0].tolist() == expected["visible"]


def run_case(kg, tok, rng: random.Random, seen: Counter, *, mode: str, pair: bool, ner: bool, n: int = 24,
             **options) -> None:
    texts_a = [random_text(rng) for _ in range(n)]
    texts_b = [random_text(rng) for _ in range(n)] if pair else None
    tags = [[rng.choice(list(TAGS)) for _ in text] for text in texts_a] if ner else None
    tag_to_id = TAGS if ner else None
    tree = {k: v for k, v in options.items() if k != "add_cls"}  # no [CLS]: the NER kind's rule
    kind = "classification" if options.get("add_cls", True) else "ner"
    builder = SentenceTreeBuilder(kg, tok, TreeOptions(kind, mode=mode, **{"predicate": True, **tree}),
                                  labels=list(TAGS) if ner else None, keep_text=True)
    data, slices = TreeCorpusBuilder(builder)(texts_a, texts_b, tags=tags, chunk_size=rng.choice([5, 24]))
    stored = Stored(data, slices)
    segment = get_segmenter(options["segmenter"]).segment if options.get("query") == "words" else None
    for i in range(n):
        expected = oracle_tree(kg, tok, texts_a[i], None if texts_b is None else texts_b[i],
                               None if tags is None else tags[i], mode=mode, segmenter=segment,
                               tag_to_id=tag_to_id, **{k: v for k, v in options.items() if k != "segmenter"})
        compare(stored[i], expected, ner)
        for value, _, length in expected["entities"]:
            seen["cut in a branch"] += length < len(value)
        seen["entities"] += len(expected["entities"])
        seen["special tags"] += sum(x.text in ("[UNK]", "[SEP]") and x.char_index >= 0 for x in expected["tokens"])
        seen["queried words that are no subject"] += sum(w not in kg.subjects and w not in SPECIAL_TAGS
                                                         for w in expected["queried"])
        seen["cut"] += len(expected["tokens"]) == options["max_length"]


@pytest.mark.parametrize("mode", ["default", "reference"])
def test_random_inputs_match_the_oracle(kg, tok, mode):
    rng = random.Random(14 + len(mode))
    seen: Counter = Counter()
    for case in range(36):
        max_length = [1, 2, 3, 5, 8, 13, 21, 64][case % 8]
        if max_length == 1 and case % 5 != 0:  # [CLS] alone, no text token: refused
            with pytest.raises(ValueError, match=r"max_length=1 holds only the leading tags \(\[CLS\]\)"):
                SentenceTreeBuilder(kg, tok, TreeOptions(mode=mode, max_length=1))
            continue
        run_case(kg, tok, rng, seen, mode=mode, pair=case % 3 == 1, ner=case % 3 == 2, max_length=max_length,
                 max_entities=case % 3 if case % 4 else 2, predicate=bool(case % 2), add_cls=case % 5 != 0)
    # the inputs did hit what they were built for
    assert seen["entities"] > 300 and seen["cut in a branch"] > 10 and seen["cut"] > 200
    if mode == "reference":  # the forced-word quirk happened, and literal special tags were scanned
        assert seen["queried words that are no subject"] > 20 and seen["special tags"] > 20


def test_query_by_segmenter_words_matches_the_oracle(kg, tok):
    pytest.importorskip("jieba")
    rng = random.Random(5)
    seen: Counter = Counter()
    for case in range(4):
        run_case(kg, tok, rng, seen, mode="default", pair=case == 1, ner=case == 2, max_length=[64, 9, 13, 5][case],
                 query="words", segmenter="jieba")
    assert seen["entities"] > 20


def test_real_data_matches_the_oracle(shared_data, tokenizer, hownet_kg):
    lines = (shared_data / "kbert/datasets/book_review/test.tsv").read_text(encoding="utf-8").splitlines()[1:61]
    texts = [line.split("\t")[1] for line in lines]
    for mode, max_length in (("default", 256), ("reference", 256), ("default", 40), ("reference", 40)):
        builder = SentenceTreeBuilder(hownet_kg, tokenizer, TreeOptions(mode=mode, max_length=max_length),
                                      keep_text=True)
        stored = Stored(*TreeCorpusBuilder(builder)(texts))
        entities = 0
        for i, text in enumerate(texts):
            expected = oracle_tree(hownet_kg, tokenizer, text, mode=mode, max_length=max_length)
            compare(stored[i], expected, False)
            entities += len(expected["entities"])
        assert entities > 30
