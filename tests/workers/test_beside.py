"""kb.workers' one child beside the pool, and the work a process does while its pool runs.

`beside(function)` computes one value in a forked child (or here); the child has
ended when its block does, so nothing a run started outlives it (issue 34: the
record cache's save no longer runs in that child, and no `joined()` block waits
for one through a module-global stack). `map_forked(..., meanwhile=f)` runs `f`
here while the workers work: a parameter, not a module-global list; `before=f` runs
`f` here once just before the workers fork, and they inherit what it did.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kb.workers import beside, map_forked


def _in_parent(parent: int) -> int:
    """A value that says which process computed it: 1 here, 2 in a child."""
    return 1 if os.getpid() == parent else 2


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_beside_computes_in_a_child_that_has_ended_with_its_block(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KB_JOBS", "2")
    parent = os.getpid()
    with beside(lambda: [_in_parent(parent), "x" * 3_000_000]) as work:  # over the pipe
        value = work.result()
        assert work.pid
    assert value[0] == 2 and value[1] == "x" * 3_000_000  # the child's, whole
    assert work.finished and not _alive(work.pid)  # reaped: no zombie left behind


def test_beside_does_the_work_here_without_a_free_cpu_or_when_not_worth_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    parent = os.getpid()
    for jobs, worth_it in (("1", True), ("2", False)):
        monkeypatch.setenv("KB_JOBS", jobs)
        with beside(lambda: _in_parent(parent), worth_it) as work:
            assert not work.pid  # nothing forked
            assert work.result() == 1


def test_a_child_that_fails_or_dies_leaves_its_work_to_the_parent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KB_JOBS", "2")
    parent = os.getpid()

    def fails_in_a_child() -> int:
        if os.getpid() != parent:
            raise RuntimeError("only in the child")
        return 1

    def dies_in_a_child() -> int:
        if os.getpid() != parent:
            os._exit(9)
        return 1

    for function in (fails_in_a_child, dies_in_a_child):
        with beside(function) as work:
            assert work.pid and work.result() == 1  # the parent computed it


def test_an_error_in_the_block_still_ends_the_child(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KB_JOBS", "2")
    with pytest.raises(ValueError), beside(lambda: 1) as work:
        assert work.pid
        raise ValueError
    assert work.finished and not _alive(work.pid)


def test_meanwhile_runs_once_while_the_pool_works_and_only_then(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KB_JOBS", "2")
    ran: list[int] = []
    items = list(range(-30, 0))
    assert map_forked(abs, items, 10, meanwhile=lambda: ran.append(1)) == list(range(30, 0, -1))
    assert ran == [1]
    assert map_forked(abs, [-1], 10, meanwhile=lambda: ran.append(2)) is None  # no pool
    monkeypatch.setenv("KB_JOBS", "1")
    assert map_forked(abs, items, 10, meanwhile=lambda: ran.append(3)) is None  # one job
    monkeypatch.setenv("KB_JOBS", "2")
    assert map_forked(abs, items, 10, meanwhile=lambda: 1 / 0) == list(range(30, 0, -1))
    assert ran == [1]  # a failing warm-up costs the pool nothing


_PREPARED: list[int] = []  # what `before` did here, as forked workers see it


def _prepared(item: int) -> tuple[int, int]:
    return item, len(_PREPARED)


def test_before_runs_here_once_before_the_workers_fork_and_they_inherit_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KB_JOBS", "2")
    items = list(range(30))
    try:
        got = map_forked(_prepared, items, 10, before=lambda: _PREPARED.append(1))
        assert got == [(item, 1) for item in items]  # every worker saw it done, once
        assert _PREPARED == [1]
        assert map_forked(_prepared, [1], 10, before=lambda: _PREPARED.append(2)) is None
        monkeypatch.setenv("KB_JOBS", "1")
        assert map_forked(_prepared, items, 10, before=lambda: _PREPARED.append(3)) is None
        assert _PREPARED == [1]  # not when no worker runs: the caller's loop does it if needed
        monkeypatch.setenv("KB_JOBS", "2")
        assert map_forked(_prepared, items, 10, before=lambda: 1 / 0) == [(i, 1) for i in items]
    finally:
        _PREPARED.clear()


def test_a_full_run_saves_the_record_cache_in_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The save is the run's last step here: once validate returns, the next run is warm.

    On the shipped sample per push (tests/sample.py), the shipped tree with KB_FULL=1:
    either is below the pool's threshold and above the child's (set to 1 here), so the
    run takes the same path (asserted); the sample has every kind of claim.
    """
    import shutil

    from kb import checker
    from kb import loader as _loader
    from kb.api import validate
    from tests.conftest import SHIPPED_RECORDS
    from tests.sample import full, sample_copy

    if full():
        shutil.copytree(SHIPPED_RECORDS, tmp_path / "records")
    else:
        sample_copy(tmp_path / "records")
    monkeypatch.setattr(checker, "BESIDE_MIN_RECORDS", 1)  # the schema stage in the child
    monkeypatch.setenv("KB_JOBS", "2")
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    first = validate(tmp_path / "records", remember=False).findings
    saved = checker.open_cache(tmp_path / "records")
    files = list((tmp_path / "records").rglob("*.yaml"))
    assert checker.BESIDE_MIN_RECORDS <= len(files) < _loader.PARALLEL_MIN_FILES  # one path
    assert len(saved.store.keys()) == len(files)
    # every entry is complete, the schema verdicts the child computed included
    for key in saved.store.keys():
        entry = saved.get(key)
        assert entry is not None and entry.schema is not None and entry.local is not None
    assert validate(tmp_path / "records", remember=False).findings == first
