"""Fixtures of the engine tests: one trained toy run shared by several tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_helpers import TOY, Recorder


@pytest.fixture(scope="session")
def trained_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Recorder]:
    """One complete toy run (4 epochs) and what the recorder saw while it trained."""
    from graphmatch.engine import train

    recorder = Recorder()
    run_dir = train(TOY, [], tmp_path_factory.mktemp("runs") / "toy", callbacks=[recorder])
    return run_dir, recorder
