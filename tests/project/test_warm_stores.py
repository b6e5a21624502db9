"""Result stores made by a cold run elsewhere give a copy of the tree exactly a cold run's answer.

Many tests start from the shipped records' stores (tests/warm.py) instead of a cold
run of their own; this holds that seeding changes nothing a run reports, on the shipped
tree as shipped and broken (a schema error, a dangling reference and the claims those
reach re-derived).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from kb.api import Result, validate
from tests.conftest import SHIPPED_RECORDS, shipped_copy_with_broken_h100
from tests.warm import seed


def _rows(result: Result) -> list[tuple[object, ...]]:
    return [
        (f.code, f.severity.value, f.location, f.message, f.hint, f.related)
        for f in result.findings
    ]


def _clean(tmp_path: Path) -> Path:
    shutil.copytree(SHIPPED_RECORDS, tmp_path / "records")
    return tmp_path / "records"


@pytest.mark.parametrize("tree", [_clean, shipped_copy_with_broken_h100], ids=["clean", "broken"])
def test_a_seeded_run_reports_what_a_cold_run_reports(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    shipped_stores: Path,
    tree: Callable[[Path], Path],
) -> None:
    monkeypatch.delenv("KB_CACHE_DIR", raising=False)
    cold_root = tree(tmp_path / "cold")
    warm_root = tree(tmp_path / "warm")
    seed(shipped_stores, tmp_path / "warm" / ".kb-cache")
    monkeypatch.chdir(tmp_path / "cold")
    cold = validate(Path("records"), remember=False)
    monkeypatch.chdir(tmp_path / "warm")
    warm = validate(Path("records"))
    assert cold_root.name == warm_root.name == "records"
    assert warm.stats.mode == "full"  # no snapshot was seeded
    assert _rows(warm) == _rows(cold)
    assert warm.checked_paths == cold.checked_paths
    assert warm.stats.symbolic < cold.stats.symbolic  # the stores answered
