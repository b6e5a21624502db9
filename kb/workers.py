"""Run a pure function over many items in forked worker processes, when that pays.

Used by the loader to parse thousands of YAML files on all cores: libyaml's
construction step runs in Python, so one process is bound to one core. Items
reach the workers by fork (no pickling on the way in); only results are
pickled back. Below `min_items`, on one CPU, without fork (Windows, macOS
spawn), with KB_JOBS=1, or on any failure, it returns None and the caller does
the work in-process, so the result never depends on whether workers ran. There
is no spawn fallback on purpose: spawned workers would pickle every item and
the function (often a closure) and import kb again, costing more than the
parse they would share (tests/test_portable.py runs kb without fork).
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from typing import Any

_ITEMS: Sequence[Any] = ()
_FUNCTION: Callable[[Any], Any] | None = None


def worker_count() -> int:
    """$KB_JOBS if set, else the CPUs this process may use (at most 8)."""
    override = os.environ.get("KB_JOBS", "")
    if override.isdigit():
        return max(1, int(override))
    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        available = os.cpu_count() or 1
    return min(available, 8)


def map_forked(
    function: Callable[[Any], Any], items: Sequence[Any], min_items: int
) -> list[Any] | None:
    """[function(item) for item in items] computed by worker processes, or None (do it yourself)."""
    jobs = worker_count()
    if jobs < 2 or len(items) < min_items or "fork" not in multiprocessing.get_all_start_methods():
        return None
    global _ITEMS, _FUNCTION
    _ITEMS, _FUNCTION = items, function
    try:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            chunks = pool.map(_run_span, _spans(len(items), jobs * 4))
    except Exception:  # noqa: BLE001 - any trouble with workers: the caller does it in-process
        return None
    finally:
        _ITEMS, _FUNCTION = (), None
    return [result for chunk in chunks for result in chunk]


def _spans(total: int, parts: int) -> list[tuple[int, int]]:
    size = max(1, -(-total // parts))
    return [(start, min(start + size, total)) for start in range(0, total, size)]


def _run_span(span: tuple[int, int]) -> list[Any]:
    assert _FUNCTION is not None
    return [_FUNCTION(item) for item in _ITEMS[span[0] : span[1]]]
