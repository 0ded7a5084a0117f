r"""Multi-head self-attention restricted to a visibility relation (K-BERT's mask-self-attention)."""

from __future__ import annotations

import contextlib
import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch_geometric.nn import MessagePassing
from torch_geometric.utils import softmax

from graphmatch.nn.choices import MODES


def visibility_density(visible: Tensor) -> float:
    r"""Fraction of visible (query, key) pairs among the pairs of real tokens.

    A token is real when its row sees at least one token; the denominator is
    :math:`\sum_b n_b^2` over the samples' real-token counts :math:`n_b`.
    A key-padding mask of shape ``[B, 1, L]`` has density 1.
    """
    if visible.dim() == 3 and visible.size(1) == 1:
        return 1.0
    n = visible.any(-1).sum(-1, dtype=torch.float64)
    pairs = float((n * n).sum())
    return float(torch.count_nonzero(visible)) / pairs if pairs > 0 else 1.0


def additive_attention_mask(visible: Tensor, dtype: torch.dtype = torch.float32) -> tuple[Tensor, Tensor]:
    r"""Bool visibility → ``(mask, has_any)`` for the dense path, built once and shared by all layers.

    ``mask`` is ``[B, 1, L, L]`` (or ``[B, 1, 1, L]`` for a key-padding mask): :math:`0` where
    visible, the dtype's minimum elsewhere, so a row that sees nothing (padding) gets a finite
    uniform average, which ``has_any`` (``[B, L]`` or ``[B, 1]``) then zeroes. A float mask is
    what CPU SDPA's fused kernel takes as is: a bool mask would be converted in every layer. Under
    bf16 autocast the mask is built in fp32 and clamped to bf16's lowest finite value in the layer:
    a hidden key still gets exactly zero weight (``tests/nn/test_bf16_fp32_layers.py``).
    """
    mask = torch.where(visible, 0.0, torch.finfo(dtype).min)
    return mask.to(dtype).unsqueeze(1), visible.any(-1)


def dense_to_edge_index(visible: Tensor) -> Tensor:
    r"""``[B, L, L]`` visibility → ``[2, E]`` edges ``key → query`` over the ``B * L`` flattened tokens."""
    b, i, j = visible.nonzero(as_tuple=True)
    offset = b * visible.size(-1)
    return torch.stack([offset + j, offset + i])


def pad_rows(x: Tensor, rows: tuple[Tensor, int, int]) -> Tensor:
    """The real tokens' rows ``x`` (``[N, F]``) at their places ``rows = (index, B, L)`` of a
    ``[B, L, F]`` tensor, zero elsewhere (the padding)."""
    index, B, L = rows
    return x.new_zeros(B * L, x.size(-1)).index_copy(0, index, x).view(B, L, -1)


