"""Python's cyclic garbage collector kept still while kb loads and checks a tree.

A run keeps every parsed document alive until it ends, and the documents hold no
reference cycles the run must free: the collector would only walk the same tens of
thousands of dicts again and again (14% of a cold run's CPU at 10,000 records,
BENCHMARKS.md). `paused` turns it off for the length of a call and puts it back as
it was, on the way out of an error too, so a library caller of kb.api finds the
collector as it left it; reference counting frees everything else as usual. Worker
processes forked inside (kb.workers) inherit the paused collector.

Not used for the site build: its rendering makes cyclic garbage of its own (pausing
the collector there raised the peak memory of a 3,000-record build from 185 to
321 MB, and of 10,000 records to 862 MB, for 6% of CPU), and freezing what existed
before it (gc.freeze) bought nothing measurable.
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


def paused_during(function: Callable[P, T]) -> Callable[P, T]:
    """`function` run with the collector paused (see `paused`)."""

    @functools.wraps(function)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        with paused():
            return function(*args, **kwargs)

    return wrapper
