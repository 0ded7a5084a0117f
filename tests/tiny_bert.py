"""A tiny, randomly initialised BERT checkpoint folder in the real format (``save_pretrained``
of a ``BertModel`` and a ``BertTokenizer``) for tests of the pretrained-transformer path."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

SPECIAL = ["[PAD]", "[unused0]", "[unused1]", "[unused2]", "[unused3]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def tiny_bert_folder(path: Path, texts: Iterable[str] = (), hidden: int = 32, layers: int = 2, seed: int = 0) -> Path:
    """Write a checkpoint whose vocabulary holds the special tokens, four ``[unusedN]`` slots and
    the words and CJK characters of ``texts`` (as BERT's basic tokenizer splits them)."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    from graphmatch.graphs.relation import tokenize_chars
    from graphmatch.graphs.relation_markup import MARKERS

    words: set[str] = set()
    for text in texts:
        for marker in MARKERS:
            text = text.replace(marker, " ")
        words.update(tokenize_chars(text))
    path.mkdir(parents=True, exist_ok=True)
    vocab = SPECIAL + sorted(words)
    (path / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    (path / "tokenizer_config.json").write_text('{"tokenizer_class": "BertTokenizer", "do_lower_case": true}')
    AutoTokenizer.from_pretrained(str(path), local_files_only=True).save_pretrained(str(path))
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=len(vocab), hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=2,
                        intermediate_size=2 * hidden, max_position_embeddings=160)
    BertModel(config).save_pretrained(str(path))
    return path
