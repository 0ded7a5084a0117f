"""Recipes: defaults, base inheritance, --set overrides and their errors; optimiser groups and the
learning-rate schedule."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import toy_task  # registers the "toy" task

from graphmatch.engine.training.optim import build_optimizer, build_scheduler, lr_factor, param_groups
from graphmatch.tasks.recipes.resolve import ENGINE_DEFAULTS, diff, find_recipe, parse_overrides, resolve

HERE = Path(__file__).parent
TOY = HERE / "toy.yaml"


def test_resolve_fills_every_default() -> None:
    config = resolve(TOY)
    assert config["task"] == "toy_task:toy" and config["name"] == "toy"
    assert set(config["train"]) == set(ENGINE_DEFAULTS["train"])
    assert set(config["optim"]) == set(ENGINE_DEFAULTS["optim"])
    assert config["data"]["num_classes"] == 2  # the task's default
    assert config["optim"]["lr"] == pytest.approx(0.02)  # "2e-2" in YAML is a float
    assert config["train"]["eval_batch_size"] is None
    assert resolve(config) == config  # resolving a resolved config changes nothing


def test_base_recipe_is_inherited(tmp_path: Path) -> None:
    quick = resolve(HERE / "toy_quick.yaml")
    full = resolve(TOY)
    assert quick["name"] == "toy_quick"
    assert quick["train"]["epochs"] == 2 and quick["data"]["limit"] == {"train": 64, "dev": None, "test": None}
    assert sorted(diff(full, quick)) == ["data.limit.train", "name", "train.epochs"]
    loop = tmp_path / "loop.yaml"
    loop.write_text("base: loop.yaml\ntask: toy_task:toy\n")
    with pytest.raises(ValueError, match="inherits from itself"):
        resolve(loop)


def test_base_may_name_a_packaged_recipe(tmp_path: Path) -> None:
    mine = tmp_path / "mine.yaml"  # a user's recipe outside the checkout, over a packaged one
    mine.write_text("base: kbert/chnsenticorp_hownet_quick\ntrain:\n  epochs: 1\n")
    config = resolve(mine)
    assert config["name"] == "mine" and config["train"]["epochs"] == 1
    assert config["data"]["dataset"] == resolve("kbert/chnsenticorp_hownet_quick")["data"]["dataset"]
    (tmp_path / "kbert").mkdir()  # a file beside the recipe wins over the packaged name
    (tmp_path / "kbert" / "chnsenticorp_hownet_quick.yaml").write_text("base: ../" + TOY.name + "\n")
    (tmp_path / TOY.name).write_text(TOY.read_text())
    assert resolve(mine)["task"] == resolve(TOY)["task"]


def test_overrides_are_parsed_as_yaml() -> None:
    assert parse_overrides(["train.epochs=2", "optim.lr=3e-4", "data.limit.dev=null", "optim.clip=0.5"]) == [
        (["train", "epochs"], 2),
        (["optim", "lr"], 3e-4),
        (["data", "limit", "dev"], None),
        (["optim", "clip"], 0.5),
    ]
    config = resolve(TOY, ["train.epochs=1", "model.hidden=8", "optim.encoder_lr=1e-4"])
    assert (config["train"]["epochs"], config["model"]["hidden"], config["optim"]["encoder_lr"]) == (1, 8, 1e-4)
    with pytest.raises(ValueError, match="expects key=value"):
        parse_overrides(["train.epochs"])


def test_unknown_keys_suggest_the_nearest_one(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"^unknown recipe key 'train.epoch'; did you mean 'train.epochs'\?$"):
        resolve(TOY, ["train.epoch=2"])
    with pytest.raises(ValueError, match=r"unknown recipe key 'model.hiden'; did you mean 'model.hidden'\?"):
        resolve(TOY, ["model.hiden=2"])
    with pytest.raises(ValueError, match=r"unknown recipe key 'model.zzz'; valid keys of model: dropout, "
                                         r"encoder_layers, hidden$"):
        resolve(TOY, ["model.zzz=2"])
    bad = tmp_path / "bad.yaml"
    bad.write_text("task: toy_task:toy\ndata:\n  n_trian: 3\n")
    with pytest.raises(ValueError, match=rf"^unknown recipe key 'data.n_trian' in {bad}; "
                                         r"did you mean 'data.n_train'\?$"):
        resolve(bad)
    child = tmp_path / "child.yaml"  # the error names the file the key is written in
    child.write_text("base: bad.yaml\ntrain:\n  epochs: 1\n")
    with pytest.raises(ValueError, match=rf"'data.n_trian' in {bad};"):
        resolve(child)
    bad.write_text("task: toy_task:toy\ntrainer: {}\n")
    with pytest.raises(ValueError, match="unknown recipe section"):
        resolve(bad)


def test_values_are_checked() -> None:
    with pytest.raises(ValueError, match="^model.hidden must be an integer >= 1, got 'big'$"):
        resolve(TOY, ["model.hidden=big"])
    with pytest.raises(ValueError, match="train.epochs must be an integer"):
        resolve(TOY, ["train.epochs=1.5"])
    with pytest.raises(ValueError, match="optim.optimizer must be one of"):
        resolve(TOY, ["optim.optimizer=lamb"])
    with pytest.raises(ValueError, match="optim.warmup"):
        resolve(TOY, ["optim.warmup=1.5"])
    limit = r"^data.limit.train must be a count >= 1 \(int\), a fraction in \(0, 1\] \(float\) or null, got"
    for bad in ("0", "1.5", "some"):
        with pytest.raises(ValueError, match=limit):
            resolve(TOY, [f"data.limit.train={bad}"])
    assert resolve(TOY, ["data.limit.dev=0.5"])["data"]["limit"]["dev"] == 0.5
    assert resolve(TOY, ["train.precision=32"])["train"]["precision"] == "32-true"
    for bad in ("0", "1.5", "fast"):
        with pytest.raises(ValueError, match=r"optim.layer_decay must be a number in \(0, 1\] or null"):
            resolve(TOY, [f"optim.layer_decay={bad}"])
    with pytest.raises(ValueError, match="train.bucket must be a bool"):
        resolve(TOY, ["train.bucket=3"])


def test_unknown_task_and_recipe() -> None:
    with pytest.raises(KeyError, match="unknown task 'nope'"):
        resolve({"task": "nope"})
    with pytest.raises(ValueError, match="cannot import module"):
        resolve({"task": "no_such_module_xyz:toy"})
    with pytest.raises(FileNotFoundError, match="recipe 'no/such/recipe' not found"):
        find_recipe("no/such/recipe")


def test_param_groups_split_encoder_and_decay() -> None:
    config = resolve(TOY, ["optim.encoder_lr=0.001", "optim.lr=0.01", "optim.weight_decay=0.1"])
    task = toy_task.ToyTask(config)
    task.datasets()
    model = task.build_model()
    groups = param_groups(model, task.encoder_parameters(model), config["optim"])
    by_name = {g["name"]: g for g in groups}
    assert set(by_name) == {"encoder", "encoder_no_decay", "rest", "rest_no_decay"}
    assert by_name["encoder"]["params"] == [model.encoder.weight] and by_name["encoder"]["lr"] == 0.001
    assert by_name["encoder_no_decay"]["params"] == [model.encoder.bias]
    assert by_name["rest"]["lr"] == 0.01 and by_name["rest"]["weight_decay"] == 0.1
    assert all(p.dim() == 1 for p in by_name["rest_no_decay"]["params"])  # biases, LayerNorm
    assert by_name["rest_no_decay"]["weight_decay"] == 0.0
    assert sum(len(g["params"]) for g in groups) == len(list(model.parameters()))
    assert isinstance(build_optimizer(groups, {**config["optim"], "optimizer": "rmsprop"}), torch.optim.RMSprop)


def test_layer_decay_groups_per_encoder_layer() -> None:
    config = resolve(TOY, ["model.encoder_layers=3", "optim.layer_decay=0.5", "optim.encoder_lr=0.008",
                           "optim.lr=0.01", "optim.weight_decay=0.1"])
    task = toy_task.ToyTask(config)
    task.datasets()
    model = task.build_model()
    layers = task.encoder_layers(model)
    groups = param_groups(model, task.encoder_parameters(model), config["optim"], layers)
    by_name = {g["name"]: g for g in groups}
    # embeddings-like first layer k = 0 of L = 2: 0.008 × 0.5², then 0.008 × 0.5, then the top at 0.008
    for k, lr in enumerate([0.002, 0.004, 0.008]):
        assert by_name[f"encoder.{k}"]["lr"] == pytest.approx(lr) and by_name[f"encoder.{k}"]["weight_decay"] == 0.1
        assert by_name[f"encoder.{k}_no_decay"]["lr"] == pytest.approx(lr)
        assert by_name[f"encoder.{k}_no_decay"]["weight_decay"] == 0.0
        assert by_name[f"encoder.{k}"]["params"] + by_name[f"encoder.{k}_no_decay"]["params"] == layers[k]
    assert by_name["rest"]["lr"] == 0.01 and by_name["rest_no_decay"]["weight_decay"] == 0.0
    assert sum(len(g["params"]) for g in groups) == len(list(model.parameters()))
    # off: the four groups as before
    plain = param_groups(model, task.encoder_parameters(model), {**config["optim"], "layer_decay": None}, layers)
    assert {g["name"] for g in plain} == {"encoder", "encoder_no_decay", "rest", "rest_no_decay"}
    # a task that lists no layers cannot decay them; a listed parameter outside the encoder is a bug
    with pytest.raises(ValueError, match="optim.layer_decay needs a task that lists its encoder's layers"):
        param_groups(model, task.encoder_parameters(model), config["optim"], [])
    with pytest.raises(ValueError, match="not in Task.encoder_parameters"):
        param_groups(model, task.encoder_parameters(model), config["optim"], [*layers, [model.head.weight]])


def test_warmup_then_linear_decay() -> None:
    assert [lr_factor(s, 10, 2, "linear") for s in (0, 1, 2, 6, 10)] == [0.0, 0.5, 1.0, 0.5, 0.0]
    assert [lr_factor(s, 10, 2, "constant") for s in (1, 2, 9)] == [0.5, 1.0, 1.0]
    assert lr_factor(0, 10, 0, "linear") == 1.0
    p = torch.nn.Parameter(torch.zeros(2))
    opt = torch.optim.SGD([{"params": [p], "lr": 1.0}])
    sched = build_scheduler(opt, 10, {"warmup": 0.2, "schedule": "linear"})
    lrs = []
    for _ in range(10):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert lrs == pytest.approx([0.0, 0.5, 1.0, 0.875, 0.75, 0.625, 0.5, 0.375, 0.25, 0.125])


def test_base_as_a_list_is_merged_in_order(tmp_path: Path) -> None:
    (tmp_path / "short.yaml").write_text("train:\n  epochs: 1\n  batch_size: 8\n")
    (tmp_path / "wide.yaml").write_text("model:\n  hidden: 32\ntrain:\n  epochs: 3\n")
    both = tmp_path / "both.yaml"
    both.write_text(f"base: [{TOY}, short.yaml, wide.yaml]\ntrain:\n  seed: 3\n")
    config = resolve(both)
    assert config["name"] == "both" and config["model"]["hidden"] == 32  # each base over the one before
    assert (config["train"]["epochs"], config["train"]["batch_size"], config["train"]["seed"]) == (3, 8, 3)
    assert config["data"]["n_train"] == 128  # from the first base
    for bad in ("base: {a: 1}", "base: [toy.yaml, 3]", "base: ['']"):
        (tmp_path / "bad.yaml").write_text(bad + "\n")
        with pytest.raises(ValueError, match=r"bad\.yaml: 'base' is a recipe file, or a list of them"):
            resolve(tmp_path / "bad.yaml")


def test_an_empty_recipe_names_its_file(tmp_path: Path) -> None:
    for text in ("", "# nothing yet\n"):
        (tmp_path / "empty.yaml").write_text(text)
        with pytest.raises(ValueError, match=f"^recipe {tmp_path / 'empty.yaml'} is empty; a recipe is a mapping"):
            resolve(tmp_path / "empty.yaml")


def test_a_recipe_folder_is_named_as_a_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "a.yaml").write_text(f"base: {TOY}\n")
    with pytest.raises(ValueError, match=f"^recipe {tmp_path / 'mine'} is a folder, not a recipe file; the "
                                         "recipes in it: a.yaml$"):
        resolve(tmp_path / "mine")
    with pytest.raises(ValueError, match=f"^recipe {tmp_path} is a folder, not a recipe file; the recipes in it: "
                                         "mine/a.yaml$"):
        find_recipe(tmp_path)
    with pytest.raises(ValueError, match=r"recipes/kbert is a folder, not a recipe file; the recipes in it: .*"
                                         r"chnsenticorp_hownet_quick\.yaml"):
        find_recipe("kbert")  # a folder of the project's recipes


@pytest.mark.parametrize("asked", ["kbert/chnsenticorp_hownet_quik", "recipes/kbert/chnsenticorp_hownet_quik.yaml",
                                   "let/lcqmc_quik"])
def test_an_unknown_recipe_suggests_the_nearest_name(tmp_path: Path, monkeypatch, asked: str) -> None:
    monkeypatch.chdir(tmp_path)  # outside a checkout, a checkout's recipes/ path is a packaged name
    near = "let/lcqmc_quick" if asked.startswith("let") else "kbert/chnsenticorp_hownet_quick"
    with pytest.raises(FileNotFoundError, match=f"^recipe '{asked}' not found; did you mean {near}\\? known recipes"):
        find_recipe(asked)


def test_a_checkout_recipe_path_is_the_packaged_recipe_elsewhere(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # no recipes/ here: the README's path is the packaged recipe
    found = find_recipe("recipes/kbert/chnsenticorp_hownet_quick.yaml")
    assert found.is_file() and found.as_posix().endswith("kbert/chnsenticorp_hownet_quick.yaml")
    assert not found.is_relative_to(tmp_path)


def test_graphmatch_shorten_cuts_a_new_run_to_a_moment(monkeypatch) -> None:
    from graphmatch.engine.runs import folder as run_folder

    full = resolve("kbert/chnsenticorp_hownet_quick", ["train.val_every_steps=300"])
    monkeypatch.setenv("GRAPHMATCH_SHORTEN", "1")
    with pytest.warns(UserWarning, match="GRAPHMATCH_SHORTEN is set"):
        short = resolve("kbert/chnsenticorp_hownet_quick", ["train.val_every_steps=300"])
    assert full["train"]["batch_size"] == 32 and short["train"]["batch_size"] == 16
    assert short["train"]["epochs"] == 1 and short["train"]["val_every_steps"] is None
    assert short["data"]["limit"] == {"train": 32, "dev": 8, "test": 8} != full["data"]["limit"]
    monkeypatch.setenv("GRAPHMATCH_SHORTEN", "1")
    with pytest.warns(UserWarning, match="GRAPHMATCH_SHORTEN is set"):  # a smaller batch is kept
        small = resolve("kbert/chnsenticorp_hownet_quick", ["train.batch_size=3"])
    assert small["train"]["batch_size"] == 3 and small["data"]["limit"]["train"] == 6
    assert resolve(full, stored=True) == full  # a run's own configuration is never cut again
    with pytest.warns(UserWarning):
        assert run_folder.plan("kbert/chnsenticorp_hownet_quick", [], None, 5, None).seeds == 2
    monkeypatch.setenv("GRAPHMATCH_SHORTEN", "0")
    assert resolve("kbert/chnsenticorp_hownet_quick", ["train.val_every_steps=300"]) == full


def test_a_stored_task_imports_no_module_and_the_command_line_does(tmp_path: Path, monkeypatch) -> None:
    """A run's ``config.yaml`` or checkpoint (``stored=True``) names a task that is looked up among
    the registered ones; only a recipe or ``--set task=`` imports a ``package.module:name``."""
    marker = tmp_path / "ran"
    (tmp_path / "plugmod.py").write_text(f"open({str(marker)!r}, 'w').close()\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    saved = {**resolve(TOY), "task": "plugmod:plug"}
    with pytest.raises(ValueError, match="'plugmod:plug' is not a registered task .* never imported"):
        resolve(saved, stored=True)
    assert not marker.exists()
    stored_toy = resolve({**saved, "task": "elsewhere:toy"}, stored=True)  # a registered name: no import
    assert stored_toy["task"] == "elsewhere:toy" and not marker.exists()
    with pytest.raises(KeyError, match="unknown task 'plug'"):  # the command line's task is imported
        resolve(saved, ["task=plugmod:plug"], stored=True)
    assert marker.exists()


@pytest.mark.parametrize("name", ["adamw", "adam", "sgd"])
def test_fused_optimiser_makes_the_loops_update(name: str) -> None:
    """``optim.fused`` (the default) runs torch's fused kernel; off, torch's loop over tensors. Both
    make the same update to rounding, and only the loop is what the documented tables were made with."""
    config = resolve(TOY, ["optim.weight_decay=0.1", "optim.momentum=0.9"] if name == "sgd" else
                     ["optim.weight_decay=0.1"])
    params = {}
    for fused in (True, False):
        torch.manual_seed(0)
        layer = torch.nn.Linear(7, 5)
        groups = [{"params": list(layer.parameters()), "lr": 0.01, "weight_decay": 0.1}]
        optimizer = build_optimizer(groups, {**config["optim"], "optimizer": name, "fused": fused})
        assert bool(optimizer.defaults.get("fused")) is fused
        for _ in range(3):
            optimizer.zero_grad()
            layer(torch.randn(4, 7)).square().sum().backward()
            optimizer.step()
        params[fused] = [p.detach().clone() for p in layer.parameters()]
    torch.manual_seed(0)
    before = list(torch.nn.Linear(7, 5).parameters())
    for a, b, p0 in zip(params[True], params[False], before, strict=True):
        assert not torch.equal(a, p0)  # it trained
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)
    assert resolve(TOY)["optim"]["fused"] is True
