"""Tests that need a tool ``make test`` installs (perl, node, a CJK font, pkuseg) skip where it is
missing, with a reason, but fail under CI (``CI=true``, set by ``.ci/run``), where a missing tool
means a broken set-up rather than a reason to test less."""

from __future__ import annotations

import os

import pytest


def under_ci() -> bool:
    """Whether the suite runs under CI (``CI=true``)."""
    return os.environ.get("CI", "").lower() == "true"


def require_tool(name: str, found: bool, install: str) -> None:
    """Skip the calling test when ``found`` is false (the tool ``name`` is missing), saying how to
    ``install`` it; under CI fail instead."""
    if found:
        return
    message = f"{name} is not installed ({install})"
    if under_ci():
        pytest.fail(f"{message}; under CI (CI=true) every tool `make test` installs must be present")
    pytest.skip(message)
