"""The code stays ruff-clean (config in pyproject.toml): lint is part of the suite."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.conftest import REPO


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is installed by the test extra")
def test_ruff_reports_nothing() -> None:
    done = subprocess.run(
        ["ruff", "check", "kb", "tests", "bench"], cwd=REPO, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
