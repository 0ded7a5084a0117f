r"""Sentence embeddings of a pretrained checkpoint, before any fine-tuning: what a knowledge
selection (:class:`~graphmatch.graphs.branch_selection.BranchSelection`) scores branches with.

A text :math:`x` of pieces :math:`t_1 \dots t_n` (the checkpoint's own tokenizer, its special
tokens included, cut at ``max_length``) is the mean of the encoder's last hidden states,

.. math::
    e(x) = \frac{1}{n} \sum_{i=1}^{n} h_i,

as multilingual-e5 and MiniLM were trained to be compared by cosine. Texts are embedded in
batches of similar length, in the order of their length (little padding); a bar on stderr.

The embeddings are made on one CPU thread, whatever the caller's setting: a matrix product sums in
another order on two threads, the last bits of a cosine change, and a selection that ranks
near-equal branches could keep another one, so that the trees (and every figure trained on them)
would depend on the thread count of whoever filled the cache.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from graphmatch.io.datafiles import file_digest
from graphmatch.pretrained import Pretrained


class SentenceEmbedder:
    """Mean-pooled embeddings ``[len(texts), d]`` (float32) of a checkpoint folder's ``BertModel``.

    Args:
        checkpoint: the resolved pretrained encoder, with its weights (not a run's stored encoder).
        batch_size (int, optional): texts per forward pass. (default: :obj:`64`)
        max_length (int, optional): pieces kept per text. (default: :obj:`128`)
        progress (bool, optional): a bar on stderr while embedding. (default: :obj:`True`)
        prefix (str, optional): written before every text (an encoder's instruction, e5's
            ``"query: "``). (default: ``""``)
    """

    def __init__(self, checkpoint: Pretrained, batch_size: int = 64, max_length: int = 128, progress: bool = True,
                 prefix: str = ""):
        if checkpoint.stored or checkpoint.format != "hf":
            raise ValueError(f"data.select: scoring branches needs the weights of a HuggingFace checkpoint; "
                             f"{checkpoint.source} has none here")
        self.checkpoint, self.batch_size, self.max_length, self.progress = checkpoint, batch_size, max_length, progress
        self.prefix = prefix
        self._model = None
        self._tokenizer = None

    @property
    def key(self) -> str:
        """What identifies the encoder in a cache key: the sha256 of its weights (and the prefix, where
        there is one)."""
        key = "+".join(file_digest(w)[:16] for w in self.checkpoint.weights) + "+threads=1"
        return f"{key}+prefix={self.prefix!r}" if self.prefix else key

    def _load(self) -> None:
        import torch
        from transformers import BertModel

        folder = self.checkpoint.folder
        spm = folder / "tokenizer.json"
        if self.checkpoint.vocab is None and spm.is_file():
            from graphmatch.text.sentencepiece import SentencePieceTokenizer

            tok = SentencePieceTokenizer(spm).copy()  # the process's reading of the file, truncated here
            tok.enable_truncation(self.max_length)
            self._tokenizer = lambda texts: [e.ids for e in tok.encode_batch(texts)]
        else:
            from transformers import BertTokenizerFast

            from graphmatch.text.wordpiece import WordPieceTokenizer

            hf = BertTokenizerFast(vocab_file=str(self.checkpoint.vocab),
                                   do_lower_case=WordPieceTokenizer.lowercase_of(folder))
            self._tokenizer = lambda texts: hf(texts, truncation=True, max_length=self.max_length)["input_ids"]
        from transformers.utils import logging as hf_logging

        bars = hf_logging.is_progress_bar_enabled()
        if not (self.progress and sys.stderr.isatty()):  # transformers' "Loading weights" bar: a terminal's only
            hf_logging.disable_progress_bar()
        try:
            model = BertModel.from_pretrained(str(folder), add_pooling_layer=False)
        finally:
            if bars:
                hf_logging.enable_progress_bar()
        self._model = model.eval().to(torch.float32)

    def __call__(self, texts: list[str]) -> np.ndarray:
        import torch
        from tqdm.auto import tqdm

        if self._model is None:
            self._load()
        ids = self._tokenizer([self.prefix + text for text in texts])
        order = np.argsort([len(i) for i in ids], kind="stable")
        out = np.zeros((len(texts), self._model.config.hidden_size), dtype=np.float32)
        starts = range(0, len(order), self.batch_size)
        bar = tqdm(starts, desc=f"scoring branches ({Path(self.checkpoint.source).name})", unit="batch",
                   file=sys.stderr, disable=None if self.progress and len(starts) > 1 else True, leave=False)
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            self._embed(ids, order, out, bar)
        finally:
            torch.set_num_threads(threads)
        return out

    def _embed(self, ids: list[list[int]], order: np.ndarray, out: np.ndarray, bar) -> None:
        import torch
        from torch.nn.utils.rnn import pad_sequence

        with torch.inference_mode():
            for start in bar:
                rows = order[start:start + self.batch_size]
                batch = pad_sequence([torch.tensor(ids[r]) for r in rows.tolist()], batch_first=True)
                lengths = torch.tensor([len(ids[r]) for r in rows.tolist()])
                mask = (torch.arange(batch.shape[1]) < lengths[:, None]).long()
                hidden = self._model(input_ids=batch, attention_mask=mask).last_hidden_state
                pooled = (hidden * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True)
                out[rows] = pooled.numpy()


__all__ = ["SentenceEmbedder"]
