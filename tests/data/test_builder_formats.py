"""Each graph builder's ``FORMAT_VERSION`` moves with its output.

The graphs of a fixed small input are hashed (every tensor's name, dtype, shape and bytes, in a
fixed order); the checksum is recorded beside the version the builder had when it was recorded.
When a builder's graphs change, its test fails until ``FORMAT_VERSION`` is bumped in the
builder's module and the new checksum recorded in :data:`RECORDED`: so caches of the old graphs
are never read (their key holds the version).
"""

import hashlib
import json

import pytest
from torch_geometric.data import HeteroData

import graphmatch.graphs.kbert as kbert_graphs
import graphmatch.graphs.let as let_graphs
import graphmatch.graphs.relation as relation_graphs

#: builder -> (FORMAT_VERSION, checksum of the graphs of its fixed input)
RECORDED = {
    "kbert": (1, "f088f74ddc893a49"),
    "let": (1, "517fb91ebcb97e36"),
    "relation": (2, "6540ab0041612115"),
}
MODULES = {"kbert": kbert_graphs, "let": let_graphs, "relation": relation_graphs}


def checksum(graphs: list[HeteroData]) -> str:
    """sha256 (first 16 hex digits) over every store's attributes in sorted order."""
    digest = hashlib.sha256()
    for graph in graphs:
        stores = graph.to_dict()
        for key in sorted(stores, key=str):
            for name in sorted(stores[key]):
                value = stores[key][name]
                digest.update(f"{key}/{name}".encode())
                if hasattr(value, "numpy"):
                    digest.update(f"{value.dtype}{tuple(value.shape)}".encode())
                    digest.update(value.detach().cpu().contiguous().numpy().tobytes())
                else:
                    digest.update(json.dumps(value, ensure_ascii=False, default=str).encode())
    return digest.hexdigest()[:16]


def _texts(path, column):
    lines = path.read_text(encoding="utf-8").splitlines()[1:9]
    return [line.split("\t")[column] for line in lines]


def kbert_graphs_of_samples(samples, shared_data) -> list[HeteroData]:
    from graphmatch.data.kbert import tree_builder
    from graphmatch.graphs.kbert import TreeCorpusBuilder
    from graphmatch.graphs.kbert.options import TreeOptions

    vocab = shared_data / "kbert" / "vocab" / "google_vocab.txt"
    kg = samples / "kg" / "sample.spo"
    out = []
    for kind, texts_b in (("classification", None), ("pair", _texts(samples / "pairs" / "dev.tsv", 1))):
        builder = tree_builder(kg, vocab, TreeOptions(kind, 24, 2))
        texts_a = _texts(samples / "sentiment" / "dev.tsv", 1) if kind == "classification" else \
            _texts(samples / "pairs" / "dev.tsv", 0)
        data, slices = TreeCorpusBuilder(builder)(texts_a, texts_b, labels=[i % 2 for i in range(len(texts_a))],
                                                   progress=False)
        out += [data, HeteroData(slices={str(k): v for k, v in slices.items()})]
        out += [builder(texts_a[0], None if texts_b is None else texts_b[0])]
    ner = tree_builder(kg, vocab, TreeOptions("ner", 24, 2, "reference"), labels=["O", "B-X", "I-X"])
    out.append(ner("房间很干净", tags=["B-X", "I-X", "O", "O", "O"]))
    return out


def let_graphs_of_samples(samples, shared_data) -> list[HeteroData]:
    from graphmatch.graphs.let_options import LatticeOptions
    from graphmatch.knowledge import HowNetLexicon
    from graphmatch.text import CharTokenizer

    builder = let_graphs.LatticePairBuilder(CharTokenizer.default(shared_data), HowNetLexicon.from_files(shared_data),
                                            LatticeOptions(segmenters="jieba", max_length=40))
    pairs = zip(_texts(samples / "pairs" / "dev.tsv", 0), _texts(samples / "pairs" / "dev.tsv", 1), strict=True)
    return [builder(a, b, i % 2) for i, (a, b) in enumerate(pairs)]


def relation_graphs_of_samples(samples, shared_data) -> list[HeteroData]:
    from graphmatch.data.relation import relation_builder
    from graphmatch.data.relation_formats import read_relation_file
    from graphmatch.graphs.relation import splitter, tokenize_marked, with_markers
    from graphmatch.text.vocab import Vocab

    out = []
    for folder, tokenization in (("relation_zh", "chars"), ("relation", "words")):
        train = samples / folder / ("train.tsv" if folder == "relation_zh" else "train.txt")
        examples = read_relation_file(train, "auto")[:8]
        split = splitter(tokenization)
        vocab = Vocab.build(with_markers(tokenize_marked(ex.sentence, split, "x")).tokens for ex in examples)
        options = dict(tokenization=tokenization, max_distance=5, max_length=12, markers=True,
                       position_anchor="span")
        for anchor in ("span", "last"):
            builder = relation_builder({**options, "position_anchor": anchor}, vocab)
            out += [builder(ex.sentence, i) for i, ex in enumerate(examples)]
    return out


BUILDS = {"kbert": kbert_graphs_of_samples, "let": let_graphs_of_samples, "relation": relation_graphs_of_samples}


@pytest.mark.parametrize("name", list(RECORDED))
def test_builder_output_changes_only_with_a_version_bump(name, samples, shared_data):
    module = MODULES[name]
    got = (module.FORMAT_VERSION, checksum(BUILDS[name](samples, shared_data)))
    assert got == RECORDED[name], (
        f"the graphs of {module.__name__} changed (checksum {got[1]}, recorded {RECORDED[name][1]} for format "
        f"{RECORDED[name][0]}): bump FORMAT_VERSION in {module.__file__} so that caches of the old graphs are "
        f"rebuilt, and record {(module.FORMAT_VERSION, got[1])} for {name!r} in RECORDED ({__file__})")


def test_the_checksum_sees_a_changed_graph(samples, shared_data):
    graphs = relation_graphs_of_samples(samples, shared_data)
    before = checksum(graphs)
    graphs[0]["token"].word_id[0] += 1
    assert checksum(graphs) != before
