"""K-BERT's three kinds of data are three task classes, chosen once from ``data.dataset``: recipes
and run folders keep saying ``task: kbert``, and no method of the family tests the kind."""

import ast
import inspect
import pickle

import pytest

import graphmatch.tasks.kbert as kbert_module
from graphmatch.engine import resolve
from graphmatch.tasks.base import get_task
from graphmatch.tasks.kbert import (
    KINDS_OF_TASK,
    KBertClassificationTask,
    KBertNERTask,
    KBertPairTask,
    KBertTask,
)

TINY = ["model.hidden_size=32", "model.num_layers=1", "model.num_heads=2", "model.intermediate_size=32",
        "model.max_position=64", "data.max_length=48", "train.progress=false"]


@pytest.mark.parametrize(("recipe", "cls", "metrics"), [
    ("kbert/chnsenticorp_hownet_quick", KBertClassificationTask, ("accuracy",)),
    ("kbert/lcqmc_hownet_quick", KBertPairTask, ("accuracy", "f1")),
    ("kbert/medical_ner_medical_quick", KBertNERTask, ("ner_f1", "accuracy")),
])
def test_the_class_is_chosen_once_from_the_data(tmp_path, shared_data, recipe, cls, metrics):
    config = resolve(recipe, [*TINY, f"data.root={shared_data}", f"data.cache_dir={tmp_path}"])
    task = get_task("kbert")(config)
    assert type(task) is cls and isinstance(task, KBertTask) and task.name == "kbert"
    assert task.kind == cls.kind and KINDS_OF_TASK[cls.kind] is cls
    assert tuple(task.metrics) == metrics
    assert type(pickle.loads(pickle.dumps(task))) is cls  # made again without a config


def test_the_registry_holds_every_kind_of_data():
    from graphmatch.data.kbert import KINDS

    assert set(KINDS_OF_TASK) == set(KINDS)


def test_an_unknown_kind_is_one_line_naming_the_registered_ones():
    with pytest.raises(ValueError) as err:
        KBertTask.kind_of("regression")
    message = str(err.value)
    assert "\n" not in message and "'regression'" in message
    assert all(name in message for name in ("classification", "ner", "pair"))


def test_no_method_tests_the_kind():
    """Only the dispatch (``__new__``, ``kind_of``) and the checks of a checkpoint's kind read the kind."""
    tree = ast.parse(inspect.getsource(kbert_module))
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        for fn in (n for n in cls.body if isinstance(n, ast.FunctionDef)):
            tests = [n for n in ast.walk(fn) if isinstance(n, ast.Compare)]
            reads = {ast.unparse(t) for t in tests if "kind" in ast.unparse(t)}
            allowed = fn.name in ("__new__", "kind_of", "set_extra_state", "check_kind")
            assert allowed or not reads, f"{cls.name}.{fn.name} tests the kind: {reads}"
            flags = {ast.unparse(n) for n in ast.walk(fn) if isinstance(n, ast.If | ast.IfExp)
                     and ("tagging" in ast.unparse(n.test) or "tags_tokens" in ast.unparse(n.test))}
            assert not flags, f"{cls.name}.{fn.name} branches on tagging: {flags}"
