"""A trained model at work: :mod:`~graphmatch.engine.inference.predictor` (raw inputs in, rows
out), :mod:`~graphmatch.engine.inference.quantize` (int8 for ``predict --quantize``) and
:mod:`~graphmatch.engine.inference.probe` (what a model reads of its knowledge)."""
