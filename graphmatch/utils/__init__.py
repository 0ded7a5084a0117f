"""Small helpers every layer may use: ragged arrays in NumPy (:mod:`~graphmatch.utils.ragged_np`,
no torch) and torch (:mod:`~graphmatch.utils.ragged`), packages whose names import on first use
(:mod:`~graphmatch.utils.lazy_exports`), old module paths kept for one release
(:mod:`~graphmatch.utils.deprecated`), what a process reads from a file, kept by its content
(:mod:`~graphmatch.utils.read_once`), and models built for a state dict without drawing their
initial weights (:mod:`~graphmatch.utils.unset_weights`)."""
