"""WordNet: the WNDB reader, the .spo converter, the packaged ``kg: wordnet`` graph and morphy.

A hand-written miniature WordNet covers the reader and every relation everywhere; the tests on
the real WordNet 3.0 files need Debian's ``wordnet-base`` (``make setup`` installs it): without
it they skip, under CI (``CI=true``) they fail."""

from __future__ import annotations

import gzip
from collections import Counter
from pathlib import Path

import pytest
from tool_guard import require_tool

from graphmatch.cli.main import main
from graphmatch.knowledge import KnowledgeGraph, Lemmatizer, WordNet, resolve_kg
from graphmatch.knowledge import wordnet as wordnet_module
from graphmatch.knowledge.wordnet import (
    PACKAGED_EXCEPTIONS,
    PACKAGED_GRAPH,
    find_wordnet_dir,
    packaged_graph,
    read_exceptions,
    wordnet_triples,
    write_spo,
)

LICENCE = "  1 This software and database is being provided to you, the LICENSEE, by  \n  2 Princeton University.  \n"
DATA = """\
00000100 03 n 01 entity 0 000 | that which exists
00000200 13 n 01 frozen_dessert 0 001 @ 00000100 n 0000 | a dessert
00000300 13 n 02 ice_cream 0 icecream 0 002 @ 00000200 n 0000 + 01234567 v 0101 | frozen dessert
00000400 08 n 01 hand 0 001 @ 00000100 n 0000 | a body part
00000500 08 n 01 finger 0 002 @ 00000100 n 0000 #p 00000400 n 0000 | a digit
00000600 15 n 01 capital 0 001 @ 00000100 n 0000 | a seat of government
00000700 15 n 01 Paris 0 001 @i 00000600 n 0000 | the French capital
00000800 05 n 01 Canis 0 001 @ 00000100 n 0000 | a genus
00000900 05 n 03 dog 0 domestic_dog 0 Canis_familiaris 0 002 @ 00000100 n 0000 #m 00000800 n 0000 | a dog
00001000 18 n 01 chap 0 001 @ 00000100 n 0000 | a man
00001100 05 n 01 goose 0 001 @ 00000100 n 0000 | a bird
"""
INDEX = """\
canis n 1 1 @ 1 0 00000800
canis_familiaris n 1 2 @ #m 1 0 00000900
capital n 1 1 @ 1 0 00000600
chap n 1 1 @ 1 0 00001000
dog n 2 2 @ #m 2 1 00000900 00001000
domestic_dog n 1 2 @ #m 1 0 00000900
entity n 1 0 1 0 00000100
finger n 1 2 @ #p 1 0 00000500
frozen_dessert n 1 1 @ 1 0 00000200
goose n 1 1 @ 1 0 00001100
hand n 1 1 @ 1 0 00000400
ice_cream n 1 1 @ 1 0 00000300
icecream n 1 1 @ 1 0 00000300
paris n 1 1 @i 1 0 00000700
"""
EXC = "geese goose\nice_creams ice_cream\n"


def write_wordnet(folder: Path, data: str = DATA, index: str = INDEX, exc: str = EXC) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in (("data.noun", data), ("index.noun", index)):  # WNDB lines end in two blanks
        (folder / name).write_text(LICENCE + "".join(f"{line}  \n" for line in text.splitlines()))
    (folder / "noun.exc").write_text(exc)
    return folder


@pytest.fixture
def mini(tmp_path) -> WordNet:
    return WordNet(write_wordnet(tmp_path / "wn"))


@pytest.fixture
def nowhere(tmp_path, monkeypatch):
    """No WordNet anywhere: no $WORDNET_DIR, no data root, no system folder."""
    monkeypatch.delenv("WORDNET_DIR", raising=False)
    monkeypatch.delenv("GRAPHMATCH_DATA", raising=False)
    monkeypatch.setattr(wordnet_module, "SYSTEM_DIR", tmp_path / "no-system-wordnet")


@pytest.fixture(scope="module")
def wordnet() -> WordNet:
    """The real WordNet 3.0 (Debian's wordnet-base)."""
    try:
        folder = find_wordnet_dir()
    except FileNotFoundError as err:
        require_tool(f"WordNet 3.0 ({err})", False, "apt-get install wordnet-base, or make setup")
    return WordNet(folder)


