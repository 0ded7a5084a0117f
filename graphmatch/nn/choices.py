"""The choices of the layers' options, importable without torch (a recipe is checked against
them before torch is loaded, :mod:`graphmatch.tasks.keys`)."""

#: masked attention kernels of :class:`~graphmatch.nn.mask_attention.MaskSelfAttention`
MODES = ("auto", "dense", "sparse")
#: SaGT's word updates (:class:`~graphmatch.nn.sagt.SaGT`)
UPDATES = ("gru", "residual")
