"""Files in and out, for every layer: users' input files (:mod:`~graphmatch.io.input_files`), and a lock
for processes that take turns on a path (:mod:`~graphmatch.io.lock`)."""
