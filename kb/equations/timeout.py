"""A wall-clock budget for symbolic work that never hangs the caller.

In the main thread of a Unix process the budget is a SIGALRM timer (cheap, and
SymPy is pure Python, so the alarm lands between bytecodes). Budgets nest: an
inner budget never outlives the enclosing one, and the enclosing one gets back
what is left of it. Elsewhere (worker
threads, no SIGALRM) the work runs in a forked child process that is killed when
the budget runs out; the result comes back through a pipe, so it must pickle.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")

DEFAULT_BUDGET = float(os.environ.get("KB_EQ_BUDGET", "2.0"))


class CheckTimeout(Exception):
    """The symbolic check ran out of its time budget."""


def _alarm_usable() -> bool:
    return hasattr(signal, "SIGALRM") and threading.current_thread() is threading.main_thread()


@contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    def on_alarm(signum: int, frame: Any) -> None:
        raise CheckTimeout(f"check exceeded its {seconds:g} s budget")

    started = time.monotonic()
    outer = signal.getitimer(signal.ITIMER_REAL)[0]  # an enclosing budget, if any
    budget = min(seconds, outer) if outer else seconds
    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, budget)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer:  # give the enclosing budget what is left of it
            left = outer - (time.monotonic() - started)
            signal.setitimer(signal.ITIMER_REAL, max(left, 0.001))


def run_with_budget(work: Callable[[], T], seconds: float = DEFAULT_BUDGET) -> T:
    """Return work(), or raise CheckTimeout once `seconds` of wall clock have passed."""
    if _alarm_usable():
        with _alarm(seconds):
            return work()
    return _in_child(work, seconds)


def _in_child(work: Callable[[], T], seconds: float) -> T:
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)

    def target() -> None:
        try:
            sender.send(("ok", work()))
        except BaseException as exc:  # the child reports every failure to the parent
            sender.send(("error", exc))

    child = context.Process(target=target, daemon=True)
    child.start()
    sender.close()
    try:
        if not receiver.poll(seconds):
            raise CheckTimeout(f"check exceeded its {seconds:g} s budget")
        status, payload = receiver.recv()
    finally:
        if child.is_alive():
            child.kill()
        child.join(1)
        receiver.close()
    if status == "error":
        raise payload
    return payload  # type: ignore[no-any-return]
