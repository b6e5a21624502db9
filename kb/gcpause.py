"""Python's cyclic garbage collector kept still while kb loads and checks a tree.

A run keeps every parsed document alive until it ends, and the documents hold no
reference cycles the run must free: the collector would only walk the same tens of
thousands of dicts again and again (14% of a cold run's CPU at 10,000 records,
BENCHMARKS.md). `paused` turns it off for the length of a call and puts it back as
it was, on the way out of an error too, so a library caller of kb.api finds the
collector as it left it; reference counting frees everything else as usual. Worker
processes forked inside (kb.workers) inherit the paused collector.

Not paused for the site build: its rendering makes cyclic garbage of its own (pausing
the collector there raised the peak memory of a 3,000-record build from 185 to
321 MB, and of 10,000 records to 862 MB, for 6% of CPU). The build runs `frozen`
instead: what existed before it (the loaded records, their views) is moved out of
the collector's sight (gc.freeze), so its full collections walk only what the build
made. After one change at 10,000 records that took the four full collections of a
rebuild from ~2.7 s to ~0.9 s (wall, busy machine) and the rebuild from 7.5 to 6.6 s
of CPU (bench/rebuild_parts.py); a cold build gains little (its pages dwarf the
records).
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


@contextmanager
def paused() -> Iterator[None]:
    """The collector off inside the block, as it was (on or off) after it."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextmanager
def frozen() -> Iterator[None]:
    """Every object alive now ignored by the collector inside the block (gc.freeze).

    Put back afterwards (gc.unfreeze) unless the caller had frozen objects itself,
    which then stay frozen as the caller left them.
    """
    was_frozen = gc.get_freeze_count() > 0
    gc.freeze()
    try:
        yield
    finally:
        if not was_frozen:
            gc.unfreeze()


def paused_during(function: Callable[P, T]) -> Callable[P, T]:
    """`function` run with the collector paused (see `paused`)."""

    @functools.wraps(function)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        with paused():
            return function(*args, **kwargs)

    return wrapper
