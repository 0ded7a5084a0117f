"""Knowledge that fits the sentence on relation graphs (``data.select``): the entities' candidate
branches scored against the sentence (graphs/relation_kbert.py with a
:class:`~graphmatch.graphs.branch_selection.BranchSelection`), and noun readings of the words that
K-Query matches. The scores come from a toy encoder whose cosines are worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest
from tiny_bert import tiny_bert_folder

from graphmatch.graphs.branch_selection import BranchSelection
from graphmatch.graphs.relation import WordPieces
from graphmatch.graphs.relation_kbert import RelationTreeBuilder
from graphmatch.graphs.relation_options import RelationOptions
from graphmatch.knowledge import KnowledgeGraph

SPO = ("company\ttype\tgroup\ncompany\tis a\tinstitution\nchair\ttype\tartifact\nchair\tis a\tseat\n"
       "far\ttype\tdistance\n")
CHAIRS = "The <e1>company</e1> fabricates plastic <e2>chairs</e2>."
FAR = "The <e1>company</e1> is far from its <e2>chairs</e2>."
#: the toy encoder's topic of a word: the sentence is about institutions and artifacts
TOPIC = {"company": 1, "institution": 1, "group": 0, "chairs": 2, "artifact": 2, "seat": 3}


def embed(texts: list[str]) -> np.ndarray:
    """A text is the sum of its words' topics (and a small constant): cos(CHAIRS, institution) =
    cos(CHAIRS, artifact) = 1/√2, cos(CHAIRS, group) = cos(CHAIRS, seat) ≈ 0."""
    out = np.full((len(texts), 4), 1e-3)
    for row, text in enumerate(texts):
        for word in text.lower().replace(".", " ").split():
            if word in TOPIC:
                out[row, TOPIC[word]] += 1.0
    return out


@pytest.fixture(scope="module")
def pieces(tmp_path_factory) -> WordPieces:
    words = [CHAIRS, FAR, "type is a group institution artifact seat distance"]
    return WordPieces.from_pretrained(tiny_bert_folder(tmp_path_factory.mktemp("bert") / "tiny", words))


@pytest.fixture(scope="module")
def kg(tmp_path_factory) -> KnowledgeGraph:
    path = tmp_path_factory.mktemp("kg") / "tiny.spo"
    path.write_text(SPO, encoding="utf-8")
    return KnowledgeGraph.load(path)


def _builder(pieces, kg, selection=None, **options) -> RelationTreeBuilder:
    return RelationTreeBuilder(pieces, kg, RelationOptions(max_distance=50, predicate=False, **options),
                               selection=selection, keep_text=True)


def test_selection_drops_the_branches_below_the_threshold(pieces, kg):
    assert _builder(pieces, kg)(CHAIRS)["value"].text == ["group", "institution", "artifact", "seat"]
    selection = BranchSelection(embed, threshold=0.5)
    data = _builder(pieces, kg, selection=selection)(CHAIRS)
    assert data["value"].text == ["institution", "artifact"]
    assert selection.counts == [4, 2]
    assert {(d.word, d.value) for d in selection.dropped} == {("company", "group"), ("chair", "seat")}
    assert all(d.score < 0.5 and d.sentence.split() == ["The", "company", "fabricates", "plastic", "chairs", "."]
               for d in selection.dropped)  # the sentence is scored without the markers
    # the trunk and the entities are those of the graph without a selection
    plain = _builder(pieces, kg, max_entities=0)(CHAIRS)
    trunk = ~data["token"].branch
    assert data["token"].word_id[trunk].tolist() == plain["token"].word_id.tolist()
    assert data["token"].text[3:6] == ["company", "[unused1]", "institution"]


def test_selection_keeps_the_best_values_of_each_entity(pieces, kg):
    first = _builder(pieces, kg, max_entities=1)(CHAIRS)
    assert first["value"].text == ["group", "artifact"]  # file order
    selection = BranchSelection(embed, threshold=-1.0)
    best = _builder(pieces, kg, max_entities=1, selection=selection)(CHAIRS)
    assert best["value"].text == ["institution", "artifact"]
    assert selection.counts == [4, 2]
    assert selection.report((0, 0, 0))["kept"] == 2
    top = _builder(pieces, kg, max_entities=2, selection=BranchSelection(embed, top_k=1, threshold=-1.0))(CHAIRS)
    assert len(top["value"].text) == 1 and top["word"].num_nodes == 1  # the sentence's best branch only


def test_noun_readings_on_the_matched_words(pieces, kg):
    everywhere = _builder(pieces, kg, inject="all")(FAR)
    assert "distance" in everywhere["value"].text
    nouns = _builder(pieces, kg, inject="all", noun_reading=True)(FAR)
    assert nouns["value"].text == ["group", "institution", "artifact", "seat"]  # "far" is no noun