@pytest.fixture(scope="module")
def packaged() -> KnowledgeGraph:
    return KnowledgeGraph.load("wordnet")


def test_reader_parses_synsets_lemmas_and_exceptions(mini):
    assert len(mini.synsets) == 11 and len(mini.lemmas) == 14
    assert mini.lemmas["dog"] == [900, 1000]
    dog = mini.synsets[900]
    assert dog.type == "animal" and dog.words == ("dog", "domestic_dog", "Canis_familiaris")
    assert dog.pointers == (("@", 100), ("#m", 800))
    assert mini.synsets[300].pointers == (("@", 200),)  # the verb pointer is dropped
    assert mini.synsets[100].type == "Tops" and mini.synsets[700].first("@", "@i") == 600
    assert mini.exceptions == {"geese": ("goose",), "ice creams": ("ice cream",)}


def test_default_relations_type_then_first_sense_hypernym(mini):
    triples = list(wordnet_triples(mini))
    assert triples[:4] == [("canis", "type", "animal"), ("canis", "is a", "entity"),
                           ("canis familiaris", "type", "animal"), ("canis familiaris", "is a", "entity")]
    got = {(s, p): o for s, p, o in triples}
    assert got["ice cream", "is a"] == "frozen dessert"  # multiword lemmas keep their words
    assert got["paris", "is a"] == "capital"  # an instance hypernym
    assert got["dog", "is a"] == "entity" and got["dog", "type"] == "animal"  # the first sense only
    assert ("entity", "is a") not in got and got["entity", "type"] == "Tops"  # no hypernym: no line
    assert len(triples) == 2 * 14 - 1


def test_optional_relations_in_the_order_asked(mini):
    triples = list(wordnet_triples(mini, ["holonym", "synonym", "hypernyms", "type"]))
    of = {s: [(p, o) for t, p, o in triples if t == s] for s in ("dog", "finger", "ice cream", "entity")}
    assert of["dog"] == [("member of", "Canis"), ("same as", "domestic dog"), ("same as", "Canis familiaris"),
                         ("is a", "entity"), ("type", "animal")]  # dog's second sense has the same hypernym
    assert of["finger"] == [("part of", "hand"), ("is a", "entity"), ("type", "body")]
    assert of["ice cream"] == [("same as", "icecream"), ("is a", "frozen dessert"), ("type", "food")]
    assert of["entity"] == [("type", "Tops")]


def test_unknown_relation_is_one_line(mini):
    with pytest.raises(ValueError, match="unknown WordNet relation.*'hyponym'.*choose from type, hypernym"):
        wordnet_triples(mini, ["type", "hyponym"])


def test_spo_written_gzip_is_deterministic_and_loads(mini, tmp_path):
    a, b = tmp_path / "a.spo.gz", tmp_path / "b.spo.gz"
    assert write_spo(wordnet_triples(mini), a) == (27, 14)
    write_spo(wordnet_triples(mini), b)
    assert a.read_bytes() == b.read_bytes() and a.read_bytes()[4:8] == b"\0\0\0\0"  # gzip mtime 0
    plain = tmp_path / "c.spo"
    write_spo(wordnet_triples(mini), plain)
    assert gzip.decompress(a.read_bytes()) == plain.read_bytes()
    assert plain.read_text().splitlines()[:2] == ["canis\ttype\tanimal", "canis\tis a\tentity"]
    kg = KnowledgeGraph.from_spo(a)
    assert kg.subjects["ice cream"] == [("type", "food"), ("is a", "frozen dessert")]


@pytest.mark.parametrize("file, line, good, bad", [
    ("data.noun", 4, "00000200 13 n 01 frozen_dessert 0 001 @ 00000100 n 0000",
     "00000200 13 n 01 frozen_dessert 0 002 @ 00000100 n 0000"),  # two pointers announced, one given
    ("data.noun", 4, "00000200 13 n", "00000200 99 n"),  # not a noun lexicographer file
    ("index.noun", 4, "canis_familiaris n 1 2 @ #m 1 0 00000900", "canis_familiaris n 2 2 @ #m 1 0 00000900"),
    ("noun.exc", 2, "ice_creams ice_cream", "ice_creams"),
])  # fmt: skip
def test_malformed_wndb_line_names_file_and_line(tmp_path, file, line, good, bad):
    texts = {"data": DATA, "index": INDEX, "exc": EXC}
    key = file.split(".")[0] if file != "noun.exc" else "exc"
    assert good in texts[key]
    texts[key] = texts[key].replace(good, bad)
    folder = write_wordnet(tmp_path / "wn", **texts)
    with pytest.raises(ValueError, match=rf"^{folder / file}:{line}: malformed \w+ line"):
        WordNet(folder)


