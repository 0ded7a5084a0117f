"""Recipes in one place, importable without torch: how a key is declared and checked
(:mod:`~graphmatch.tasks.recipes.keys`: ``key(...)``, ``check``, ``build``, ``Renamed``), the typed
sections the engine and a task read (:mod:`~graphmatch.tasks.recipes.sections`: ``Optim``,
``Train``, ``Recipe``), and how a recipe file becomes them (:mod:`~graphmatch.tasks.recipes.resolve`:
YAML, ``base:``, ``--set``, old key names; :mod:`~graphmatch.tasks.recipes.shorten` for
``GRAPHMATCH_SHORTEN=1``). Each task's own ``data`` and ``model`` sections are declared in
``graphmatch/tasks/<family>_keys.py`` (:mod:`graphmatch.tasks.keys`)."""
