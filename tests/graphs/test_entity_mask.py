"""mask_matched_words (data.entity_mask): the trunk tokens of matched words with a kept branch, per word."""

import torch
from torch_geometric.data import Batch

from graphmatch.graphs.kbert import SentenceTreeBuilder, TreeOptions, mask_matched_words
from graphmatch.knowledge import KnowledgeGraph
from graphmatch.text import CharTokenizer

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *"我爱北京天安门苹果手机很好用首都城市水果义原"]
MASK = VOCAB.index("[MASK]")


def _batch(max_length=32):
    kg = KnowledgeGraph([("北京", "义原", "首都"), ("天安门", "义原", "城市"), ("苹果", "义原", "水果")])
    b = SentenceTreeBuilder(kg, CharTokenizer({t: i for i, t in enumerate(VOCAB)}), TreeOptions(max_length=max_length))
    return Batch.from_data_list([b("我爱北京天安门"), b("苹果手机很好用"), b("好")])


def _text(tok):
    return "".join(VOCAB[i] for i in tok.input_ids.tolist())


def test_p_zero_changes_nothing_and_draws_nothing():
    batch = _batch()
    ids = batch["token"].input_ids
    state = torch.random.get_rng_state()
    assert mask_matched_words(batch, 0.0, MASK)["token"].input_ids is ids
    assert torch.equal(torch.random.get_rng_state(), state)


def test_p_one_masks_exactly_the_trunk_of_matched_words():
    batch = _batch()
    before = batch["token"].input_ids.clone()
    stored = batch["token"].input_ids
    tok = mask_matched_words(batch, 1.0, MASK)["token"]
    assert _text(tok) == ("[CLS]我爱[MASK][MASK]义原首都[MASK][MASK][MASK]义原城市"
                          "[CLS][MASK][MASK]义原水果手机很好用[CLS]好")
    assert torch.equal(stored, before)  # a new tensor: the stored graphs are untouched
    changed = tok.input_ids != before
    assert not (changed & tok.branch).any()


def test_a_word_whose_branch_was_cut_keeps_its_tokens():
    batch = _batch(max_length=11)  # 天安门's branch falls past the cut: the word has no kept branch
    tok = mask_matched_words(batch, 1.0, MASK)["token"]
    assert _text(tok).startswith("[CLS]我爱[MASK][MASK]义原首都天安[CLS]")


def test_each_word_is_drawn_once_and_the_draw_follows_the_seed():
    batch = _batch()
    before = batch["token"].input_ids.clone()
    word = torch.zeros_like(before) - 1
    token, w = batch["token", "in", "word"].edge_index
    word[token] = w
    seen = set()
    for seed in range(20):
        torch.manual_seed(seed)
        a = mask_matched_words(_batch(), 0.5, MASK)["token"].input_ids
        torch.manual_seed(seed)
        assert torch.equal(a, mask_matched_words(_batch(), 0.5, MASK)["token"].input_ids)
        masked = a != before
        for k in range(int(w.max()) + 1):  # all of a word's tokens or none
            assert masked[word == k].all() or not masked[word == k].any()
        assert not masked[word < 0].any()
        seen.add(tuple(masked.tolist()))
    assert len(seen) > 2
