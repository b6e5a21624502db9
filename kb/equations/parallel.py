"""Run the symbolic checks of many records on several cores (forked workers).

Records are independent, so a cold run maps them over a small fork pool; each
worker checks whole families of records (engine.py: one symbols-and-equations
text each, whose symbolic work the family shares) under its own SIGALRM budgets
(a worker's main thread) and returns plain JSON-able results. Forking is used
only where it is safe and worth it: Linux-style fork available, called from the
main thread of a single-threaded process, and at least MIN_RECORDS jobs
(families). Measured at 10,000 records (2,000 flop classes, 2 families): once
the families shared their work, forking for them doubled the engine's wall time
(1.0 -> 1.9 s), so few families stay in process. KB_EQ_WORKERS=1 turns it off.

Without fork (Windows, or a Python whose only start methods are spawn and
forkserver) the records are checked in this process, one after another: spawn
would have to pickle the job, a closure over the knowledge base, and re-import
kb and SymPy in each worker. The same happens when the pool cannot start (no
processes left, say). Results are the same either way (tests/test_portable.py).
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

MIN_RECORDS = 6

_JOB: Callable[[Any], Any] | None = None


def worker_count(jobs: int) -> int:
    """Return how many workers to use for `jobs` records (1 means in this process)."""
    wanted = os.environ.get("KB_EQ_WORKERS")
    limit = int(wanted) if wanted and wanted.isdigit() else min(os.cpu_count() or 1, 4)
    forkable = "fork" in multiprocessing.get_all_start_methods()
    alone = threading.current_thread() is threading.main_thread() and threading.active_count() == 1
    if jobs < MIN_RECORDS or not forkable or not alone:
        return 1
    return max(1, min(limit, jobs))


def map_records(job: Callable[[Any], Any], record_ids: Sequence[Any]) -> list[Any]:
    """Return [job(id) for id in record_ids], on forked workers when worth it.

    An id is whatever the job takes (engine.py passes families of records).
    """
    workers = worker_count(len(record_ids))
    if workers == 1:
        return [job(record_id) for record_id in record_ids]
    global _JOB
    _JOB = job  # inherited by the forked workers; never pickled
    try:
        try:
            pool = multiprocessing.get_context("fork").Pool(workers)
        except (OSError, ValueError):  # no fork after all, or no processes to be had
            return [job(record_id) for record_id in record_ids]
        with pool:
            return pool.map(_call, record_ids, chunksize=1)
    finally:
        _JOB = None


def _call(record_id: Any) -> Any:
    assert _JOB is not None
    return _JOB(record_id)
