"""`repo_copy`'s check, seeded from the run's one cold check, reports what a cold check reports.

tests/site/conftest.py checks the copy (the shipped records and the probe) from the
claims' results of `shipped_stores` instead of deriving every claim again. A store's key
is the bytes of the file and of everything its check read, so the shipped files' results
are the cold check's, and the probe (a flop class without maths, no store entry) is
checked afresh. Per push: every finding and checked file but the probe's is what the cold
check of the shipped records reported (`cold_summary`), and the stores answered.
`KB_FULL=1`: a cold check of a fresh copy with the probe gives every finding (~10 CPU-s).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.sample import full
from tests.site.conftest import add_probe, check_report, copy_repo
from tests.warm import cold_summary, summary

PROBE = "records/flops/xss-probe.yaml"


def _seeded(repo_copy: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(check_report(repo_copy).read_text(encoding="utf-8"))
    return loaded


def _cold(folder: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A cold check of `copy_repo` and the probe, at `folder` (paths: records/...)."""
    from kb.api import validate

    copy_repo(folder)
    add_probe(folder / "records")
    monkeypatch.delenv("KB_CACHE_DIR", raising=False)
    monkeypatch.chdir(folder)
    return summary(validate(Path("records"), remember=False))


def test_the_seeded_check_reports_what_a_cold_check_reports(
    repo_copy: Path, shipped_stores: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seeded, shipped = _seeded(repo_copy), cold_summary(shipped_stores)
    assert PROBE in seeded["checked"]  # the premise: the probe was checked
    assert seeded["symbolic"] < shipped["symbolic"]  # the stores answered
    if full():
        cold = _cold(tmp_path / "cold", monkeypatch)
        assert seeded["findings"] == cold["findings"]
        assert seeded["checked"] == cold["checked"]
        return
    assert [f for f in seeded["findings"] if PROBE not in f[2]] == shipped["findings"]
    assert [p for p in seeded["checked"] if p != PROBE] == shipped["checked"]
