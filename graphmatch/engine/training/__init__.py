"""Training one run on Lightning: :mod:`~graphmatch.engine.training.fitting` prepares and fits it
(a task's datasets, model and trainer), :mod:`~graphmatch.engine.training.trainer` builds the
Lightning ``Trainer``, :mod:`~graphmatch.engine.training.module` is the ``LightningModule`` around a
task, :mod:`~graphmatch.engine.training.datamodule` its batches; the optimiser
(:mod:`~graphmatch.engine.training.optim`), precision (:mod:`~graphmatch.engine.training.precision`),
stop signals (:mod:`~graphmatch.engine.training.signals`), the per-run callbacks
(:mod:`~graphmatch.engine.training.callbacks`) and a full disk
(:mod:`~graphmatch.engine.training.disk_full`)."""
