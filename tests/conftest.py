"""Shared pytest fixtures.

`require_tool(name)`: call it at the top of a test that needs an external tool (hipcc,
nvcc, nvdisasm, nvrtc, ptxas12, or any executable on PATH). Where the tool is missing the
test is skipped with the install command as the reason, except under CI=true, where it
FAILS: CI installs the compilers, so a missing one is a broken CI image, not a reason to
skip silently.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]  # used to test require_tool itself

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _tool_status(name: str) -> tuple[bool, str]:
    from gemmmodel.compile import tools

    if name in tools.INSTALL_HINTS:
        return tools.has_tool(name), tools.INSTALL_HINTS[name]
    return shutil.which(name) is not None, f"{name} not found on PATH"


@pytest.fixture
def require_tool():
    def need(*names: str) -> None:
        for name in names:
            found, hint = _tool_status(name)
            if found:
                continue
            if os.environ.get("CI", "").lower() == "true":
                pytest.fail(f"CI=true and {name} is missing: {hint}")
            pytest.skip(hint)

    return need


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES


@pytest.fixture(scope="session")
def h200_comparison():
    """`selection_comparison("h200")` (about a minute: the current model on every swept
    config, the neighbour records), computed once per test session; do not mutate it."""
    from gemmmodel.model.selection import selection_comparison

    return selection_comparison("h200")
