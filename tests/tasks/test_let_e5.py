"""LET over multilingual-e5-small: characters looked up among e5's pieces, token type 0 for both
sentences, c_CLS as the mean of the token states, trained end to end from the command."""

from __future__ import annotations

import json
import unicodedata

import pytest
import torch
from torch_geometric.data import Batch
from torch_geometric.utils import scatter

from graphmatch.engine import load, resolve
from graphmatch.tasks.base import get_task
from graphmatch.text.pretrained import char_tokenizer_of, pair_segments

TINY = ["model.hidden=16", "model.heads=2", "model.perspectives=4", "train.progress=false"]
TEXT_A, TEXT_B = "苹果手机怎么样，DVD好用吗", "这个手机电池耐用吗？"


def _pairs(samples, shared_data, tmp_path, *extra):
    pairs = samples / "pairs"
    return ["data.dataset=tsv", *(f"data.{s}={pairs / f'{s}.tsv'}" for s in ("train", "dev", "test")),
            f"data.root={shared_data}", f"data.cache_dir={tmp_path / 'cache'}", "data.segmentation=jieba",
            "data.limit.train=12", "data.limit.dev=8", "data.limit.test=8", "train.max_steps=2",
            "train.batch_size=4", "train.eval_batch_size=8", "train.threads=1", *TINY, *extra]


def test_characters_are_e5_pieces(e5_small, e5_spm, shared_data, tmp_path):
    pieces = e5_spm
    chars = char_tokenizer_of(e5_small)
    assert (chars.cls_id, chars.sep_id, chars.pad_id, chars.unk_id) == (0, 2, 1, 3)  # <s> </s> <pad> <unk>
    assert [pieces.id_to_token(i) for i in (0, 1, 2, 3)] == ["<s>", "<pad>", "</s>", "<unk>"]
    for text in (TEXT_A, TEXT_B):
        enc = chars.encode(text)
        assert enc.tokens == [ch for ch in text if not ch.isspace()]
        for ch, i in zip(enc.tokens, enc.ids, strict=True):
            # e5's own piece of the character read as a continuation (no ▁ before it): the bare
            # piece, else its ▁ form, of the character as e5 normalises it (NFKC: ， → ,)
            (alone,) = pieces.encode_many([ch], prefix=False).ids.tolist()
            form = unicodedata.normalize("NFKC", ch)
            assert i == alone == pieces.vocab.get(form, pieces.vocab.get("\u2581" + form)), ch
            assert i != chars.unk_id
    # the graphs LET builds hold those ids: <s> a </s> b </s>
    task = get_task("let")(resolve("let/lcqmc_e5", [f"data.root={shared_data}", f"data.cache_dir={tmp_path}",
                                                    "data.segmentation=jieba"]))
    ids = task.encode(TEXT_A, TEXT_B)["token"].input_ids.tolist()
    assert ids == [0, *chars.encode(TEXT_A).ids, 2, *chars.encode(TEXT_B).ids, 2]
    assert pair_segments(e5_small) is False  # e5's pair template: type 0 for both texts


def test_let_e5_trains_from_the_command(e5_two_layers, shared_data, samples, tmp_path, capsys):
    """On e5-small's first two layers (``e5_two_layers``: its pieces, table and loading)."""
    from graphmatch.cli.main import main

    e5_small = e5_two_layers
    run = tmp_path / "run"
    args = ["train", "let/lcqmc_e5", "--set", *_pairs(samples, shared_data, tmp_path, f"model.pretrained={e5_small}"),
            "--out", str(run)]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert f"pretrained: loaded {5 + 2 * 16} tensors from {e5_small / 'model.safetensors'}" in err  # strictly
    assert "pretrained: pooler.dense.* (2 tensors) not in the checkpoint; initialised fresh" in err
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["steps"] == 2 and metrics["samples"] == {"train": 12, "dev": 8, "test": 8}

    task, model = load(run)  # from the run's stored encoder folder (its tokenizer.json)
    assert model.config.cls == "mean" and model.config.segments is False
    assert model.encoder.hidden_size == 384 and model.pad_id == 1
    # the recipe keeps the word-embedding table as loaded; the layers above it were trained
    from safetensors import safe_open

    with safe_open(str(e5_small / "model.safetensors"), framework="pt") as f:
        rows = f.get_slice("embeddings.word_embeddings.weight")[:64]
        layer = f.get_tensor("encoder.layer.0.output.dense.weight")
    assert torch.equal(model.encoder.embeddings.word.weight[:64], rows)
    assert not torch.equal(model.encoder.layers[0].output.weight, layer)
    assert task.tokenizer().encode(TEXT_A).ids == char_tokenizer_of(e5_small).encode(TEXT_A).ids
    model.eval()
    batch = Batch.from_data_list([task.encode(TEXT_A, TEXT_B), task.encode("手机", "苹果手机好用吗")])
    with torch.no_grad():
        tokens, cls = model.encode_chars(batch)
        # c_CLS is the mean of each pair's token states
        assert torch.allclose(cls, scatter(tokens, batch["token"].batch, 0, reduce="mean"), atol=1e-5)
        # every token has type 0: e5's untrained type row 1 is never read
        model.encoder.embeddings.segment.weight[1].fill_(100.0)
        assert torch.allclose(model.encode_chars(batch)[0], tokens)
        (row, _) = task.decode(model(batch), batch)
    assert row["pred"] in ("0", "1")


