r"""Marks that let an encoder tell K-BERT's injected (branch) tokens from the sentence's (trunk):
:class:`BranchMarking`."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import torch
from torch import Tensor, nn


def cross_pairs(branch: Tensor, visible: Tensor) -> Tensor:
    r"""``[B, L, L]`` bool :math:`c_{ij} = V_{ij}\,[b_i \neq b_j]`: the visible pairs of a trunk and a branch token."""
    return visible & (branch.unsqueeze(2) != branch.unsqueeze(1))


class BranchMarking(nn.Module):
    r"""Learned, zero-initialised marks of the branch tokens: an embedding and an attention bias.

    In K-BERT (Liu et al., AAAI 2020) a branch token differs from a trunk token only by its soft
    position, which it shares with the trunk's continuation; the official code builds a tag that says
    which tokens were injected and drops it. :class:`BranchMarking` gives the encoder two learned,
    zero-initialised marks (``docs/knowledge.md``):

    * a **branch embedding** :math:`\mathbf{m} \in \mathbb{R}^F`, added to the word embedding of every
      branch token (before the embeddings' sum is normalised):

      .. math::
          \mathbf{e}_i = \operatorname{LayerNorm}\big(\mathbf{E}^{tok}_{t_i} + b_i\,\mathbf{m}
          + \mathbf{E}^{pos}_{p_i} + \mathbf{E}^{seg}_{s_i}\big)

    * a **branch bias** :math:`\beta_{l,h}`, one scalar per layer :math:`l` and head :math:`h`, added
      to the attention logits of the visible pairs that join a trunk token and a branch token, in both
      directions (a trunk token reading its branch, a branch token reading its word):

      .. math::
          S^{(l,h)}_{ij} = \frac{\mathbf{q}_i^{\top}\mathbf{k}_j}{\sqrt{d}} + M_{ij} + \beta_{l,h}\, c_{ij},
          \qquad c_{ij} = V_{ij}\,[b_i \neq b_j]

      with :math:`b_i` = 1 for a branch token, :math:`V` the visible matrix and :math:`M` its additive
      mask (0 visible, the dtype's minimum hidden). The per-layer mask is built vectorised,
      ``mask_l[b, h, i, j] = M[b, i, j] + beta[l, h] * c[b, i, j]``.

    Both start at zero, so an untrained model computes what K-BERT computes; in eval mode (no
    gradient) its outputs are bit-equal. A checkpoint saved without them loads with them at zero
    (:attr:`BranchMarking.ZERO_IF_MISSING`, :func:`graphmatch.models.renamed_keys.upgrade_state_dict`).
    While :math:`\beta` takes gradients, PyTorch's scaled-dot-product attention computes with its
    reference (math) kernel, not the fused one: the training step costs more (``docs/knowledge.md``).

    Args:
        hidden_size (int): the encoder's width :math:`F`.
        num_layers (int): the encoder's layers.
        num_heads (int): attention heads per layer.
        embedding (bool): learn the branch embedding. (default: :obj:`True`)
        bias (bool): learn the branch bias. (default: :obj:`True`)

    Shapes:
        - ``branch``: :math:`(B, L)` bool; ``visible``: :math:`(B, L, L)` (or key padding :math:`(B, 1, L)`) bool
        - :meth:`embed`: :math:`(B, L, F)` → :math:`(B, L, F)`
        - :meth:`layer_mask`: :math:`(B, 1, L, L)` → :math:`(B, H, L, L)`
    """

    #: parameter names a checkpoint saved without them may lack: they load as zeros (their initial value)
    ZERO_IF_MISSING = ("embedding", "bias")

    def __init__(self, hidden_size: int, num_layers: int, num_heads: int, embedding: bool = True, bias: bool = True):
        super().__init__()
        if not (embedding or bias):
            raise ValueError("BranchMarking needs the embedding, the bias or both")
        self.embedding = nn.Parameter(torch.zeros(hidden_size)) if embedding else None
        self.bias = nn.Parameter(torch.zeros(num_layers, num_heads)) if bias else None
        self.register_load_state_dict_pre_hook(_zero_if_missing)

    def reset_parameters(self) -> None:
        """Zero: the marks start as K-BERT without them."""
        for p in self.parameters():
            nn.init.zeros_(p)

    def embed(self, word: Tensor, branch: Tensor) -> Tensor:
        r"""Word embeddings ``[B, L, F]`` with :math:`\mathbf{m}` added on the branch tokens."""
        if self.embedding is None:
            return word
        return word + branch.unsqueeze(-1).to(word.dtype) * self.embedding.to(word.dtype)

    def cross(self, branch: Tensor, visible: Tensor, dtype: torch.dtype) -> Tensor | None:
        """:func:`cross_pairs` as ``[B, 1, L, L]`` of ``dtype`` (``None`` without the bias)."""
        if self.bias is None:
            return None
        return cross_pairs(branch, visible).to(dtype).unsqueeze(1)

    def layer_mask(self, layer: int, mask: Tensor, cross: Tensor) -> Tensor:
        r"""Layer ``layer``'s additive mask ``[B, H, L, L]``: ``mask + beta[layer, h] * cross``."""
        return mask + self.bias[layer].to(mask.dtype).view(1, -1, 1, 1) * cross

    @contextmanager
    def hf_layer_masks(self, layers: Sequence[nn.Module], mask: Tensor, branch: Tensor, visible: Tensor
                       ) -> Iterator[None]:
        """While open, each of a ``transformers`` encoder's ``layers`` (``BertLayer``) reads its own
        :meth:`layer_mask` instead of the 4D ``attention_mask`` the model passes on (a forward
        pre-hook per layer, removed on exit); without the bias nothing changes."""
        if self.bias is None:
            yield
            return
        if len(layers) != self.bias.size(0):
            raise ValueError(f"the branch bias has {self.bias.size(0)} layers, the encoder {len(layers)}")
        cross = self.cross(branch, visible, mask.dtype)
        handles = [layer.register_forward_pre_hook(_MaskSwap(self, i, mask, cross), with_kwargs=True)
                   for i, layer in enumerate(layers)]
        try:
            yield
        finally:
            for handle in handles:
                handle.remove()

    def extra_repr(self) -> str:
        return f"embedding={self.embedding is not None}, bias={self.bias is not None}"


class _MaskSwap:
    """A ``BertLayer`` forward pre-hook: its ``attention_mask`` (second argument) replaced by the layer's own."""

    def __init__(self, marking: BranchMarking, layer: int, mask: Tensor, cross: Tensor):
        self.marking, self.layer, self.mask, self.cross = marking, layer, mask, cross

    def __call__(self, module: nn.Module, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        mask = self.marking.layer_mask(self.layer, self.mask, self.cross)
        if len(args) > 1:
            args = (args[0], mask, *args[2:])
        else:
            kwargs = {**kwargs, "attention_mask": mask}
        return args, kwargs


def _zero_if_missing(module: BranchMarking, state: dict, prefix: str, *_) -> None:
    # a module-level function, so that a model holding it still pickles
    for name in module.ZERO_IF_MISSING:
        param = getattr(module, name)
        if param is not None and prefix + name not in state:
            state[prefix + name] = torch.zeros_like(param)
