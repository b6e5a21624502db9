"""The collector is paused while kb loads and checks, and left as the caller had it."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kb import api
from kb.gcpause import paused, paused_during
from tests.sample import sample_copy


@pytest.fixture
def collector() -> Iterator[None]:
    was = gc.isenabled()
    yield
    if was:
        gc.enable()
    else:
        gc.disable()


@pytest.mark.parametrize("enabled", [True, False])
def test_paused_restores_the_state_it_found(enabled: bool, collector: None) -> None:
    gc.enable() if enabled else gc.disable()
    with paused():
        assert not gc.isenabled()
    assert gc.isenabled() is enabled


def test_paused_restores_it_after_an_error(collector: None) -> None:
    gc.enable()

    @paused_during
    def fails() -> None:
        assert not gc.isenabled()
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        fails()
    assert gc.isenabled()


@pytest.mark.parametrize("enabled", [True, False])
def test_the_api_runs_paused_and_gives_the_collector_back(
    enabled: bool,
    collector: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On the shipped sample (tests/sample.py): the pause is around the load, whatever it loads."""
    from kb import checker  # kb.api and kb.incremental import it when they need it

    sample_copy(tmp_path / "records")
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    seen: list[bool] = []
    real = checker.build_knowledge_base

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(checker, "build_knowledge_base", spy)
    gc.enable() if enabled else gc.disable()
    assert len(api.open_kb(tmp_path / "records")) > 0
    assert gc.isenabled() is enabled
    assert api.validate(tmp_path / "records", full=True).checked_paths
    assert gc.isenabled() is enabled
    assert seen == [False, False]  # both loads ran with the collector paused


def test_frozen_hides_what_exists_and_gives_it_back_after_an_error() -> None:
    from kb.gcpause import frozen

    assert gc.get_freeze_count() == 0
    kept = [{"a": [1]} for _ in range(100)]
    with pytest.raises(ValueError, match="boom"), frozen():
        assert gc.get_freeze_count() >= len(kept)
        raise ValueError("boom")
    assert gc.get_freeze_count() == 0


def test_frozen_leaves_a_callers_own_freeze_in_place() -> None:
    from kb.gcpause import frozen

    gc.freeze()
    try:
        before = gc.get_freeze_count()
        with frozen():
            pass
        assert gc.get_freeze_count() >= before > 0
    finally:
        gc.unfreeze()


def test_a_site_build_runs_frozen_and_unfreezes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On the shipped sample (tests/sample.py): the freeze is around any build."""
    from kb.sitegen import build as site_build
    from tests.site.conftest import load

    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    kb, _ = load(sample_copy(tmp_path / "records"))
    seen: list[int] = []
    real = site_build.write_home

    def spy(site: Any) -> None:
        seen.append(gc.get_freeze_count())
        real(site)

    monkeypatch.setattr(site_build, "write_home", spy)
    site_build.build(kb, tmp_path / "_site")
    assert seen and seen[0] > 0
    assert gc.get_freeze_count() == 0
