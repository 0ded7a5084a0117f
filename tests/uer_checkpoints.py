"""Tiny checkpoints in the official K-BERT code's (UER) format, and a dense reference of the UER
model written from its formulas (not from graphmatch's modules), for the tests of
``graphmatch.pretrained.uer``."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import torch
from torch import Tensor

CONFIG = {"emb_size": 16, "feedforward_size": 24, "hidden_size": 16, "heads_num": 4, "layers_num": 2, "dropout": 0.1}
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *"abcdefghijklmnop"]


def uer_state(config: Mapping = CONFIG, vocab_size: int = len(VOCAB), head: str | None = None, labels: int = 3,
              target: bool = True, seed: int = 0) -> dict[str, Tensor]:
    """Random weights under UER's names: embeddings (512 positions, 3 segments), layers, the BERT
    target (``target.*``) when ``target``, and a fine-tuned head (``"classifier"``: ``output_layer_1``,
    ``output_layer_2``; ``"tagger"``: ``output_layer``). LayerNorms are random too, so that they matter."""
    g = torch.Generator().manual_seed(seed)
    h, f = config["hidden_size"], config["feedforward_size"]

    def rand(*shape: int, scale: float = 0.3) -> Tensor:
        return torch.randn(*shape, generator=g) * scale

    state: dict[str, Tensor] = {}

    def linear(name: str, n_out: int, n_in: int) -> None:
        state[f"{name}.weight"], state[f"{name}.bias"] = rand(n_out, n_in), rand(n_out, scale=0.1)

    def norm(name: str) -> None:
        state[f"{name}.gamma"], state[f"{name}.beta"] = 1 + rand(h), rand(h, scale=0.1)

    state["embedding.word_embedding.weight"] = rand(vocab_size, h)
    state["embedding.position_embedding.weight"] = rand(512, h)
    state["embedding.segment_embedding.weight"] = rand(3, h)
    norm("embedding.layer_norm")
    for i in range(config["layers_num"]):
        p = f"encoder.transformer.{i}"
        for k in range(3):
            linear(f"{p}.self_attn.linear_layers.{k}", h, h)
        linear(f"{p}.self_attn.final_linear", h, h)
        norm(f"{p}.layer_norm_1")
        linear(f"{p}.feed_forward.linear_1", f, h)
        linear(f"{p}.feed_forward.linear_2", h, f)
        norm(f"{p}.layer_norm_2")
    if target:
        linear("target.mlm_linear_1", h, h)
        norm("target.layer_norm")
        linear("target.mlm_linear_2", vocab_size, h)
        linear("target.nsp_linear_1", h, h)
        linear("target.nsp_linear_2", 2, h)
    if head == "classifier":
        linear("output_layer_1", h, h)
        linear("output_layer_2", labels, h)
    elif head == "tagger":
        linear("output_layer", labels, h)
    return state


def uer_folder(path: Path, state: Mapping[str, Tensor], config: Mapping = CONFIG, vocab: Sequence[str] = VOCAB,
               weights: str = "google_model.bin") -> Path:
    """A folder as the official code's ``models/``: ``torch.save``'d weights, ``google_config.json``,
    ``google_vocab.txt``."""
    path.mkdir(parents=True, exist_ok=True)
    torch.save(dict(state), path / weights)
    (path / "google_config.json").write_text(json.dumps(dict(config)), encoding="utf-8")
    (path / "google_vocab.txt").write_text("".join(t + "\n" for t in vocab), encoding="utf-8")
    return path


def _norm(x: Tensor, gamma: Tensor, beta: Tensor) -> Tensor:
    n = x.size(-1)
    mean = x.sum(-1, keepdim=True) / n
    std = (((x - mean) ** 2).sum(-1, keepdim=True) / (n - 1)).sqrt()  # unbiased
    return gamma * (x - mean) / (std + 1e-6) + beta


def _linear(state: Mapping[str, Tensor], name: str, x: Tensor) -> Tensor:
    return x @ state[f"{name}.weight"].T + state[f"{name}.bias"]


def uer_hidden(state: Mapping[str, Tensor], src: Tensor, seg: Tensor, pos: Tensor, vm: Tensor,
               config: Mapping = CONFIG) -> Tensor:
    """The UER BERT encoder's states ``[B, L, H]``, from its formulas: ``seg`` is UER's (1 sentence A,
    2 sentence B, 0 padding), ``vm`` the visible matrix (added as ``(1 - vm) * -10000``)."""
    heads, h = config["heads_num"], config["hidden_size"]
    d = h // heads
    x = (state["embedding.word_embedding.weight"][src] + state["embedding.position_embedding.weight"][pos]
         + state["embedding.segment_embedding.weight"][seg])
    x = _norm(x, state["embedding.layer_norm.gamma"], state["embedding.layer_norm.beta"])
    mask = (1.0 - vm.float()).unsqueeze(1) * -10000.0
    B, L, _ = x.shape
    for i in range(config["layers_num"]):
        p = f"encoder.transformer.{i}"
        q, k, v = (_linear(state, f"{p}.self_attn.linear_layers.{j}", x).view(B, L, heads, d).transpose(1, 2)
                   for j in range(3))
        probs = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d) + mask, -1)
        ctx = (probs @ v).transpose(1, 2).reshape(B, L, h)
        x = _norm(_linear(state, f"{p}.self_attn.final_linear", ctx) + x,
                  state[f"{p}.layer_norm_1.gamma"], state[f"{p}.layer_norm_1.beta"])
        inner = _linear(state, f"{p}.feed_forward.linear_1", x)
        inner = inner * 0.5 * (1.0 + torch.erf(inner / math.sqrt(2.0)))
        x = _norm(_linear(state, f"{p}.feed_forward.linear_2", inner) + x,
                  state[f"{p}.layer_norm_2.gamma"], state[f"{p}.layer_norm_2.beta"])
    return x


def uer_classifier_logits(state: Mapping[str, Tensor], hidden: Tensor) -> Tensor:
    """``run_kbert_cls.py``'s head on the first token: ``output_layer_2(tanh(output_layer_1(h[:, 0])))``."""
    return _linear(state, "output_layer_2", torch.tanh(_linear(state, "output_layer_1", hidden[:, 0])))


def uer_inputs(seed: int = 0, batch: int = 3, length: int = 10, vocab_size: int = len(VOCAB)):
    """A padded batch as ``run_kbert_cls.py`` builds it: ``(src, seg, pos, vm)`` with UER segments
    (1 text a, 2 text b, 0 padding), soft positions, a symmetric visible matrix that every token of a
    sample sees itself in, padding rows and columns all False; sample 0 is a pair, sample 1 unpadded."""
    g = torch.Generator().manual_seed(seed)
    src = torch.zeros(batch, length, dtype=torch.long)
    seg = torch.zeros(batch, length, dtype=torch.long)
    pos = torch.full((batch, length), length - 1, dtype=torch.long)
    vm = torch.zeros(batch, length, length, dtype=torch.bool)
    for b in range(batch):
        n = length if b == 1 else int(torch.randint(3, length, (1,), generator=g))
        src[b, :n] = torch.randint(5, vocab_size, (n,), generator=g)
        src[b, 0] = 2
        seg[b, :n] = 1
        if b == 0:
            seg[b, n // 2:n] = 2
        pos[b, :n] = torch.cat([torch.zeros(1, dtype=torch.long),
                                torch.sort(torch.randint(1, n + 2, (n - 1,), generator=g)).values])
        vis = torch.rand(n, n, generator=g) < 0.5
        vm[b, :n, :n] = vis | vis.T | torch.eye(n, dtype=torch.bool)
    return src, seg, pos, vm