def test_dangling_pointer_names_the_line(tmp_path):
    folder = write_wordnet(tmp_path / "wn", data=DATA.replace("@ 00000200 n", "@ 00000222 n"))
    with pytest.raises(ValueError, match=rf"^{folder / 'data.noun'}:5: points to synset 00000222"):
        list(wordnet_triples(WordNet(folder)))


def test_malformed_spo_line_in_gzip_names_file_and_line(tmp_path):
    path = tmp_path / "bad.spo.gz"
    path.write_bytes(gzip.compress(b"dog\tis a\tcanine\ncat\tfeline\n"))
    with pytest.raises(ValueError, match=rf"^{path}:2: expected 'subject<TAB>predicate<TAB>object'"):
        KnowledgeGraph.from_spo(path)


def test_cli_writes_the_graph_and_errors_are_one_line(mini, tmp_path, capsys):
    out = tmp_path / "mini.spo"
    assert main(["kg", "wordnet", "-o", str(out), "--wordnet-dir", str(mini.folder), "--relations", "type"]) == 0
    assert out.read_text().splitlines()[:2] == ["canis\ttype\tanimal", "canis familiaris\ttype\tanimal"]
    assert "wrote 14 triples about 14 subjects" in capsys.readouterr().err
    broken = write_wordnet(tmp_path / "broken", data=DATA.replace("00000400 08 n 01 hand", "00000400 08 n 0x hand"))
    assert main(["kg", "wordnet", "-o", str(tmp_path / "x.spo"), "--wordnet-dir", str(broken)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{broken / 'data.noun'}:6: malformed data line" in err
    assert not (tmp_path / "x.spo").exists()
    assert main(["kg", "wordnet", "-o", str(tmp_path / "y.spo"), "--wordnet-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "lacks index.noun, data.noun, noun.exc; install Debian's wordnet-base" in err


def test_wordnet_dir_lookup_order(tmp_path, monkeypatch, nowhere):
    env, root, system = (write_wordnet(tmp_path / name) for name in ("env", "root/wordnet", "system"))
    monkeypatch.setattr(wordnet_module, "SYSTEM_DIR", system)
    assert find_wordnet_dir() == system
    assert find_wordnet_dir(tmp_path / "root") == root
    monkeypatch.setenv("GRAPHMATCH_DATA", str(tmp_path / "root"))
    assert find_wordnet_dir() == root
    monkeypatch.setenv("WORDNET_DIR", str(tmp_path / "release"))  # WordNet's own layout: dict/
    write_wordnet(tmp_path / "release" / "dict")
    assert find_wordnet_dir() == tmp_path / "release" / "dict"


def test_no_wordnet_and_no_packaged_graph_says_what_to_install(tmp_path, monkeypatch, nowhere):
    monkeypatch.setattr(wordnet_module, "PACKAGED_GRAPH", tmp_path / "gone.spo.gz")
    monkeypatch.setattr(wordnet_module, "CACHE_DIR", tmp_path / "cache")
    for attempt in (lambda: resolve_kg("wordnet", None), lambda: KnowledgeGraph.load("wordnet")):
        with pytest.raises(FileNotFoundError) as err:
            attempt()
        message = str(err.value)
        assert "\n" not in message and "packaged WordNet graph" in message
        assert "apt-get install wordnet-base" in message and "$WORDNET_DIR" in message
    # WordNet's files but no packaged graph: rebuilt once into the cache
    monkeypatch.setenv("WORDNET_DIR", str(write_wordnet(tmp_path / "wn")))
    path = packaged_graph()
    assert path == tmp_path / "cache" / "wordnet" / "wordnet.spo.gz"
    assert KnowledgeGraph.load("wordnet").subjects["paris"] == [("type", "location"), ("is a", "capital")]


def test_kg_wordnet_is_the_packaged_graph(packaged):
    assert resolve_kg("wordnet", None) == PACKAGED_GRAPH == packaged_graph()
    assert len(packaged) == 117_798 and sum(map(len, packaged.subjects.values())) == 235_595
    assert packaged.subjects["ice cream"] == [("type", "food"), ("is a", "frozen dessert")]
    assert packaged.subjects["company"] == [("type", "group"), ("is a", "institution")]
    types = Counter(o for values in packaged.subjects.values() for p, o in values if p == "type")
    assert len(types) == 26 and sum(types.values()) == 117_798
    assert [t for t, _ in types.most_common(5)] == ["person", "plant", "artifact", "animal", "act"]


def test_lemmatiser_follows_morphy(packaged):
    lemma = Lemmatizer(packaged.subjects).lemma
    cases = {"companies": "company", "geese": "goose", "mice": "mouse", "buses": "bus", "boxes": "box",
             "churches": "church", "dishes": "dish", "firemen": "fireman", "ice creams": "ice cream",
             "Ice_Cream": "ice cream", "snow geese": "snow goose", "boxesful": "boxful", "glasses": "glasses",
             "Paris": "paris", "dog": "dog", "xyzzies": None, "qqss": None}
    assert {w: lemma(w) for w in cases} == cases
    bases = list(Lemmatizer(set()).bases("boxes"))
    assert bases == ["boxes", "boxe", "box"]  # the word, then the rules in morphy's order
    assert list(Lemmatizer(set()).bases("glass")) == ["glass"]  # -ss words are not detached


def test_coverage_of_semeval_entity_mentions(shared_data, packaged):
    from graphmatch.data.relation_formats import read_semeval_file

    lemmatizer = Lemmatizer(packaged.subjects)
    folder = shared_data / "semeval2010_task8"
    examples = read_semeval_file(folder / "TRAIN_FILE.TXT") + read_semeval_file(folder / "TEST_FILE_FULL.TXT")
    how: Counter = Counter()
    types: Counter = Counter()
    for example in examples:
        for which in (1, 2):
            mention = example.sentence.entity_text(which)
            found = lemmatizer.match(mention)
            how["whole" if lemmatizer.lemma(mention) else "head" if found else "none"] += 1
            types.update(o for p, o in packaged.subjects.get(found, ()) if p == "type")
    assert how == {"whole": 20_378, "head": 611, "none": 445}  # 95.07 / 2.85 / 2.08 % of 21,434
    assert types.most_common(5) == [("artifact", 4_550), ("person", 2_492), ("communication", 2_444),
                                    ("group", 1_656), ("act", 1_352)]


def test_converter_rebuilds_the_packaged_graph_byte_for_byte(wordnet, tmp_path, capsys):
    assert (len(wordnet.synsets), len(wordnet.lemmas)) == (82_115, 117_798)
    assert sum("_" in lemma for lemma in wordnet.lemmas) == 60_292
    out = tmp_path / "wordnet.spo.gz"
    assert main(["kg", "wordnet", "-o", str(out), "--wordnet-dir", str(wordnet.folder)]) == 0
    assert "wrote 235,595 triples about 117,798 subjects" in capsys.readouterr().err
    assert gzip.decompress(out.read_bytes()) == gzip.decompress(PACKAGED_GRAPH.read_bytes())
    # the same bytes compressed, too, where zlib is the same build (gzip's header is fixed: mtime 0, no name)
    assert out.read_bytes()[:10] == PACKAGED_GRAPH.read_bytes()[:10]


def test_packaged_exceptions_and_licence_are_wordnets(wordnet):
    assert PACKAGED_EXCEPTIONS.read_bytes() == (wordnet.folder / "noun.exc").read_bytes()
    assert read_exceptions(PACKAGED_EXCEPTIONS) == wordnet.exceptions
    notice = " ".join((PACKAGED_GRAPH.parent / "WORDNET_LICENSE.txt").read_text().split())
    header = [line.split(" ", 3)[3] for line in (wordnet.folder / "data.noun").read_text().splitlines()[:29]]
    assert " ".join(" ".join(header).split()) in notice
