"""A tiny SentencePiece checkpoint folder (a Unigram ``tokenizer.json`` with XLM-R's special tokens
and pair template), read in milliseconds where e5-small's 250,002 pieces take seconds."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors

SPECIAL = ["<s>", "<pad>", "</s>", "<unk>"]
PIECES = ("\u2581the", "\u2581lid", "\u2581jar", "\u2581")


def tiny_sentencepiece_folder(path: Path, pieces: Iterable[str] = PIECES) -> Path:
    """A folder with ``tokenizer.json``, ``tokenizer_config.json`` and ``special_tokens_map.json``:
    ``SPECIAL`` (ids 0-3), ``pieces``, then ``<mask>``."""
    path.mkdir(parents=True, exist_ok=True)
    vocab = [(t, 0.0) for t in SPECIAL] + [(p, -1.0 - i) for i, p in enumerate(pieces)] + [("<mask>", 0.0)]
    tokenizer = Tokenizer(models.Unigram(vocab, unk_id=SPECIAL.index("<unk>")))
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
    tokenizer.decoder = decoders.Metaspace()
    tokenizer.add_special_tokens([*SPECIAL, "<mask>"])
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>", special_tokens=[("<s>", 0), ("</s>", 2)])
    tokenizer.save(str(path / "tokenizer.json"))
    (path / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "XLMRobertaTokenizer"}))
    roles = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "sep_token": "</s>",
             "pad_token": "<pad>", "cls_token": "<s>", "mask_token": "<mask>"}
    (path / "special_tokens_map.json").write_text(json.dumps(roles))
    return path
