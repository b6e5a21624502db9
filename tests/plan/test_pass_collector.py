"""A model's explorer pass runs with the cyclic collector paused, and leaves it as it was.

kb.sitegen.plan_pages.model_pass pauses the collector (kb.gcpause) for the pass: its
full collections walked every object the build made before it. The pass's answers do
not depend on the collector (tests/plan/test_fast_path.py holds them to `kb plan`);
here the pause itself: off inside the pass, back on (or still off) after it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

import kb.sitegen.explorer as explorer
from kb.api import open_kb, validate
from kb.model import KnowledgeBase
from kb.sitegen.plan_pages import model_pass

ROOT = Path(__file__).resolve().parents[2] / "records"
MENUS = explorer.Menus(
    models=("models/llama-3.1-8b",),
    hardware=("hardware/nvidia-h100-sxm",),
    shapes=((8, 1),),
    batches=(8,),
    table_batch=8,
)


@pytest.fixture(scope="module")
def shipped() -> KnowledgeBase:
    kb = open_kb(ROOT, checked=validate(ROOT, remember=False))
    kb.freeze()
    return kb


@pytest.fixture
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


@pytest.mark.parametrize("enabled", [True, False])
def test_the_pass_pauses_the_collector_and_puts_it_back(
    enabled: bool,
    shipped: KnowledgeBase,
    collector_on: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (gc.enable if enabled else gc.disable)()
    seen: list[bool] = []
    real = explorer.plan_report

    def watched(kb: KnowledgeBase, query: explorer.Query, cache: object = None) -> object:
        seen.append(gc.isenabled())
        return real(kb, query, cache)  # type: ignore[arg-type]

    monkeypatch.setattr(explorer, "plan_report", watched)
    done = model_pass(shipped, shipped.get(MENUS.models[0]), MENUS.hardware, MENUS)
    assert seen == [False]  # one question, asked with the collector off
    assert gc.isenabled() is enabled
    assert done.tables  # the pass answered its one worked table
