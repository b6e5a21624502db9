"""kb/ is type-checked strictly (`[tool.mypy]` in pyproject.toml), checked by the suite."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

from tests.conftest import REPO

if sys.version_info >= (3, 11):
    import tomllib
else:  # mypy itself depends on tomli below 3.11
    import tomli as tomllib


def test_mypy_strict_reports_nothing() -> None:
    # mypy comes with the test extra: a missing mypy is a failure, never a skip.
    assert importlib.util.find_spec("mypy") is not None, (
        "mypy is not installed: pip install -e '.[test]'"
    )
    done = subprocess.run([sys.executable, "-m", "mypy"], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success: no issues found" in done.stdout, done.stdout


def test_mypy_config_is_strict_for_kb() -> None:
    # The suite must not pass because the config was loosened: strict, over kb/, with
    # missing imports ignored only for the libraries named (those that ship no types).
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert config["strict"] is True
    assert config["files"] == ["kb"]
    assert "ignore_missing_imports" not in config
    ignored = [o for o in config.get("overrides", []) if o.get("ignore_missing_imports")]
    # mpmath (SymPy's dependency, imported by kb/equations/minmax.py) ships no py.typed either.
    assert {m for o in ignored for m in o["module"]} == {"sympy", "sympy.*", "mpmath", "mpmath.*"}