class MaskSelfAttention(MessagePassing):
    r"""Multi-head scaled dot-product self-attention in which token :math:`i` attends only to
    the tokens :math:`\mathcal{V}(i)` it can see, from `"K-BERT: Enabling Language
    Representation with Knowledge Graph" <https://arxiv.org/abs/1909.07606>`_ (Liu et al.,
    AAAI 2020):

    .. math::
        \alpha_{ij}^{h} = \operatorname{softmax}_{j \in \mathcal{V}(i)}
        \left( \frac{(\mathbf{W}_Q^h \mathbf{x}_i)^\top (\mathbf{W}_K^h \mathbf{x}_j)}{\sqrt{d}} \right),
        \qquad
        \mathbf{x}_i' = \mathbf{W}_O \Big\Vert_{h=1}^{H} \sum_{j \in \mathcal{V}(i)}
        \alpha_{ij}^{h}\, \mathbf{W}_V^h \mathbf{x}_j

    with :math:`d` = ``hidden_channels / heads``. This equals K-BERT's additive mask
    :math:`\mathbf{M}_{ij} = 0` if :math:`j \in \mathcal{V}(i)` else :math:`-\infty`. A token
    that sees nothing (padding) gets a zero context, so its output is :math:`\mathbf{W}_O`'s bias.

    Two equivalent computations:

    * **dense**: :func:`torch.nn.functional.scaled_dot_product_attention` with an additive
      ``[B, 1, L, L]`` mask (:func:`additive_attention_mask`; pass it as ``attn_mask`` to build it
      once for several layers); CPU SDPA keeps its fused kernel when ``attention_dropout`` is 0
      or in eval mode;
    * **sparse**: message passing over the visible pairs, normalised per query with
      :func:`torch_geometric.utils.softmax`.

    With ``mode="auto"`` the sparse path is taken when the visibility density (see
    :func:`visibility_density`) is below ``sparse_threshold``. Edge-wise attention was
    measured 37-124x slower than dense SDPA at K-BERT's density (about 0.6) and still 2.7x
    slower at 7 %, hence the low default.

    Args:
        hidden_channels (int): Size of each input and output vector.
        heads (int, optional): Number of attention heads; must divide ``hidden_channels``.
            (default: :obj:`1`)
        attention_dropout (float, optional): Dropout on the attention weights.
            (default: :obj:`0.0`)
        bias (bool, optional): Learn additive biases in the projections. (default: :obj:`True`)
        mode (str, optional): ``"auto"``, ``"dense"`` or ``"sparse"``. (default: :obj:`"auto"`)
        sparse_threshold (float, optional): Density below which ``"auto"`` uses the sparse path.
            (default: :obj:`0.02`)
        attention_fp32 (bool, optional): Under bf16 or fp16 autocast, the dense path's product
            :math:`\operatorname{softmax}(QK^\top/\sqrt{d} + M)V` takes :math:`Q, K, V` in fp32
            (the projections stay in the autocast dtype). On the CPU torch's bf16 attention
            backward was measured 4x slower than its fp32 one, at K-BERT's lengths. Without
            autocast it changes nothing. (default: :obj:`False`)

    Shapes:
        - **input:** dense: tokens :math:`(B, L, F)`, visibility :math:`(B, L, L)` or a
          key-padding mask :math:`(B, 1, L)` (bool, ``True`` = visible); sparse: tokens
          :math:`(N, F)`, ``edge_index`` :math:`(2, E)` (``key → query``).
        - **output:** same leading shape as the tokens, last dim :math:`F`; with
          ``return_attention_weights=True`` also the weights: dense input
          :math:`(B, H, L, L)`, sparse input ``(edge_index, alpha)`` with alpha :math:`(E, H)`.
    """

    def __init__(self, hidden_channels: int, heads: int = 1, attention_dropout: float = 0.0,
                 bias: bool = True, mode: str = "auto", sparse_threshold: float = 0.02,
                 attention_fp32: bool = False):
        super().__init__(aggr="add", node_dim=0)
        if hidden_channels % heads:
            raise ValueError(f"hidden_channels ({hidden_channels}) must be divisible by heads ({heads})")
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        self.hidden_channels = hidden_channels
        self.heads = heads
        self.head_dim = hidden_channels // heads
        self.attention_dropout = attention_dropout
        self.mode = mode
        self.sparse_threshold = sparse_threshold
        self.attention_fp32 = attention_fp32
        self._alpha: Tensor | None = None
        self.query = nn.Linear(hidden_channels, hidden_channels, bias=bias)
        self.key = nn.Linear(hidden_channels, hidden_channels, bias=bias)
        self.value = nn.Linear(hidden_channels, hidden_channels, bias=bias)
        self.out = nn.Linear(hidden_channels, hidden_channels, bias=bias)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        super().reset_parameters()
        for lin in (self.query, self.key, self.value, self.out):
            lin.reset_parameters()

    def resolve_mode(self, visible: Tensor, mode: str | None = None) -> str:
        """``"dense"`` or ``"sparse"`` for this visibility (``mode`` overrides ``self.mode``)."""
        mode = mode or self.mode
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        if mode != "auto":
            return mode
        return "sparse" if visibility_density(visible) < self.sparse_threshold else "dense"

    def forward(self, x: Tensor, visible: Tensor | None = None, edge_index: Tensor | None = None,
                mode: str | None = None, return_attention_weights: bool = False,
                attn_mask: tuple[Tensor, Tensor] | None = None, rows: tuple[Tensor, int, int] | None = None):
        """``rows`` (``(index, B, L)``, dense path only): ``x`` is the real tokens alone, ``[N, F]``,
        at rows ``index`` of the flattened ``[B·L]``; their queries, keys and values are scattered
        into ``[B, L]`` (zero padding) for the product, and the output is ``[N, F]`` again."""
        if rows is not None:
            return self._dense(x, visible, return_attention_weights, attn_mask, rows)
        if edge_index is not None:
            if x.dim() != 2:
                raise ValueError(f"with edge_index, x must be [N, F]; got shape {tuple(x.shape)}")
            out, alpha = self._sparse(x, edge_index, return_attention_weights)
            return (out, (edge_index, alpha)) if return_attention_weights else out
        if visible is None:
            raise ValueError("give either visible ([B, L, L] or [B, 1, L] bool) or edge_index ([2, E])")
        if x.dim() != 3:
            raise ValueError(f"with visible, x must be [B, L, F]; got shape {tuple(x.shape)}")
        B, L, _ = x.shape
        if visible.dtype != torch.bool or visible.dim() != 3 or visible.size(0) != B \
                or visible.size(-1) != L or visible.size(1) not in (1, L):
            raise ValueError(f"visible must be a bool tensor [B, L, L] or [B, 1, L] with B={B}, L={L}; "
                             f"got {visible.dtype} {tuple(visible.shape)}")
        if self.resolve_mode(visible, mode) == "dense":
            return self._dense(x, visible, return_attention_weights, attn_mask)
        if visible.size(1) == 1:
            visible = visible.expand(B, L, L)
        ei = dense_to_edge_index(visible)
        out, alpha = self._sparse(x.reshape(B * L, -1), ei, return_attention_weights)
        out = out.view(B, L, -1)
        if not return_attention_weights:
            return out
        dense = x.new_zeros(B, self.heads, L, L)
        b, i, j = ei[1] // L, ei[1] % L, ei[0] % L
        dense[b, :, i, j] = alpha
        return out, dense

    # -------------------------------------------------------------- dense path
    def _heads(self, t: Tensor) -> Tensor:  # [B, L, F] -> [B, H, L, d]
        return t.view(t.size(0), t.size(1), self.heads, self.head_dim).transpose(1, 2)

    def _dense(self, x: Tensor, visible: Tensor, return_attention_weights: bool,
               attn_mask: tuple[Tensor, Tensor] | None = None, rows: tuple[Tensor, int, int] | None = None):
        B, L, F_ = x.shape if rows is None else (rows[1], rows[2], x.size(-1))
        mask, has_any = attn_mask if attn_mask is not None else additive_attention_mask(visible, x.dtype)
        if rows is None:
            q, k, v = self._heads(self.query(x)), self._heads(self.key(x)), self._heads(self.value(x))
        else:  # the real tokens' projections, scattered into [B, L] with zero padding
            qkv = pad_rows(torch.cat([self.query(x), self.key(x), self.value(x)], -1), rows)
            q, k, v = (self._heads(t) for t in qkv.split(F_, -1))
        p = self.attention_dropout if self.training else 0.0
        if return_attention_weights:
            scores = (q @ k.transpose(-1, -2)) / math.sqrt(self.head_dim) + mask
            weights = scores.softmax(-1) * has_any[:, None, :, None]
            ctx = F.dropout(weights, p, self.training) @ v
        else:
            upcast = self.attention_fp32 and q.dtype in (torch.bfloat16, torch.float16)
            if upcast:  # and out of autocast, which would cast them back down for SDPA
                q, k, v = q.float(), k.float(), v.float()
            # mixed precision (bf16 q, k under autocast): the mask stays exact, 0 where visible and the
            # lowest finite bf16 elsewhere, so a hidden key's weight is exactly 0 (SDPA sums in fp32)
            if mask.dtype != q.dtype:
                mask = mask.clamp(min=torch.finfo(q.dtype).min).to(q.dtype)
            with torch.autocast(q.device.type, enabled=False) if upcast else contextlib.nullcontext():
                ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)
        ctx = ctx.transpose(1, 2).reshape(B, L, F_) * has_any.unsqueeze(-1)
        out = self.out(ctx if rows is None else ctx.reshape(B * L, F_)[rows[0]])
        return (out, weights) if return_attention_weights else out

    # ------------------------------------------------------------- sparse path
    def _sparse(self, x: Tensor, edge_index: Tensor, return_attention_weights: bool):
        H, d = self.heads, self.head_dim
        q = self.query(x).view(-1, H, d)
        k = self.key(x).view(-1, H, d)
        v = self.value(x).view(-1, H, d)
        ctx = self.propagate(edge_index, q=q, k=k, v=v, size=(x.size(0), x.size(0)))
        alpha = self._alpha
        self._alpha = None
        out = self.out(ctx.reshape(-1, self.hidden_channels))
        return out, (alpha if return_attention_weights else None)

    def message(self, q_i: Tensor, k_j: Tensor, v_j: Tensor, index: Tensor, ptr: Tensor | None,
                size_i: int | None) -> Tensor:
        alpha = (q_i * k_j).sum(-1) / math.sqrt(self.head_dim)  # [E, H]
        alpha = softmax(alpha, index, ptr, size_i)
        self._alpha = alpha
        alpha = F.dropout(alpha, self.attention_dropout, self.training)
        return v_j * alpha.unsqueeze(-1)

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}({self.hidden_channels}, heads={self.heads}, "
                f"mode={self.mode!r})")
