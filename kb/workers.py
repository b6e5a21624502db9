"""kb's one fork pool: run a pure function over many items in forked workers, when that pays.

The loader parses thousands of YAML files with it (libyaml's construction step
runs in Python, so one process is bound to one core), the site renders record
pages with it, and the equations engine checks families of records with it.
Items reach the workers by fork (no pickling on the way in); only results are
pickled back. Workers are used only where that is safe and worth it: `fork`
exists, this is the main thread of a single-threaded process, there are at
least `min_items` items and `worker_count()` is 2 or more (a CPU is free now, or
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
import time
from collections.abc import Callable, Sequence
from typing import Any

from kb import settings

MAX_WORKERS = 8
_ITEMS: Sequence[Any] = ()
_FUNCTION: Callable[[Any], Any] | None = None


def worker_count() -> int:
    """$KB_JOBS if set, else the CPUs this process may use that are free now (at most MAX_WORKERS).

    On a machine whose every CPU is already busy a forked worker only competes with
    the others and adds the cost of pickling its results (BENCHMARKS.md: 0.8 s of
    CPU at 10,000 records), so kb then stays in one process. At least 1.
    """
    wanted = settings.jobs()
    if wanted is not None:
        return wanted
    return free_workers(min(usable_cpus(), MAX_WORKERS), os.cpu_count() or 1, _busy())


def free_workers(usable: int, online: int, busy: float) -> int:
    """How many workers to start: the `usable` CPUs, but no more than are free (at least 1).

    `online` is the machine's CPU count, `busy` how many of them other tasks want
    (runnable tasks but this one). A pure function of its readings (tests inject them).
    """
    return max(1, min(usable, round(online - busy)))


SAMPLES = 3  # readings of the runnable count, SAMPLE_GAP seconds apart
SAMPLE_GAP = 0.001


def _busy() -> float:
    """How many CPUs other tasks want now: the runnable tasks of /proc/loadavg but this one.

    An instantaneous count, not the one-minute load average: that lags by minutes and
    still holds kb's own previous run (bench/run.py, pre-commit and editors run kb back
    to back), so right after one run a quiet 2-CPU machine read 1.1 and kb kept to one
    process with a CPU free. The fewest of a few readings a millisecond apart: a task
    that wants a CPU for the next seconds is runnable in all of them, a short-lived one
    (a shell command) is not. Where /proc is absent: the one-minute load average.
    """
    readings = []
    for sample in range(SAMPLES):
        if sample:
            time.sleep(SAMPLE_GAP)
        running = runnable_now(_read_loadavg())
        if running is None:
            break
        readings.append(running)
    if len(readings) == SAMPLES:
        return float(max(0, min(readings) - 1))  # the reading counts this process itself
    return _load()


def runnable_now(loadavg: str | None) -> int | None:
    """The runnable-task count in a /proc/loadavg text (`0.52 0.58 0.59 2/467 12345`), or None."""
    fields = (loadavg or "").split()
    if len(fields) < 4:
        return None
    running = fields[3].partition("/")[0]
    return int(running) if running.isascii() and running.isdigit() else None


def _read_loadavg() -> str | None:
    try:
        with open("/proc/loadavg", encoding="ascii") as handle:
            return handle.read(200)
    except (OSError, UnicodeDecodeError):
        return None


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
    except (OSError, AttributeError):
        return 0.0


def can_fork() -> bool:
    """`fork` exists and nothing else runs here (forking a threaded process is unsafe)."""
    alone = threading.current_thread() is threading.main_thread() and threading.active_count() == 1
    return alone and "fork" in multiprocessing.get_all_start_methods()


def map_forked(
    function: Callable[[Any], Any],
    items: Sequence[Any],
    min_items: int,
    chunk: int = 0,
    progress: Callable[[int], None] | None = None,
) -> list[Any] | None:
    """[function(item) for item in items] computed by workers, or None (do it yourself).

    `chunk`: items per task (0: about four tasks per worker, for items of similar cost;
    1 balances items of very different cost, such as the engine's families).
    `progress`, if given, is called here with the number of items of each task done,
    in order, as the results arrive (a progress bar over one pool, not one pool per step).
    """
    if len(items) < min_items or not can_fork():
        return None
    jobs = min(worker_count(), len(items))
    if jobs < 2:
        return None
    global _ITEMS, _FUNCTION
    _ITEMS, _FUNCTION = items, function
    try:
        spans = _spans(len(items), chunk or -(-len(items) // (jobs * 4)))
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            chunks = []
            for part in pool.imap(_run_span, spans):
                chunks.append(part)
                if progress is not None:
                    progress(len(part))
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
