"""Result stores made by a cold run elsewhere give a copy of the tree exactly a cold run's answer.

Many tests start from the shipped records' stores (tests/warm.py) instead of a cold
run of their own; this holds that seeding changes nothing a run reports, on the shipped
tree as shipped and broken (a schema error, a dangling reference and the claims those
reach re-derived). On the clean tree the cold run is the one that made the stores
(tests/warm.py keeps what it reported beside them); the broken tree gets its own.

Per push the broken tree is the shipped sample (tests/sample.py) broken the same way,
seeded from the same shipped stores (`KB_FULL=1`: the whole shipped tree, ~11 CPU-s
more). A store's key is the bytes of the file and of everything its check read, never
the tree around it, so what seeding may get wrong is a key that misses an input: the
sample's records are the shipped records byte for byte and closed under references,
with every kind of claim and a derivation (tests/project/test_sample.py), and the
breakage reaches the same H100 record, its claims and its cited source.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kb.api import validate
from tests.conftest import SHIPPED_RECORDS
from tests.sample import copy_with_broken_h100
from tests.warm import cold_summary, seed, summary


def _clean(tmp_path: Path) -> Path:
    shutil.copytree(SHIPPED_RECORDS, tmp_path / "records")
    return tmp_path / "records"


@pytest.mark.parametrize("tree", [_clean, copy_with_broken_h100], ids=["clean", "broken"])
def test_a_seeded_run_reports_what_a_cold_run_reports(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    shipped_stores: Path,
    tree: Callable[[Path], Path],
) -> None:
    monkeypatch.delenv("KB_CACHE_DIR", raising=False)
    warm_root = tree(tmp_path / "warm")
    cold: dict[str, Any]
    if tree is _clean:
        cold = cold_summary(shipped_stores)
    else:
        cold_root = tree(tmp_path / "cold")
        assert cold_root.name == "records"
        monkeypatch.chdir(tmp_path / "cold")
        cold = summary(validate(Path("records"), remember=False))
        assert {f[0][:2] for f in cold["findings"]} >= {"SC", "RF"}, cold["findings"]
    seed(shipped_stores, tmp_path / "warm" / ".kb-cache")
    monkeypatch.chdir(tmp_path / "warm")
    warm = validate(Path("records"))
    assert warm_root.name == "records"
    assert warm.stats.mode == "full"  # no snapshot was seeded
    assert summary(warm)["findings"] == cold["findings"]
    assert summary(warm)["checked"] == cold["checked"]
    assert warm.stats.symbolic < cold["symbolic"]  # the stores answered
