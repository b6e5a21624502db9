"""The code stays ruff-clean and ruff-formatted (config in pyproject.toml), checked by the suite."""

from __future__ import annotations

import shutil
import subprocess

from tests.conftest import REPO

PATHS = ["kb", "tests", "bench", "scripts"]


def _ruff(*args: str) -> subprocess.CompletedProcess[str]:
    # ruff comes with the test extra: a missing ruff is a failure, never a skip.
    ruff = shutil.which("ruff")
    assert ruff is not None, "ruff is not installed: pip install -e '.[test]'"
    return subprocess.run([ruff, *args, *PATHS], cwd=REPO, capture_output=True, text=True)


def test_ruff_reports_nothing() -> None:
    done = _ruff("check")
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_format_changes_nothing() -> None:
    done = _ruff("format", "--check")
    assert done.returncode == 0, done.stdout + done.stderr
