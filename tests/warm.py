"""The shipped records' result stores, made by one cold check per test run, copied into copies.

A cold `kb validate` of the shipped tree costs ~13 CPU-s (every claim derived with
SymPy); the same run from a warm record and equation store costs ~1-2 s. Tests whose
subject is not the cold path (incremental = full after edits, a command's output on a
copy of the tree, ...) start from the stores one cold run left, copied beside their
copy of the records (`.kb-cache`, kb.store.cache_dir): the run under test still loads,
checks and reports every file; only results whose keys (file bytes and everything the
check read) are unchanged come from the store, as on a user's second run.

The run snapshot (`run` store) is never copied: a seeded tree's first run is a full run.
`tests/project/test_warm_stores.py` holds a seeded run's findings equal to a cold run's
(on the clean tree, to what the cold run that made the stores reported: `cold_summary`).

Under pytest-xdist the stores are made once for all workers (a lock file in the run's
shared temporary folder); without xdist once per session.

Tests that run kb on the shipped records in place (`kb` at the project folder, its own
`.kb-cache`) ask for `repo_stores` (tests/conftest.py): on a clean clone that folder has
no claims' stores, and the first such test on each worker would derive every claim cold
again (~13 CPU-s); `seed_repo` copies in the claims' stores of the one cold run instead,
as a user's earlier run would have left them. A folder that holds some is left alone.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from kb.equations.cache import STORE as EQUATION_STORE
from kb.recordcache import STORE as RECORD_STORE
from kb.store import SUFFIX
from tests.conftest import SHIPPED_RECORDS

if TYPE_CHECKING:
    from kb.api import Result

KEPT = (RECORD_STORE, EQUATION_STORE)  # never the run snapshot
COLD = "cold-run.json"  # beside the stores: what the cold run reported (never seeded)


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock on `path` (POSIX); elsewhere no lock (each worker may build its own)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def make_stores(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of the stores a cold check of the shipped records left (made once per run)."""
    from kb.api import validate

    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    done = shared / "shipped-stores"
    with _locked(shared / "shipped-stores.lock"):
        if not done.is_dir():
            work = shared / "shipped-stores.work"
            shutil.rmtree(work, ignore_errors=True)
            shutil.copytree(SHIPPED_RECORDS, work / "records")
            before = os.getcwd()
            os.chdir(work)  # paths as a test at a copy's parent sees them: records/...
            try:
                cold = validate(Path("records"), remember=False)  # fills .kb-cache beside it
            finally:
                os.chdir(before)
            kept = work / "kept"
            kept.mkdir()
            (kept / COLD).write_text(json.dumps(summary(cold)), encoding="utf-8")
            for store in (work / ".kb-cache").iterdir():
                if _store_name(store) in KEPT:
                    shutil.copy2(store, kept / store.name)
            kept.rename(done)
            shutil.rmtree(work, ignore_errors=True)
    return done


def seed_repo(stores: Path) -> Path:
    """The shipped records' own cache folder, given the claims' stores of `stores` if it has none.

    Each shard is copied under a temporary name and renamed into place, so a kb run at the
    project folder meanwhile (another worker) reads a whole shard or none; two workers
    seeding at once write the same bytes. Returns the cache folder."""
    from kb.store import cache_dir

    cache = cache_dir(SHIPPED_RECORDS)
    if any(_store_name(p) == EQUATION_STORE for p in cache.glob("*" + SUFFIX)):
        return cache  # a run here (or a seeding) left its stores: kb keeps them current
    cache.mkdir(parents=True, exist_ok=True)
    for store in stores.iterdir():
        if _store_name(store) == EQUATION_STORE:
            part = cache / f".seeding-{os.getpid()}-{store.name}"
            shutil.copy2(store, part)
            os.replace(part, cache / store.name)
    return cache


def summary(result: Result) -> dict[str, Any]:
    """What a run reported, as JSON: each finding's fields, the files checked, the SymPy work."""
    return {
        "findings": [
            [f.code, f.severity.value, str(f.location), f.message, f.hint, repr(f.related)]
            for f in result.findings
        ],
        "checked": list(result.checked_paths),
        "symbolic": result.stats.symbolic,
    }


def cold_summary(stores: Path) -> dict[str, Any]:
    """`summary` of the cold run that made `stores` (on a copy of the shipped records)."""
    loaded: dict[str, Any] = json.loads((stores / COLD).read_text(encoding="utf-8"))
    return loaded


def _store_name(path: Path) -> str:
    """`records` for records-0a.kbstore, `equations` for equations.kbstore."""
    return path.name.split("-")[0].split(".")[0]


def seed(stores: Path, cache: Path, kept: tuple[str, ...] = KEPT) -> Path:
    """Copy the stores named in `kept` into the cache folder `cache` (made if missing).

    `kept=(EQUATION_STORE,)` seeds the claims' results and plans only: the record cache
    starts empty (a test of its saves), the SymPy work is still spared.
    """
    cache.mkdir(parents=True, exist_ok=True)
    for store in stores.iterdir():
        if _store_name(store) in kept:
            shutil.copy2(store, cache / store.name)
    return cache
