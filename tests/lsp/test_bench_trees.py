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


def _closure_size(tmp_path: Path) -> int:
    """How many records the edited flop class reaches: the smallest subset there is."""
    with pytest.raises(SystemExit) as refused:
        _bench().subset(SHIPPED_RECORDS, 1, tmp_path / "refused")
    found = re.search(r"reaches (\d+) records", str(refused.value))
    assert found is not None, refused.value
    return int(found.group(1))


@pytest.mark.parametrize("size", ["closure", 265])  # the closure: 206 records (Dec 2026), 243 later
def test_the_subset_has_its_size_and_every_record_its_records_name(
    tmp_path: Path, size: int | str
) -> None:
    bench = _bench()
    wanted = _closure_size(tmp_path) if size == "closure" else int(size)
    assert wanted <= 265  # the bench's target must hold the edited class's closure
    root = bench.subset(SHIPPED_RECORDS, wanted, tmp_path / "subset")
    kept = {p.relative_to(root).with_suffix("").as_posix() for p in root.rglob("*.yaml")}
    shipped = {
        p.relative_to(SHIPPED_RECORDS).with_suffix("").as_posix()
        for p in SHIPPED_RECORDS.rglob("*.yaml")
    }
    assert len(kept) == wanted < len(shipped)
    for record_id in kept:
        text = (root / f"{record_id}.yaml").read_text(encoding="utf-8")
        named = set(re.findall(r"[a-z_]+/[A-Za-z0-9._-]+", text)) & shipped
        assert named <= kept, (record_id, sorted(named - kept))
    edited = bench.flop_record(SHIPPED_RECORDS).relative_to(SHIPPED_RECORDS)
    assert (root / edited).read_bytes() == (SHIPPED_RECORDS / edited).read_bytes()


def test_a_subset_too_small_for_the_edited_record_says_so(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="reaches"):
        _bench().subset(SHIPPED_RECORDS, 5, tmp_path)