def test_segments_and_pooling_for_a_bert_checkpoint(tmp_path, shared_data):
    """A BERT checkpoint keeps its segments (type 1 for the second sentence) and the pooled c_CLS."""
    from transformers import BertConfig, BertModel

    bert_dir = tmp_path / "bert"
    BertModel(BertConfig(vocab_size=12, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=32, max_position_embeddings=140)).save_pretrained(bert_dir)
    (bert_dir / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *"苹果手机好用吗"]))
    assert pair_segments(bert_dir) is True
    task = get_task("let")(resolve("let/lcqmc", [f"data.root={shared_data}", f"model.pretrained={bert_dir}",
                                                 "data.segmentation=jieba", *TINY]))
    model = task.build_model().eval()
    assert model.config.segments is True and model.config.cls == "pooled"
    batch = Batch.from_data_list([task.encode("苹果手机", "好用吗")])
    with torch.no_grad():
        before = model.encode_chars(batch)[0]
        model.encoder.embeddings.segment.weight[1].fill_(100.0)
        assert not torch.allclose(model.encode_chars(batch)[0], before)


def test_e5_reads_its_own_pieces(e5_spm, shared_data, tmp_path):
    """data.encoder_tokens=pieces: the graph holds e5's pieces of the pair, every token is covered by
    the piece it sits in, and the encoder reads the pieces, a character taking its piece's state."""
    task = get_task("let")(resolve("let/lcqmc_e5_pieces", [f"data.root={shared_data}", f"data.cache_dir={tmp_path}",
                                                           "data.segmentation=jieba", *TINY]))
    pieces = e5_spm
    b_text = "这个手机 电池耐用吗？"  # a space: its ▁ is a piece of its own that covers no character
    graph = task.encode(TEXT_A, b_text)
    piece, tok = graph["piece"], graph["token"]
    own = [pieces.encode_many([t]).ids.tolist() for t in (TEXT_A, b_text)]
    assert piece.input_ids.tolist() == [0, *own[0], 2, *own[1], 2]  # <s> a </s> b </s>
    assert piece.sent.tolist() == [0] * (len(own[0]) + 2) + [1] * (len(own[1]) + 1)
    src, dst = graph["piece", "covers", "token"].edge_index
    assert dst.tolist() == list(range(tok.num_nodes))
    for p, t in zip(src.tolist(), dst.tolist(), strict=True):
        char, holder = tok.text[t], piece.text[p]
        if tok.char_index[t] < 0:  # [CLS] → <s>, [SEP] → </s>
            assert holder == {"[CLS]": "<s>", "[SEP]": "</s>"}[char]
        else:
            assert unicodedata.normalize("NFKC", char) in holder, (char, holder)
    assert "▁" in piece.text and "▁" not in [piece.text[p] for p in src.tolist()]

    model = task.build_model().eval()
    batch = Batch.from_data_list([graph, task.encode("手机", "苹果手机好用吗")])
    with torch.no_grad():
        states, cls = model.encode_chars(batch)
        dense = model.encoder(*(t.unsqueeze(0) for t in (piece.input_ids, torch.arange(piece.num_nodes),
                                                       torch.zeros_like(piece.input_ids))),
                              torch.ones(1, 1, piece.num_nodes, dtype=torch.bool))[0]
    n = tok.num_nodes
    assert torch.allclose(states[:n], dense[src], atol=1e-5)  # the first graph's tokens: their pieces' states
    assert torch.allclose(cls[0], dense.mean(0), atol=1e-5)  # mean over the pieces
    assert torch.equal(states[1], states[2])  # 苹 and 果 sit in one piece, 苹果
    assert not torch.allclose(states[:n], model.encoder(tok.input_ids[None], torch.arange(n)[None],
                                                        torch.zeros_like(tok.input_ids)[None],
                                                        torch.ones(1, 1, n, dtype=torch.bool))[0], atol=1e-3)


def test_pieces_train_from_the_command_and_reload(e5_spm, e5_two_layers, shared_data, samples, tmp_path):
    from graphmatch.cli.main import main

    run = tmp_path / "run"
    args = ["train", "let/lcqmc_e5_pieces", "--set",
            *_pairs(samples, shared_data, tmp_path, f"model.pretrained={e5_two_layers}"), "--out", str(run)]
    assert main(args) == 0
    task, model = load(run)
    assert task.data.encoder_tokens == "pieces"
    graph = task.encode(TEXT_A, TEXT_B)
    assert graph["piece"].input_ids[:3].tolist() == [0, *e5_spm
                                                    .encode_many([TEXT_A]).ids[:2].tolist()]
    with torch.no_grad():
        (row,) = task.decode(model.eval()(Batch.from_data_list([graph])), Batch.from_data_list([graph]))
    assert row["pred"] in ("0", "1")


def test_pieces_need_a_pretrained_subword_encoder(tmp_path, shared_data, capsys):
    from graphmatch.cli.main import main

    # LET's own transformer has no pieces: one line naming the key, exit 2, no run folder
    out = tmp_path / "run"
    assert main(["train", "let/lcqmc", "--set", "data.encoder_tokens=pieces", f"data.root={shared_data}",
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "data.encoder_tokens=pieces" in err and "model.pretrained" in err
    assert not out.exists()
    # a checkpoint whose vocabulary is characters (a Chinese BERT): its pieces are its characters
    from transformers import BertConfig, BertModel

    bert_dir = tmp_path / "bert"
    BertModel(BertConfig(vocab_size=12, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=32)).save_pretrained(bert_dir)
    (bert_dir / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *"苹果手机好用吗"]))
    config = resolve("let/lcqmc", [f"data.root={shared_data}", f"model.pretrained={bert_dir}", "model.encoder=bert",
                                   "data.encoder_tokens=pieces", "data.segmentation=jieba", *TINY])
    with pytest.raises(ValueError, match=r"^data.encoder_tokens=pieces: .* reads one character a token"):
        get_task("let")(config)  # before anything is built
