"""kb.settings: every KB_* environment setting is read there and nowhere else."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kb import settings
from kb.usage import UsageProblem

PACKAGE = Path(settings.__file__).resolve().parent


def test_only_settings_reads_the_environment() -> None:
    readers = [
        path.relative_to(PACKAGE).as_posix()
        for path in sorted(PACKAGE.rglob("*.py"))
        if re.search(r"os\.environ|os\.getenv|\bgetenv\(", path.read_text(encoding="utf-8"))
    ]
    assert readers == ["settings.py"]


def test_every_knob_is_documented_in_settings() -> None:
    for knob in settings.KNOBS:
        assert f"- {knob}:" in (settings.__doc__ or ""), knob


@pytest.mark.parametrize("value", ["two", "-1", "1.5"])
def test_a_bad_jobs_setting_is_a_usage_problem(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KB_JOBS", value)
    with pytest.raises(UsageProblem, match="KB_JOBS"):
        settings.jobs()


def test_jobs_and_paths(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("KB_JOBS", "0")
    assert settings.jobs() == 1
    monkeypatch.delenv("KB_JOBS")
    assert settings.jobs() is None
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path))
    assert settings.cache_dir() == tmp_path
    monkeypatch.setenv("KB_CACHE_DIR", "")
    assert settings.cache_dir() is None
