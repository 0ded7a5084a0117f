"""pkuseg with memory-mapped weights and feature tables: every use of pkuseg's internals in one class.

Written against pkuseg 0.0.25 (``pip show pkuseg``), whose ``pkuseg.pkuseg()`` reads its
105 MB of weights into memory and unpickles a 2.6-million-entry feature dict (seconds and
~0.6 GB per process). :class:`PkusegAdapter` builds the same segmenter with the weights
memory-mapped and the dict replaced by :class:`~graphmatch.text.pkuseg_features.FeatureTables`;
the words are the same. :meth:`PkusegAdapter.check_internals` lists what it relies on, and
``tests/text/test_pkuseg_adapter.py`` fails when an installed pkuseg no longer has it.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import threading
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

from graphmatch.text.mapped_files import mapped_npz_array
from graphmatch.text.pkuseg_features import FeatureTables, feature_tables

#: the pkuseg release the adapter was written against
PKUSEG_VERSION = "0.0.25"


class TableFeatureExtractor:
    """Stands in for pkuseg's ``FeatureExtractor`` at segmentation time: the same normalisation,
    feature indices from :class:`~graphmatch.text.pkuseg_features.FeatureTables`, computed for
    a whole text at its first character (pkuseg asks character by character)."""

    def __init__(self, tables: FeatureTables, normalize_text: Any, word_min: int, word_max: int,
                 word_features: bool) -> None:
        self.normalize_text = normalize_text
        self.tag_to_idx = tables.tag_to_idx
        self.feature_to_idx = tables  # pkuseg only takes its len()
        self._tables = tables
        self._options = (word_min, word_max, word_features)
        self._nodes: list[str] | None = None
        self._features: list[list[int]] = []

    def get_node_features_idx(self, idx: int, nodes: list[str]) -> list[int]:
        if nodes is not self._nodes:
            self._features = self._tables.text_features(nodes, *self._options)
            self._nodes = nodes
        return self._features[idx]


class PkusegAdapter:
    """Builds ``pkuseg.pkuseg()`` (the default model) with its weights memory-mapped and its
    feature dict replaced by tables (``compact=True``), or exactly as pkuseg does.

    pkuseg has no option for either, so while its constructor runs, two class methods are
    swapped (and restored after, under a lock): ``Model.load`` (the weights, mapped by
    :func:`~graphmatch.text.mapped_files.mapped_npz_array`) and ``FeatureExtractor.load`` (a
    :class:`TableFeatureExtractor` over :func:`~graphmatch.text.pkuseg_features.feature_tables`).
    Where the mapping or the tables cannot be made (another file layout, no writable cache
    folder), pkuseg's own loading runs, with a warning for the tables. The rest of pkuseg
    (normalisation, CRF decoding, dictionaries) is pkuseg's own.

    Written against pkuseg 0.0.25; what it relies on is :data:`INTERNALS`.
    """

    #: what the adapter relies on (checked by :meth:`check_internals`)
    INTERNALS = (
        "pkuseg.pkuseg.__init__ calls FeatureExtractor.load() and Model.load(), reads tag_to_idx, feature_to_idx",
        "pkuseg.pkuseg._cut calls normalize_text, get_node_features_idx and decodeViterbi_fast with model",
        "classmethod Model.load(model_dir=None) reading weights.npz's sizes and w into n_tag, n_feature, "
        "n_transition_feature, w",
        "classmethod FeatureExtractor.load(model_dir=None), classmethod FeatureExtractor.normalize_text(text), "
        "FeatureExtractor.get_node_features_idx(self, idx, nodes)",
        "pkuseg.config.config has modelDir, wordMin, wordMax, wordFeature",
    )

    _lock = threading.Lock()

    def __init__(self, compact: bool = True) -> None:
        self.compact = compact

    def build(self) -> Any:
        """A ``pkuseg.pkuseg`` segmenter of the default model."""
        pkuseg = _import_pkuseg()
        if not self.compact:
            return pkuseg.pkuseg()
        with self._lock, self._loaders():
            return pkuseg.pkuseg()

    @contextlib.contextmanager
    def _loaders(self) -> Iterator[None]:
        from pkuseg.feature_extractor import FeatureExtractor
        from pkuseg.model import Model

        model_load, features_load = Model.__dict__["load"], FeatureExtractor.__dict__["load"]
        Model.load = classmethod(lambda cls, model_dir=None: self._load_model(cls, model_dir, model_load))
        FeatureExtractor.load = classmethod(
            lambda cls, model_dir=None: self._load_features(cls, model_dir, features_load))
        try:
            yield
        finally:
            Model.load, FeatureExtractor.load = model_load, features_load

    @staticmethod
    def _load_model(cls: type, model_dir: str | None, own: classmethod) -> Any:
        """pkuseg's ``Model.load`` with ``weights.npz``'s ``w`` memory-mapped."""
        from pkuseg.config import config

        path = os.path.join(model_dir or config.modelDir, "weights.npz")
        weights = mapped_npz_array(path, "w") if os.path.exists(path) else None
        if weights is None:  # another layout: pkuseg's own loading
            return own.__func__(cls, model_dir)
        with np.load(path) as npz:
            n_tag, n_feature = (int(n) for n in npz["sizes"])
        model = cls.__new__(cls)
        model.n_tag, model.n_feature = n_tag, n_feature
        model.n_transition_feature = n_tag * (n_feature + n_tag)
        if weights.shape != (model.n_transition_feature,):
            return own.__func__(cls, model_dir)
        model.w = weights
        return model

    @staticmethod
    def _load_features(cls: type, model_dir: str | None, own: classmethod) -> Any:
        """A :class:`TableFeatureExtractor` over the tables of the model's ``features.pkl``, or
        pkuseg's own ``FeatureExtractor.load`` where they cannot be made."""
        from pkuseg.config import config

        model_dir = model_dir or config.modelDir
        try:
            tables = FeatureTables(feature_tables(model_dir))
        except (OSError, ValueError) as err:  # another layout, or no writable cache folder
            warnings.warn(f"pkuseg feature tables unavailable ({err}); loading pkuseg's own features "
                          "(seconds more and ~0.6 GB per process)", stacklevel=3)
            return own.__func__(cls, model_dir)
        return TableFeatureExtractor(tables, cls.normalize_text, config.wordMin, config.wordMax, config.wordFeature)

    @staticmethod
    def check_internals() -> list[str]:
        """What of :data:`INTERNALS` the installed pkuseg lacks (empty when it has it all)."""
        pkuseg = _import_pkuseg()
        from pkuseg.config import config
        from pkuseg.feature_extractor import FeatureExtractor
        from pkuseg.model import Model

        problems = []

        def expect(ok: bool, what: str) -> None:
            if not ok:
                problems.append(what)

        def names(function: Any) -> set[str]:
            return set(function.__code__.co_names)

        def signature(function: Any) -> str:
            try:
                return str(inspect.signature(function))
            except (TypeError, ValueError):
                return "?"

        init = names(pkuseg.pkuseg.__init__)
        expect({"FeatureExtractor", "Model", "load", "tag_to_idx", "feature_to_idx", "modelDir"} <= init,
               "pkuseg.pkuseg.__init__ no longer loads FeatureExtractor and Model as before")
        expect({"normalize_text", "get_node_features_idx", "decodeViterbi_fast", "model"} <= names(pkuseg.pkuseg._cut),
               "pkuseg.pkuseg._cut no longer reads the extractor and the model as before")
        for cls in (Model, FeatureExtractor):
            expect(isinstance(cls.__dict__.get("load"), classmethod) and signature(cls.load) == "(model_dir=None)",
                   f"{cls.__name__}.load is no longer a classmethod (model_dir=None)")
        expect({"n_tag", "n_feature", "n_transition_feature", "w"} <= names(Model.load)
               and {"weights.npz", "sizes", "w"} <= set(Model.load.__code__.co_consts),
               "Model.load no longer reads weights.npz's sizes and w into n_tag, n_feature, n_transition_feature, w")
        expect(isinstance(FeatureExtractor.__dict__.get("normalize_text"), classmethod)
               and signature(FeatureExtractor.normalize_text) == "(text)",
               "FeatureExtractor.normalize_text is no longer a classmethod (text)")
        expect(signature(FeatureExtractor.get_node_features_idx) == "(self, idx, nodes)",
               "FeatureExtractor.get_node_features_idx is no longer (self, idx, nodes)")
        missing = [a for a in ("modelDir", "wordMin", "wordMax", "wordFeature") if not hasattr(config, a)]
        expect(not missing, f"pkuseg.config.config lacks {', '.join(missing)}")
        return problems


def _import_pkuseg() -> Any:
    try:
        import pkuseg
    except ImportError as err:
        raise ImportError(
            "pkuseg is not installed; install it with `pip install numpy cython && "
            "pip install --no-build-isolation pkuseg` (it compiles from source)"
        ) from err
    return pkuseg
