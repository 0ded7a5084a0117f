"""Many relation graphs at once (``RelationGraphBuilder.many``, ``RelationTask.encode_many``): the
text pieces of every sentence cut by one tokenizer call, the graphs equal to one at a time."""

import pytest
import torch

from graphmatch.errors import InputError
from graphmatch.graphs.relation import RelationGraphBuilder, WordPieces, split_input_line
from graphmatch.graphs.relation_markup import parse_markup
from graphmatch.graphs.relation_options import RelationOptions


def _semeval_sentences(shared_data, n=None):
    lines = (shared_data / "semeval2010_task8" / "TEST_FILE.txt").read_text(encoding="utf-8").splitlines()
    return [parse_markup(split_input_line(line)[1]) for line in lines[:n]]


def _same(a, b) -> None:
    for node_type in a.node_types:
        for key, value in a[node_type].items():
            assert (torch.equal(value, b[node_type][key]) if isinstance(value, torch.Tensor)
                    else value == b[node_type][key]), (node_type, key)
    for edge_type in a.edge_types:
        assert torch.equal(a[edge_type].edge_index, b[edge_type].edge_index), edge_type


def test_word_pieces_many_equal_one_at_a_time(shared_data, minilm):
    """Every SemEval test sentence over MiniLM's word pieces: split_many gives tokenize()'s pieces and
    many() the graphs of one at a time; a sentence the builder refuses is an InputError at its place."""
    pieces = WordPieces.from_pretrained(minilm)
    builder = RelationGraphBuilder.for_pieces(pieces, RelationOptions(max_length=20), keep_text=True)
    sentences = _semeval_sentences(shared_data)
    texts = [piece for s in sentences for piece, _ in s.pieces()]
    assert pieces.split_many(texts) == [pieces.split(t) for t in texts]
    fits, refused = [], None
    for i, s in enumerate(sentences):
        try:
            fits.append(builder(s))
        except ValueError as err:
            refused = refused or (i, str(err))
    assert refused is not None and len(fits) > 2_500  # max_length 20 crops many, refuses a few
    kept = [s for s in sentences if _fits(builder, s)]
    for one, many in zip(fits, builder.many(kept), strict=True):
        _same(one, many)
    with pytest.raises(InputError) as err:
        builder.many(sentences)
    assert (err.value.index, err.value.reason) == refused


def _fits(builder, sentence) -> bool:
    try:
        builder.tokenized(sentence)
    except ValueError:
        return False
    return True


def test_sentence_pieces_read_one_sentence_at_a_time(shared_data, e5_pieces):
    """e5's SentencePiece builder reads a sentence's later pieces as continuations: many() takes
    its one-at-a-time path and gives the same graphs."""
    from graphmatch.data.relation_pieces import builder_for_pieces

    builder = builder_for_pieces(e5_pieces, keep_text=True)
    assert builder.split_many is None
    sentences = _semeval_sentences(shared_data, 50)
    for one, many in zip([builder(s) for s in sentences], builder.many(sentences), strict=True):
        _same(one, many)


def test_task_encode_many_equals_encode(shared_data, minilm):
    """The predict path: every input form (marked, ID and marked, head/tail/sentence) as encode()
    makes it, sentence IDs kept; a bad input is an InputError naming its position."""
    from graphmatch.engine import resolve
    from graphmatch.tasks.base import get_task

    task = get_task("relation")(resolve("relation/semeval_minilm_entity_start",
                                        [f"data.root={shared_data}", "train.progress=false", "data.max_length=90"]))
    inputs = ['8001\t"The most common <e1>audits</e1> were about <e2>waste</e2> and recycling."',
              "The <e1>company</e1> fabricates plastic <e2>chairs</e2>.",
              "master\tstick\tThe school master teaches the lesson with a stick."]
    graphs, extras = task.encode_many([(text, None) for text in inputs])
    assert extras == [{}, {}, {}]
    for text, many in zip(inputs, graphs, strict=True):
        _same(task.encode(text), many)
    assert graphs[0].sid.tolist() == [8001] and "sid" not in graphs[1]
    with pytest.raises(InputError) as err:
        task.encode_many([(inputs[0], None), ("no markers here", None)])
    assert err.value.index == 1


def _same_stored(a, b) -> None:
    assert type(a) is type(b), (a, b)
    if isinstance(a, dict):
        assert list(a) == list(b)  # the same stores and keys, in the same order
        for key in a:
            _same_stored(a[key], b[key])
    elif isinstance(a, torch.Tensor):
        assert a.dtype == b.dtype and torch.equal(a, b)
    else:
        assert a == b


@pytest.mark.parametrize("markers", [False, True])
def test_collated_is_what_pyg_stores_for_the_graphs_one_at_a_time(shared_data, minilm, markers):
    """The SemEval test sentences, over a vocabulary and over MiniLM's word pieces, with and without
    the markers: ``collated`` equals ``InMemoryDataset.collate`` of the graphs one at a time (the
    stored dict and the slices), labels or none; and the stored graphs read back as those graphs."""
    from torch_geometric.data import HeteroData, InMemoryDataset
    from torch_geometric.data.separate import separate

    from graphmatch.text.vocab import Vocab

    options = RelationOptions(max_length=40, markers=markers, max_distance=7)
    sentences = _semeval_sentences(shared_data, 400)
    vocab = Vocab.build([RelationGraphBuilder(Vocab.build([["x"]]), options).tokenized(s).tokens
                         for s in sentences[:200]])  # the rest has unknown words
    for builder in (RelationGraphBuilder(vocab, options),
                    RelationGraphBuilder.for_pieces(WordPieces.from_pretrained(minilm), options)):
        kept = [s for s in sentences if _fits(builder, s)]
        sents = [builder.tokenized(s) for s in kept]
        assert len(sents) > 300
        labels = [i % 19 for i in range(len(sents))]
        for given in (labels, None):
            data, slices = builder.collated(sents, given)
            one = [builder(s, None if given is None else given[i]) for i, s in enumerate(kept)]
            expected, expected_slices = InMemoryDataset.collate(one)
            _same_stored(data, expected.to_dict())
            _same_stored(slices, expected_slices)
        back = HeteroData.from_dict(data)
        for i in (0, 7, len(sents) - 1):
            _same(separate(HeteroData, back, i, slices, decrement=False), one[i])
    with pytest.raises(ValueError, match="no sentences"):
        builder.collated([], None)
