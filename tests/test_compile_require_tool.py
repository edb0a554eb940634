"""conftest.require_tool: skip with a reason locally, FAIL under CI=true."""

from pathlib import Path

import pytest

CONFTEST = (Path(__file__).parent / "conftest.py").read_text()
TEST = """
def test_needs_a_tool(require_tool):
    require_tool("no-such-tool-gemmmodel")
"""


@pytest.mark.parametrize("ci,outcome", [("true", "failed"), ("", "skipped")])
def test_missing_tool(pytester, monkeypatch, ci, outcome):
    monkeypatch.setenv("CI", ci)
    pytester.makeconftest(CONFTEST.replace('pytest_plugins = ["pytester"]', ""))
    pytester.makepyfile(TEST)
    result = pytester.runpytest_inprocess("-rs")
    result.assert_outcomes(**{outcome: 1})
    assert "no-such-tool-gemmmodel" in result.stdout.str()


def test_present_tool_passes(pytester, monkeypatch):
    monkeypatch.setenv("CI", "true")
    pytester.makeconftest(CONFTEST.replace('pytest_plugins = ["pytester"]', ""))
    pytester.makepyfile(TEST.replace("no-such-tool-gemmmodel", "sh"))
    pytester.runpytest_inprocess().assert_outcomes(passed=1)
