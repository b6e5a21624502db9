"""kb's one fork pool: run a pure function over many items in forked workers, when that pays.

The loader parses thousands of YAML files with it (libyaml's construction step
runs in Python, so one process is bound to one core), the site renders record
pages with it, and the equations engine checks families of records with it.
Items reach the workers by fork (no pickling on the way in); only results are
pickled back. Workers are used only where that is safe and worth it: `fork`
exists, this is the main thread of a single-threaded process, there are at
least `min_items` items and `worker_count()` is 2 or more (a CPU is free, or
$KB_JOBS asks for workers; $KB_JOBS=1 keeps everything in this process).
Otherwise, or on any failure of the pool, the caller's own loop does the work,
so a result never depends on whether workers ran. There is no spawn fallback
on purpose: spawned workers would pickle every item and the function (often a
closure) and import kb again, costing more than the work they would share
(tests/test_portable.py runs kb without fork).
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

from kb import settings

MAX_WORKERS = 8
_ITEMS: Sequence[Any] = ()
_FUNCTION: Callable[[Any], Any] | None = None


def worker_count() -> int:
    """$KB_JOBS if set, else the CPUs this process may use that are free (at most MAX_WORKERS).

    "Free" reads the one-minute load average: on a machine whose every CPU is
    already busy a forked worker only competes with the others and adds the cost
    of pickling its results (BENCHMARKS.md: 0.8 s of CPU at 10,000 records), so
    kb then stays in one process. At least 1.
    """
    wanted = settings.jobs()
    if wanted is not None:
        return wanted
    available = min(usable_cpus(), MAX_WORKERS)
    return max(1, min(available, round(available - _load())))


def usable_cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _load() -> float:
    """The one-minute load average (0 where the system does not tell)."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return 0.0


def can_fork() -> bool:
    """`fork` exists and nothing else runs here (forking a threaded process is unsafe)."""
    alone = threading.current_thread() is threading.main_thread() and threading.active_count() == 1
    return alone and "fork" in multiprocessing.get_all_start_methods()


def map_forked(
    function: Callable[[Any], Any], items: Sequence[Any], min_items: int, chunk: int = 0
) -> list[Any] | None:
    """[function(item) for item in items] computed by workers, or None (do it yourself).

    `chunk`: items per task (0: about four tasks per worker, for items of similar cost;
    1 balances items of very different cost, such as the engine's families).
    """
    jobs = min(worker_count(), len(items))
    if jobs < 2 or len(items) < min_items or not can_fork():
        return None
    global _ITEMS, _FUNCTION
    _ITEMS, _FUNCTION = items, function
    try:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            chunks = pool.map(_run_span, _spans(len(items), chunk or -(-len(items) // (jobs * 4))))
    except Exception:  # noqa: BLE001 - any trouble with workers: the caller does it in-process
        return None
    finally:
        _ITEMS, _FUNCTION = (), None
    return [result for part in chunks for result in part]


def map_or_run(function: Callable[[Any], Any], items: Sequence[Any], min_items: int) -> list[Any]:
    """map_forked one item per task, else the same loop in this process."""
    found = map_forked(function, items, min_items, chunk=1)
    return found if found is not None else [function(item) for item in items]


def _spans(total: int, size: int) -> list[tuple[int, int]]:
    return [(start, min(start + size, total)) for start in range(0, total, max(1, size))]


def _run_span(span: tuple[int, int]) -> list[Any]:
    assert _FUNCTION is not None
    return [_FUNCTION(item) for item in _ITEMS[span[0] : span[1]]]
