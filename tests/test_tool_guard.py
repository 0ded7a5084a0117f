"""The tool guard: a missing tool skips locally and fails under CI."""

import pytest
from tool_guard import require_tool


def test_a_present_tool_passes(monkeypatch):
    monkeypatch.setenv("CI", "true")
    require_tool("perl", True, "apt-get install perl")


def test_a_missing_tool_skips_with_a_reason_locally(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"node is not installed \(apt-get install nodejs\)"):
        require_tool("node", False, "apt-get install nodejs")


def test_a_missing_tool_fails_under_ci(monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="under CI"):
        require_tool("node", False, "apt-get install nodejs")
