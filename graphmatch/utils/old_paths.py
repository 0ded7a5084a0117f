"""Modules moved without a file left at their old path: ``{old: new}``. ``graphmatch/__init__.py``
keeps each old path importable for one release (:func:`graphmatch.utils.deprecated.keep_old_paths`)."""

OLD_PATHS: dict[str, str] = {
    "graphmatch.recipe_keys": "graphmatch.tasks.recipes.keys",
    "graphmatch.tasks.recipe": "graphmatch.tasks.recipes.sections",
    "graphmatch.engine.config": "graphmatch.tasks.recipes.resolve",
    "graphmatch.engine.shorten": "graphmatch.tasks.recipes.shorten",
    "graphmatch.checkpoints": "graphmatch.pretrained",
    "graphmatch.checkpoints.e5_q4": "graphmatch.pretrained.e5_q4",
    "graphmatch.checkpoints.files": "graphmatch.pretrained.files",
    "graphmatch.checkpoints.hub": "graphmatch.pretrained.hub",
    "graphmatch.checkpoints.packaged": "graphmatch.pretrained.packaged",
    "graphmatch.checkpoints.record": "graphmatch.pretrained.record",
    "graphmatch.checkpoints.uer": "graphmatch.pretrained.uer",
    "graphmatch.text.checkpoint": "graphmatch.text.pretrained",
}
