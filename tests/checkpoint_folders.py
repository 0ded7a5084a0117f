"""Real-format HuggingFace checkpoint folders for the tests of pretrained loading: what
``save_pretrained`` writes (``config.json`` + ``model.safetensors``) plus a ``vocab.txt``, and a
way to damage one the way a broken download or a wrong conversion does."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch

SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def vocabulary(texts: Sequence[str]) -> list[str]:
    """BERT's special tokens, then every non-space character of ``texts``."""
    chars = sorted({c for t in texts for c in t if not c.isspace()} - set(SPECIALS))
    return [*SPECIALS, *chars]


def bert_folder(path: Path, vocab: Sequence[str], *, hidden: int = 16, layers: int = 1, heads: int = 2,
                ffn: int = 32, max_positions: int = 64, pooler: bool = True, pretraining: bool = False,
                seed: int = 0) -> Path:
    """A tiny BERT saved by ``save_pretrained`` in ``path`` with ``vocab`` as its ``vocab.txt``.

    ``pooler=False`` saves a ``BertModel`` without pooler; ``pretraining=True`` saves a
    ``BertForPreTraining`` (``bert.`` prefixed names and the MLM/NSP heads ``cls.*``).
    """
    from transformers import BertConfig, BertForPreTraining, BertModel
    from transformers.utils import logging

    logging.disable_progress_bar()
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=len(vocab), hidden_size=hidden, num_hidden_layers=layers,
                        num_attention_heads=heads, intermediate_size=ffn, max_position_embeddings=max_positions)
    model = BertForPreTraining(config) if pretraining else BertModel(config, add_pooling_layer=pooler)
    model.save_pretrained(path)
    (path / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    return path


def edit_weights(path: Path, drop: Sequence[str] = (), add: dict[str, torch.Tensor] | None = None) -> None:
    """Remove the tensors ``drop`` from ``path/model.safetensors`` and add ``add`` (rewritten in place)."""
    from safetensors.torch import load_file, save_file

    file = path / "model.safetensors"
    state = load_file(str(file))
    for name in drop:
        del state[name]
    state.update(add or {})
    save_file(state, str(file), metadata={"format": "pt"})


def xlmr_folder(path: Path, vocab: Sequence[str], *, hidden: int = 16, layers: int = 2, heads: int = 2,
                ffn: int = 32, max_positions: int = 24, masked_lm: bool = False, seed: int = 0) -> Path:
    """A tiny XLM-R (``XLMRobertaModel``, or ``XLMRobertaForMaskedLM`` with ``roberta.`` names and
    ``lm_head.*`` when ``masked_lm``) saved by ``save_pretrained``: one token-type row, pad id 1, its
    position table starting at row 2; ``vocab`` written as ``vocab.txt`` for the size check."""
    from transformers import XLMRobertaConfig, XLMRobertaForMaskedLM, XLMRobertaModel
    from transformers.utils import logging

    logging.disable_progress_bar()
    torch.manual_seed(seed)
    config = XLMRobertaConfig(vocab_size=len(vocab), hidden_size=hidden, num_hidden_layers=layers,
                              num_attention_heads=heads, intermediate_size=ffn, max_position_embeddings=max_positions,
                              type_vocab_size=1, pad_token_id=1, bos_token_id=0, eos_token_id=2)
    model = XLMRobertaForMaskedLM(config) if masked_lm else XLMRobertaModel(config)
    model.save_pretrained(path)
    (path / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    return path
