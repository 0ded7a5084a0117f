"""The pkuseg internals :class:`PkusegAdapter` relies on: present in the installed pkuseg, and
a change of their shape is reported."""

import pytest

from graphmatch.text.pkuseg_adapter import PkusegAdapter


def test_installed_pkuseg_has_the_internals_the_adapter_uses(pkuseg):
    assert PkusegAdapter.check_internals() == []


def test_a_change_of_pkusegs_internals_is_reported(pkuseg, monkeypatch):
    from pkuseg.config import config
    from pkuseg.feature_extractor import FeatureExtractor
    from pkuseg.model import Model

    monkeypatch.setattr(Model, "load", classmethod(lambda cls, model_dir, strict=True: None))
    monkeypatch.setattr(FeatureExtractor, "load", staticmethod(lambda model_dir=None: None))
    monkeypatch.delattr(config, "wordMax")
    assert PkusegAdapter.check_internals() == [
        "Model.load is no longer a classmethod (model_dir=None)",
        "FeatureExtractor.load is no longer a classmethod (model_dir=None)",
        "Model.load no longer reads weights.npz's sizes and w into n_tag, n_feature, n_transition_feature, w",
        "pkuseg.config.config lacks wordMax",
    ]


def test_pkusegs_loaders_are_restored_after_building(pkuseg, tmp_path, monkeypatch):
    from pkuseg.feature_extractor import FeatureExtractor
    from pkuseg.model import Model

    from graphmatch.text import pkuseg_features

    monkeypatch.setattr(pkuseg_features, "CACHE_DIR", tmp_path)
    loaders = Model.__dict__["load"], FeatureExtractor.__dict__["load"]
    PkusegAdapter().build()
    assert (Model.__dict__["load"], FeatureExtractor.__dict__["load"]) == loaders
    import pkuseg as package

    monkeypatch.setattr(package, "pkuseg", lambda: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        PkusegAdapter().build()
    assert (Model.__dict__["load"], FeatureExtractor.__dict__["load"]) == loaders
