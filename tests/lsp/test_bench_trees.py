"""bench/lsp.py's 265-record tree: a subset of records/, exactly that size, closed under references.

The issue's first target is at 265 records; the shipped tree has more, so the bench
measures a subset of it. Every record id a kept file names must be kept (else the
subset would measure dangling-reference errors the shipped tree does not have), and
the flop class the bench edits must be in it.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import REPO, SHIPPED_RECORDS


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_lsp", REPO / "bench" / "lsp.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("size", [240, 265])  # the edited class alone reaches 206 (Dec 2026)
def test_the_subset_has_its_size_and_every_record_its_records_name(
    tmp_path: Path, size: int
) -> None:
    bench = _bench()
    root = bench.subset(SHIPPED_RECORDS, size, tmp_path)
    kept = {p.relative_to(root).with_suffix("").as_posix() for p in root.rglob("*.yaml")}
    shipped = {
        p.relative_to(SHIPPED_RECORDS).with_suffix("").as_posix()
        for p in SHIPPED_RECORDS.rglob("*.yaml")
    }
    assert len(kept) == size < len(shipped)
    for record_id in kept:
        text = (root / f"{record_id}.yaml").read_text(encoding="utf-8")
        named = set(re.findall(r"[a-z_]+/[A-Za-z0-9._-]+", text)) & shipped
        assert named <= kept, (record_id, sorted(named - kept))
    edited = bench.flop_record(SHIPPED_RECORDS).relative_to(SHIPPED_RECORDS)
    assert (root / edited).read_bytes() == (SHIPPED_RECORDS / edited).read_bytes()


def test_a_subset_too_small_for_the_edited_record_says_so(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="reaches"):
        _bench().subset(SHIPPED_RECORDS, 5, tmp_path)
