"""The planner's passes are kept in kb's store: a build into a new folder asks kb plan nothing.

kb.sitegen.plan_pages.PassStore keeps each model's pass (its explorer data file and its
worked tables' reports) in the `plans` store of the cache folder, under the key that
keeps the model's files in an output folder. Here the shipped sample is built twice
with one small menu and one cache folder, into two folders: the second build prices
nothing (the passes are counted) and writes the same bytes. Under another key (an
edit to a record a price reads changes it; tests/site/test_rebuild.py holds those keys
to what a price reads) the slot is a miss, as is a damaged entry.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import kb.sitegen.plan_pages as plan_pages
from kb.sitegen import urls
from kb.sitegen.explorer import Menus
from tests.sample import sample_copy
from tests.site.conftest import load

MODEL = "models/llama-2-7b"
MENUS = Menus(
    models=(MODEL,),
    hardware=("hardware/nvidia-h100-sxm",),
    shapes=((8, 1),),
    batches=(8,),
    engines=("engines/tensorrt-llm",),
    table_batch=8,
)


def build(kb: Any, findings: list[Any], out: Path) -> dict[str, bytes]:
    """Build the checked `kb` with MENUS into `out`; the planner's files, by path."""
    from kb.sitegen.build import build as build_site

    build_site(kb, out, findings=[f for f in findings if f.severity.value != "error"], plans=MENUS)
    pages = plan_pages.model_pages(MODEL, MENUS.hardware, MENUS)
    return {page: (out / page).read_bytes() for page in pages}


def test_a_second_build_reads_the_passes_from_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KB_JOBS", "1")
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    records = sample_copy(tmp_path / "records")
    priced: list[str] = []
    real = plan_pages.model_pass

    def counted(kb, model, hardware, menus):  # type: ignore[no-untyped-def]
        priced.append(model.id)
        return real(kb, model, hardware, menus)

    monkeypatch.setattr(plan_pages, "model_pass", counted)
    kb, findings = load(records)  # one check: the second build needs no other
    first = build(kb, findings, tmp_path / "one")
    assert priced == [MODEL]
    assert b"KB_EXPLORE_DATA" in first[urls.explore_data(MODEL)]

    second = build(kb, findings, tmp_path / "two")  # a new folder: nothing to keep there
    assert priced == [MODEL]  # read from the store, not priced again
    assert second == first


def test_a_damaged_store_is_a_miss(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    store = plan_pages.PassStore.__new__(plan_pages.PassStore)
    from kb.store import ShardedStore

    store.store = ShardedStore(None, plan_pages.PassStore.NAME, "salt")
    store.changed = False
    store.store.put(plan_pages._slot(MODEL), ("key", "script", "not json ["))
    assert store.get(MODEL, "key") is None
    store.store.put(plan_pages._slot(MODEL), ("key", "script", '[["hw", 8, 1, "why"]]'))
    assert store.get(MODEL, "other key") is None  # the model's inputs changed since
    found = store.get(MODEL, "key")
    assert found is not None and found.tables == {("hw", 8, 1): "why"}
