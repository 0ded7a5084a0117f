"""Which tokenizer a checkpoint's vocabulary asks for (``data.tokenization: auto``)."""

import pytest

from graphmatch.text import CharTokenizer, WordPieceTokenizer
from graphmatch.text.pretrained import is_wordpiece_vocab, pretrained_folder, pretrained_tokenizer, tokenization_of


def test_auto_tells_chinese_characters_from_english_word_pieces(shared_data, minilm, tmp_path):
    chinese = shared_data / "kbert" / "vocab" / "google_vocab.txt"
    assert not is_wordpiece_vocab(chinese) and tokenization_of(chinese) == "chars"
    assert is_wordpiece_vocab(minilm / "vocab.txt") and tokenization_of(minilm / "vocab.txt") == "wordpiece"
    assert tokenization_of(chinese, "wordpiece") == "wordpiece"  # an explicit choice wins
    with pytest.raises(ValueError,
                       match="tokenization must be one of auto, chars, wordpiece, sentencepiece, got 'pieces'"):
        tokenization_of(chinese, "pieces")
    half = tmp_path / "vocab.txt"  # 4 CJK entries of 10: word pieces; of 8 (not under half): characters
    half.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n##ab\n中\n国\n##人\n大\n", encoding="utf-8")
    assert tokenization_of(half) == "wordpiece"
    half.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n中\n国\n##人\n大\n", encoding="utf-8")
    assert tokenization_of(half) == "chars"


def test_checkpoint_tokenizer(minilm, tmp_path):
    pieces = pretrained_tokenizer("minilm")
    assert isinstance(pieces, WordPieceTokenizer) and pieces.lowercase and len(pieces) == 30522
    assert isinstance(pretrained_tokenizer(minilm, "chars"), CharTokenizer)
    assert pretrained_folder(str(minilm)) == minilm
    with pytest.raises(FileNotFoundError, match="--pretrained: no checkpoint folder"):
        pretrained_folder(tmp_path / "missing")
    with pytest.raises(FileNotFoundError, match="no vocab.txt"):
        pretrained_tokenizer(tmp_path)
