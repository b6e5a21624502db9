"""Python's cyclic garbage collector kept still while kb loads and checks a tree.

A run keeps every parsed document alive and they hold no cycles it must free, so the
collector would only re-walk them (14% of a cold run's CPU at 10,000 records).
`paused` turns it off for a call and restores it as it was, errors included, so a
library caller of kb.api finds it as it left it; forked workers inherit it paused.
The site build makes cyclic garbage of its own (paused, its peak memory more than
doubled), so it runs `frozen` instead: what existed before (gc.freeze) is out of the
collector's sight, and its full collections walk only what the build made.
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
