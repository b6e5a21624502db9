"""kb.incremental's planner is pure, and its plan re-runs every file whose findings a change moves.

`plan(snapshot, changed, states)` decides a run (issue 34): it reads no file, opens no
store, runs no check, and returns the same plan for the same inputs. The property test
edits copies of the small tree cut from the shipped records (tests/small_tree.py; the
shipped records with `KB_FULL=1`) at random (Hypothesis, a fixed seed: repeatable;
`KB_FUZZ_EXAMPLES` raises the per-push count) and holds the plan's re-run files to be
a superset of the files whose findings a full run after the edits gives differently
from the snapshot's (tests/run/test_incremental.py holds the whole run equal to a full one).
"""

from __future__ import annotations

import builtins
import contextlib
import copy
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from kb import checker, fingerprint, incremental, store
from kb.api import validate
from kb.findings import Finding
from kb.recordcache import finding_to_tuple
from kb.snapshot import FileState, Snapshot, read_snapshot
from tests.conftest import SHIPPED_RECORDS
from tests.warm import seed as seed_stores

EXAMPLES = max(1, int(os.environ.get("KB_FUZZ_EXAMPLES", "20")) // 5)  # per push: 4


def first_run(work: Path, shipped_stores: Path) -> Path:
    """`work` (records/ written) with its warm stores and the run snapshot of a first run."""
    seed_stores(shipped_stores, work / ".kb-cache")
    with contextlib.chdir(work):
        validate(Path("records"))  # the first run: full, remembered
    return work


@pytest.fixture(scope="module")
def before(tmp_path_factory: pytest.TempPathFactory, shipped_stores: Path) -> Path:
    """A folder holding a copy of the shipped records, its warm stores and its run snapshot."""
    work = tmp_path_factory.mktemp("planner")
    shutil.copytree(SHIPPED_RECORDS, work / "records")
    return first_run(work, shipped_stores)


@pytest.fixture(scope="module")
def before_small(tmp_path_factory: pytest.TempPathFactory, shipped_stores: Path) -> Path:
    """`before` on the small tree (tests/small_tree.py) per push; the shipped copy with KB_FULL=1.

    The plan must cover the moved findings of any tree, and the sample keeps, from each
    folder the edits pick from (REACHED), records with every kind of reference the shipped
    tree makes (tests/records/test_small_tree.py holds that), so an edit there moves other
    files' findings as on the whole tree; each example then checks ~200 records, not ~700.
    """
    from tests.small_tree import FULL, copy_sample

    work = tmp_path_factory.mktemp("planner-small")
    if FULL:
        shutil.copytree(SHIPPED_RECORDS, work / "records")
    else:
        copy_sample(work / "records")
    assert all(any((work / "records" / f).glob("*.yaml")) for f in REACHED)  # edits land
    return first_run(work, shipped_stores)


def last_snapshot(work: Path) -> Snapshot:
    """The run snapshot the first run left in `work` (a copy of the folder has none: it names
    the folder), as a fresh object: its display paths hold in any copy of the folder."""
    with contextlib.chdir(work):
        found = read_snapshot(store.cache_dir(Path("records")), fingerprint.salt(), Path("records"))
    assert found is not None
    return found


def planned(root: Path, snapshot: Snapshot) -> tuple[incremental.Plan, dict[str, FileState]]:
    """What `refresh` does before it runs: observe, compare, load the changed files, plan."""
    now = incremental.observe(root, snapshot)
    changed = incremental.changes(snapshot, now.digests)
    cache = checker.open_cache(root)
    paths = [Path(path) for name, path in now.shown.items() if name in changed]
    states = checker.loaded_states(checker.load_stage(root, cache, paths, True, now.digests))
    return incremental.plan(snapshot, changed, states), states


@contextlib.contextmanager
def no_disk(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every way to the disk, a store or a check refused; yields what was attempted."""
    tried: list[str] = []

    def refused(name: str) -> Any:
        def call(*args: object, **kwargs: object) -> None:
            tried.append(name)
            raise AssertionError(f"the planner called {name}")

        return call

    with monkeypatch.context() as patch:
        for owner, name in (
            (builtins, "open"),
            (os, "stat"),
            (os, "lstat"),
            (os, "scandir"),
            (os, "listdir"),
            (Path, "read_bytes"),
            (Path, "read_text"),
            (store.ShardedStore, "__init__"),
            (checker, "open_cache"),
            (checker, "load_stage"),
            (checker, "build_knowledge_base"),
            (checker, "execute"),
            (checker, "run_rules"),
        ):
            patch.setattr(owner, name, refused(f"{getattr(owner, '__name__', owner)}.{name}"))
        yield tried


def test_the_plan_is_a_pure_function_of_the_snapshot_and_the_changed_files(
    before: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    shutil.copytree(before, work, symlinks=True)
    snapshot = last_snapshot(before)
    with contextlib.chdir(work):
        h100 = Path("records/hardware/nvidia-h100-sxm.yaml")
        h100.write_text(h100.read_text().replace("version: ", "version: 1", 1))
        Path("records/sources/azure-nd-gb200-v6-results.yaml").unlink()
        first, states = planned(Path("records"), snapshot)
    changed = set(first.changed)
    assert "records/hardware/nvidia-h100-sxm.yaml" in changed and len(changed) == 2
    kept = copy.deepcopy((snapshot, states))
    with no_disk(monkeypatch) as tried:
        plans = [incremental.plan(snapshot, changed, states) for _ in range(2)]
    assert tried == []
    assert plans == [first, first]
    assert (snapshot, states) == kept  # neither input was changed
    assert first.rerun > {"records/hardware/nvidia-h100-sxm.yaml"}  # its binders too
    assert first.load >= first.rerun and not first.rerun & first.carried
    assert first.rerun | first.carried == set(first.files or {})
    assert "records/sources/azure-nd-gb200-v6-results.yaml" not in (first.files or {})


def test_the_planner_is_asked_nothing_when_no_file_changed(before: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    shutil.copytree(before, work, symlinks=True)
    snapshot = last_snapshot(before)
    with contextlib.chdir(work):
        now = incremental.observe(Path("records"), snapshot)
    assert incremental.changes(snapshot, now.digests) == frozenset()
    empty = incremental.plan(snapshot, (), {})
    assert empty.rerun == empty.load == frozenset()
    assert empty.carried == frozenset(snapshot.files)


# ------------------------------------------------------------------ random edits


# The folders an edit picks from: records that many others cite, bind or reach, so an
# edit moves other files' findings (dangling references, refuted claims, duplicate ids).
REACHED = ("hardware", "interconnects", "models", "sources")


def _files(root: Path) -> list[Path]:
    return sorted(p for folder in REACHED for p in (root / folder).glob("*.yaml") if p.is_file())


def edit(root: Path, what: int, which: int) -> str:
    """One edit of the tree: `what` picks the kind of edit, `which` the file."""
    files = _files(root)
    path = files[which % len(files)]
    text = path.read_text()
    if what == 0:  # a figure scaled
        at = text.find("value: ")
        if at < 0:
            return "nothing"
        path.write_text(text[: at + 7] + "3" + text[at + 7 :])
    elif what == 1:  # a reference broken
        at = text.find("source: ")
        if at < 0:
            return "nothing"
        path.write_text(text[: at + 8] + "sources/gone-" + text[at + 8 :])
    elif what == 2:
        path.unlink()
    elif what == 3:  # the same id twice
        shutil.copy(path, path.with_name(path.stem + "-copy.yaml"))
    elif what == 4:
        path.write_text(text + "\nbroken: [unclosed\n")
    elif what == 5:  # the id no longer matches the path: referrers dangle
        path.rename(path.with_name(path.stem + "-renamed.yaml"))
    else:  # a schema violation
        path.write_text(text.replace("version: ", "version: x", 1))
    return f"edit {what} on {path}"


def by_file(rows: dict[str, list[tuple[object, ...]]]) -> dict[str, list[str]]:
    return {name: sorted(map(repr, found)) for name, found in rows.items() if found}


def grouped(findings: list[Finding]) -> dict[str, list[tuple[object, ...]]]:
    rows: dict[str, list[tuple[object, ...]]] = {}
    for finding in findings:
        rows.setdefault(finding.location.path, []).append(finding_to_tuple(finding))
    return rows


@seed(34)
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 10_000)), min_size=1, max_size=3))
def test_the_plan_reruns_every_file_whose_findings_change(
    before_small: Path, tmp_path_factory: pytest.TempPathFactory, edits: list[tuple[int, int]]
) -> None:
    before = before_small
    work = tmp_path_factory.mktemp("edits")
    shutil.copytree(before, work, dirs_exist_ok=True, symlinks=True)
    snapshot = last_snapshot(before)
    with contextlib.chdir(work):
        done = [edit(Path("records"), what, which) for what, which in edits]
        chosen, _ = planned(Path("records"), snapshot)
        after = validate(Path("records"), remember=False)
    now, was = by_file(grouped(after.findings)), by_file(snapshot.findings)
    tree = set(chosen.files or {})
    moved = {name for name in (now.keys() | was.keys()) & tree if now.get(name) != was.get(name)}
    assert moved <= chosen.rerun, (done, sorted(moved - chosen.rerun))
    shutil.rmtree(work)
