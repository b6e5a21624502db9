"""A wall-clock budget for symbolic work that never hangs the caller.

Three ways to keep it, the first that the platform offers:

1. In the main thread of a Unix process, a SIGALRM timer (cheap, and SymPy is
   pure Python, so the alarm lands between bytecodes). Budgets nest: an inner
   budget never outlives the enclosing one, and the enclosing one gets back
   what is left of it. A spent budget's alarm repeats (ALARM_REPEAT) until the
   work stops, so a swallowed CheckTimeout cannot leave it unbounded.
2. Elsewhere (worker threads), where the `fork` start method exists, the work
   runs in a forked child process that is killed when the budget runs out; the
   result comes back through a pipe, so it must pickle.
3. Without SIGALRM and without fork (Windows; any platform where a check runs
   off the main thread and only spawn exists), in a helper thread stopped at
   the budget (kb.equations.threadbudget explains why a thread and not a
   spawned process: spawn would have to pickle the work, a closure over SymPy
   objects). The findings are the same on every path (tests/test_portable.py).
"""

from __future__ import annotations

import multiprocessing
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar, cast

from kb import settings
from kb.run import Spending

T = TypeVar("T")

DEFAULT_BUDGET = settings.DEFAULT_BUDGET  # seconds per check; $KB_EQ_BUDGET overrides it
# Once a budget is spent its alarm comes again every ALARM_REPEAT seconds until the work
# ends: a CheckTimeout lost on the way (an `except Exception` in the work, a handler that
# ran inside a finaliser, where Python ignores exceptions) cannot leave the work unbounded.
# Seen: under load, the suite once ran the EQ014 rule case's spent check for 20 minutes
# (in sample_nonzero, SIGALRM handler installed, no alarm pending; where the raise was
# lost is not known).
ALARM_REPEAT = 0.05


class CheckTimeout(Exception):
    """The symbolic check ran out of its time budget."""


def _alarm_usable() -> bool:
    return hasattr(signal, "SIGALRM") and threading.current_thread() is threading.main_thread()


@contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    def on_alarm(signum: int, frame: Any) -> None:
        raise CheckTimeout(f"check exceeded its {seconds:g} s budget")

    started = time.monotonic()
    outer, outer_repeat = signal.getitimer(signal.ITIMER_REAL)  # an enclosing budget, if any
    budget = min(seconds, outer) if outer else seconds
    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, budget, ALARM_REPEAT)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer:  # give the enclosing budget what is left of it
            left = outer - (time.monotonic() - started)
            signal.setitimer(signal.ITIMER_REAL, max(left, 0.001), outer_repeat)


def default_budget() -> float:
    """$KB_EQ_BUDGET (seconds, a positive number) if set, else DEFAULT_BUDGET (kb.settings)."""
    return settings.eq_budget()


RECORD_BUDGETS = 3
RUN_BUDGETS = 30
# What the run this thread's checks belong to has spent (use_run_budget): a pointer to
# that run's context (kb.run.RunContext.budget), so nothing one run spent reaches the next.
_RUN: ContextVar[Spending | None] = ContextVar("kb_run_spending", default=None)


def use_run_budget(spending: Spending) -> None:
    """From now on this thread's checks spend from `spending` (a run's: kb.run.Spending).

    A forked worker spends from its copy. Outside any run only each check's own
    budget applies.
    """
    _RUN.set(spending)


@contextmanager
def record_budget(seconds: float | None = None) -> Iterator[None]:
    """Bound the checks of one record together (default RECORD_BUDGETS check budgets)."""
    total = seconds if seconds is not None else RECORD_BUDGETS * default_budget()
    spent, started = _RUN.get(), None
    if spent is None:  # outside a run: the record's own spending
        spent = Spending()
        started = _RUN.set(spent)
    saved = (spent.record_end, spent.record_label)
    spent.record_end = time.monotonic() + total
    spent.record_label = f"the record's checks exceeded their {total:g} s budget"
    try:
        yield
    finally:
        spent.record_end, spent.record_label = saved
        if started is not None:
            _RUN.reset(started)


def _capped(spent: Spending | None, seconds: float) -> float:
    """`seconds`, cut to what the record and the run have left (CheckTimeout if nothing)."""
    if spent is None or spent.depth:
        return seconds  # outside a run, or an inner budget (the enclosing one was capped)
    run_left = RUN_BUDGETS * default_budget() - spent.lost
    if run_left <= 0:
        raise CheckTimeout(f"this run's checks spent their {RUN_BUDGETS} budgets on timeouts")
    if spent.record_end is not None:
        record_left = spent.record_end - time.monotonic()
        if record_left <= 0:
            raise CheckTimeout(spent.record_label)
        seconds = min(seconds, record_left)
    return min(seconds, run_left)


def run_with_budget(work: Callable[[], T], seconds: float | None = None) -> T:
    """Return work(), or raise CheckTimeout once `seconds` (default_budget()) have passed.

    The record's and the run's budgets (record_budget, RUN_BUDGETS) cap `seconds`.
    """
    spent = _RUN.get()
    seconds = _capped(spent, default_budget() if seconds is None else seconds)
    if spent is None:
        return _run_within(work, seconds)
    started = time.monotonic()
    spent.depth += 1
    try:
        return _run_within(work, seconds)
    except CheckTimeout:
        if spent.depth == 1:
            spent.lost += time.monotonic() - started
        raise
    finally:
        spent.depth -= 1


def _run_within(work: Callable[[], T], seconds: float) -> T:
    if _alarm_usable():
        with _alarm(seconds):
            return work()
    if "fork" in multiprocessing.get_all_start_methods():
        return _in_child(work, seconds)
    from kb.equations.threadbudget import run_in_thread

    return run_in_thread(work, seconds, CheckTimeout)


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
    return cast(T, payload)  # what work() returned, unpickled from the child
