"""The server's engines keep their disk snapshot out of the garbage collector's walks.

A full collection walking the whole snapshot in the middle of an edit's check was
the largest part of the edit checks' p95 (kb.lsp.engine); `stale()` gives the
snapshot back so that the one it replaces can be collected.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from kb.lsp.engine import Engine
from tests.conftest import source_yaml, write_tree
from tests.diff.test_knowledge_diff import USER, _figure


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    records = tmp_path / "records"
    write_tree(
        records,
        {
            "sources/doc.yaml": source_yaml(),
            "flops/source-figure.yaml": _figure(4, 1),
            "flops/user.yaml": USER,
        },
    )
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    gc.unfreeze()
    yield records
    gc.unfreeze()  # nothing of this test stays out of the collector's sight


def test_a_freezing_engine_freezes_its_snapshot_and_gives_it_back_when_stale(root: Path) -> None:
    engine = Engine(root, freeze=True)
    snapshot = engine.snapshot()
    assert gc.get_freeze_count() > 0
    assert all(tracked is not snapshot for tracked in gc.get_objects())  # frozen: not walked
    engine.stale()
    assert gc.get_freeze_count() == 0
    engine.snapshot()
    assert gc.get_freeze_count() > 0


def test_an_engine_by_default_leaves_the_collector_alone(root: Path) -> None:
    Engine(root).snapshot()
    assert gc.get_freeze_count() == 0
