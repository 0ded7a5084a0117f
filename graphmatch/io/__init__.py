"""Files in and out, for every layer: users' input files (:mod:`~graphmatch.io.input_files`)."""
