"""A rebuild prices only the models whose inputs changed (issue 36: the planner in the build).

Two models of the shipped sample are built with small menus into one folder. A warm
rebuild (nothing changed) asks kb plan nothing and rewrites none of the planner's files;
after an edit to one model record, the rebuild prices that model alone, and the other
model's files are kept, byte for byte. (An edit to a record of the kinds a price reads,
kb.sitegen.explorer.INPUT_KINDS, re-prices every model: tests/site/test_rebuild.py holds
the keys to what a price reads.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

import kb.sitegen.plan_pages as plan_pages
from kb.sitegen.explorer import Menus
from tests.sample import sample_copy
from tests.site.conftest import load
from tests.site.explorer_site import priced_models

EDITED, KEPT = "models/llama-2-7b", "models/llama-3.1-70b"
MENUS = Menus(
    models=(EDITED, KEPT),
    hardware=("hardware/nvidia-h100-sxm",),
    shapes=((8, 1),),
    batches=(8,),
    engines=("engines/tensorrt-llm",),
    table_batch=8,
)


def build(records: Path, out: Path) -> dict[str, bytes]:
    """Check and build `records` with MENUS into `out`; the planner's files, by path."""
    from kb.sitegen.build import build as build_site

    kb, findings = load(records)
    build_site(kb, out, findings=[f for f in findings if f.severity.value != "error"], plans=MENUS)
    models = MENUS.models or ()
    pages = [p for m in models for p in plan_pages.model_pages(m, MENUS.hardware, MENUS)]
    return {page: (out / page).read_bytes() for page in pages}


def test_a_rebuild_prices_only_the_changed_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    records = sample_copy(tmp_path / "records")
    priced = priced_models(monkeypatch)
    out = tmp_path / "_site"
    first = build(records, out)
    assert sorted(priced) == sorted([EDITED, KEPT])
    stamps = {page: (out / page).stat().st_mtime_ns for page in first}

    priced.clear()
    assert build(records, out) == first  # warm: nothing changed
    assert priced == []
    assert {page: (out / page).stat().st_mtime_ns for page in first} == stamps

    path = records / f"{EDITED}.yaml"
    text = path.read_text(encoding="utf-8")
    title = next(line for line in text.splitlines() if line.startswith("title:"))
    path.write_text(text.replace(title, title.rstrip() + " (edited)", 1), encoding="utf-8")
    priced.clear()
    third = build(records, out)
    assert priced == [EDITED]  # the edited model alone
    kept = [p for p in first if KEPT.rsplit("/", 1)[1] in p]
    assert kept and all(third[p] == first[p] for p in kept)
    assert all((out / p).stat().st_mtime_ns == stamps[p] for p in kept)  # not rewritten
