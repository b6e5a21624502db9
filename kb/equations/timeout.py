"""A check's budget: counted work (deterministic), with a wall clock only as a last guard.

A symbolic check may make at most `default_work()` steps (Python calls, counted by
kb.equations.work; $KB_EQ_WORK overrides it). The count is a property of the input,
so the same records give the same findings on a quiet laptop and on a CI runner at
load 14. A check past its steps is `unverified (timeout)` (EQ014), never a pass.

Above single checks, in the same unit: a record's checks together get
RECORD_BUDGETS check budgets, and a run stops checking (every further check is
unverified at once) after its timed-out checks have spent RUN_BUDGETS of them, so a
hostile record or tree stays bounded.

Time is kept only as a guard against work the count cannot see (a long C-level
call) or a stop that the work swallowed: $KB_EQ_BUDGET seconds per check (default
GUARD_SECONDS, some 15 times what a check at its step limit takes). A check it stops
raises CheckGuard, reported as EQ029 (an internal limit, distinct from EQ014); the
suite's inputs never reach it. Three ways to keep the guard, the first that the
platform offers:

1. In the main thread of a Unix process, a SIGPROF timer: CPU time, so a machine
   busy with other processes does not bring the guard nearer (measured: a check at
   its step limit took 4 s of CPU and 60 s of wall clock beside four busy
   processes on two cores). SymPy is pure Python, so the signal lands between
   bytecodes. A spent guard's signal repeats (ALARM_REPEAT) until the work stops, so
   a swallowed CheckGuard cannot leave it unbounded.
2. Elsewhere (worker threads), where the `fork` start method exists, the work runs in
   a forked child process, under the same CPU guard, and the child is killed after
   WALL_FACTOR times the guard in wall clock; the result comes back through a pipe,
   so it must pickle.
3. Without SIGALRM and without fork (Windows), in a helper thread stopped at the guard
   in wall-clock seconds (kb.equations.threadbudget): there, and only there, a very
   busy machine can bring the guard (EQ029, never EQ014) before the step limit. The
   findings are otherwise the same on every path (tests/workers/test_portable.py): the steps
   are counted in whichever thread runs the work.
"""

from __future__ import annotations

import importlib
import multiprocessing
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar, cast

from kb import settings
from kb.equations.work import OutOfWork, counting, run_here, spent_here
from kb.run import Spending

T = TypeVar("T")

DEFAULT_WORK = settings.DEFAULT_WORK  # steps per check; $KB_EQ_WORK overrides it
GUARD_SECONDS = settings.DEFAULT_GUARD  # the last-resort wall clock; $KB_EQ_BUDGET overrides
# Once the guard is spent its alarm comes again every ALARM_REPEAT seconds until the work
# ends: a CheckGuard lost on the way (an `except Exception` in the work, a handler that
# ran inside a finaliser, where Python ignores exceptions) cannot leave the work unbounded.
ALARM_REPEAT = 0.05
WALL_FACTOR = 10  # a forked child's wall clock: its CPU guard, times this, then it is killed


class CheckTimeout(Exception):
    """The symbolic check ran out of its budget (its steps, or the record's or run's)."""


class CheckGuard(CheckTimeout):
    """The check passed the last-resort wall-clock guard: an internal limit (EQ029)."""


def _alarm_usable() -> bool:
    return (
        hasattr(signal, "SIGALRM")
        and hasattr(signal, "SIGPROF")
        and threading.current_thread() is threading.main_thread()
    )


@contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    """CheckGuard once this process has used `seconds` of CPU, repeated until the work stops.

    SIGPROF counts CPU time: a busy machine slows the check, it does not make it use more.
    """

    def on_alarm(signum: int, frame: Any) -> None:
        raise CheckGuard(guard_message(seconds))

    previous = signal.signal(signal.SIGPROF, on_alarm)
    signal.setitimer(signal.ITIMER_PROF, seconds, ALARM_REPEAT)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def guard_message(seconds: float) -> str:
    """What a check stopped by the guard says (one wording on every path)."""
    return (
        f"kb stopped the check at its guard of {seconds:g} s, an internal limit "
        "that its count of steps should have reached first"
    )


def default_work() -> int:
    """$KB_EQ_WORK (steps, a positive whole number) if set, else DEFAULT_WORK (kb.settings)."""
    return settings.eq_work()


def default_budget() -> float:
    """$KB_EQ_BUDGET (seconds of the wall-clock guard) if set, else GUARD_SECONDS."""
    return settings.eq_budget()


RECORD_BUDGETS = 3
RUN_BUDGETS = 30


@contextmanager
def record_budget(run: Spending | None = None, steps: int | None = None) -> Iterator[Spending]:
    """Bound the checks of one record together (default RECORD_BUDGETS check budgets).

    `run`: what the record's run has spent (kb.run.RunContext.budget); None, a record
    checked alone (its own Spending). Yields the Spending its checks are to spend from
    (`run_with_budget(..., run=)`).
    """
    total = steps if steps is not None else RECORD_BUDGETS * default_work()
    spent = run if run is not None else Spending()
    saved = (spent.record_left, spent.record_label)
    spent.record_left = total
    spent.record_label = f"the record's checks exceeded their budget of {total:,} steps"
    try:
        yield spent
    finally:
        spent.record_left, spent.record_label = saved


def budgets_stopped(run: Spending | None) -> int:
    """How many checks a budget has stopped in `run`, nested ones included.

    Whether a result may be kept is this count, not its wording: a record's result
    whose checks moved it was decided by a budget (EQ014, EQ029, or a simplification
    that gave up inside a check), and no store keeps it (kb.equations.planbuild). The
    engine checks every record inside record_budget, so a Spending is always counting;
    outside both a run and a record (`run` None), nothing is counted (0).
    """
    return run.stopped if run is not None else 0


def note_stopped(run: Spending | None) -> None:
    """Count one stop in `run`: a check a budget stopped, or reused work one had (shared)."""
    if run is not None:
        run.stopped += 1


def _capped(spent: Spending | None, steps: int) -> int:
    """`steps`, cut to what the record and the run have left (CheckTimeout if nothing)."""
    if spent is None:
        return steps
    run_left = RUN_BUDGETS * default_work() - spent.lost
    if run_left <= 0:
        raise CheckTimeout(f"this run's checks spent their {RUN_BUDGETS} budgets on timeouts")
    if spent.record_left is not None:
        if spent.record_left <= 0:
            raise CheckTimeout(spent.record_label)
        steps = min(steps, spent.record_left)
    return min(steps, run_left)


def run_with_budget(
    work: Callable[[], T], steps: int | None = None, run: Spending | None = None
) -> T:
    """Return work(), or raise CheckTimeout once it has made `steps` (default_work()) calls.

    An outermost budget spends from `run` (what its run and record have spent,
    record_budget; None: only its own steps apply): it is capped by the record's and
    the run's budgets (RUN_BUDGETS), starts from an empty SymPy cache
    (kb.equations.work) and runs under the wall-clock guard (CheckGuard). A budget
    inside another only counts: it ends no later than the enclosing one, and belongs
    to that one's run.
    """
    steps = default_work() if steps is None else steps
    if spent_here() is not None:  # inside another check's budget, in this thread
        enclosing = run_here()  # the run of the budget it is inside: it belongs to that one
        inner = enclosing if enclosing is not None else run
        try:
            return _counted(work, steps, False, [0], inner)
        except CheckTimeout:
            note_stopped(inner)
            raise
    spent, charged = run, [0]
    _import_first()
    try:
        steps = _capped(spent, steps)
        limit = steps

        def counted(into: Spending | None) -> T:
            return _counted(work, limit, True, charged, into)

        return _run_within(counted, default_budget(), charged, spent)
    except CheckGuard:  # its count is not the input's: the whole budget is lost
        note_stopped(spent)
        if spent is not None:
            spent.lost += steps
        raise
    except CheckTimeout:
        note_stopped(spent)
        if spent is not None:
            spent.lost += charged[0]
        raise
    finally:
        if spent is not None and spent.record_left is not None:
            spent.record_left -= charged[0]


# What a check would otherwise import for the first time inside its budget, found by
# logging the imports made while a budget was open (`kb validate --full` of the shipped
# tree; tests/equations/test_threadbudget.py holds it on the sample, on the whole tree
# with KB_FULL=1). SymPy's simplify imports sympy.physics.units: 275,577 counted steps,
# 9 % of a check's budget, charged to whichever check of a process simplified first.
IMPORTED_FIRST = (
    "sympy",
    "sympy.physics.units",
    "sympy.sets.setexpr",
    "sympy.assumptions.wrapper",
    "kb.equations.rewrites",
)


def _import_first() -> None:
    """Import IMPORTED_FIRST now, before any budget counts or any guard starts.

    A stop that lands in a module's first import leaves it half made for the rest of
    the process: SymPy without `sympy.core` failed every later check with EQ001 (a
    helper thread's guard of 0.3 s stopped `import sympy`, tests/workers). And an
    import inside a budget is counted in whichever check happens to make it first.
    Imported once per process; after that, a look in sys.modules.
    """
    for name in IMPORTED_FIRST:
        if name not in sys.modules:
            importlib.import_module(name)


def _counted(
    work: Callable[[], T], steps: int, fresh: bool, charged: list[int], run: Spending | None
) -> T:
    """work() within `steps` counted calls of `run`; `charged[0]` gets the calls it made."""
    with counting(steps, fresh, run) as budget:
        limit = budget.limit
        try:
            return work()
        except OutOfWork:
            raise CheckTimeout(f"check exceeded its budget of {limit:,} steps") from None
        finally:
            # No stop from here on: leaving the block makes calls too (the context manager's
            # own), which must not raise outside this `try`; an assignment makes no call.
            budget.limit = sys.maxsize
            charged[0] = budget.count


def _run_within(
    work: Callable[[Spending | None], T], seconds: float, charged: list[int], run: Spending | None
) -> T:
    if _alarm_usable():
        with _alarm(seconds):
            return work(run)
    if "fork" in multiprocessing.get_all_start_methods():
        return _in_child(lambda: work(run), seconds, charged, run)
    from kb.equations.threadbudget import run_in_thread

    # The helper counts its stops in a Spending of its own, added to `run` here when it
    # returns or is given up: a helper that could not be stopped (a long C call) and runs
    # on cannot touch the budgets of the checks that come after it.
    own = None if run is None else Spending()
    try:
        return run_in_thread(lambda: work(own), seconds, CheckGuard, guard_message(seconds))
    finally:
        for _ in range(budgets_stopped(own)):
            note_stopped(run)


def _in_child(work: Callable[[], T], seconds: float, charged: list[int], run: Spending | None) -> T:
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)

    def target() -> None:  # the child's one thread is its main thread: the CPU guard works
        before = budgets_stopped(run)  # and the stops inside the work go back with its result
        try:
            with _alarm(seconds):
                value = work()
            sender.send(("ok", value, charged[0], budgets_stopped(run) - before))
        except BaseException as exc:  # the child reports every failure to the parent
            sender.send(("error", exc, charged[0], budgets_stopped(run) - before))

    child = context.Process(target=target, daemon=True)
    child.start()
    sender.close()
    try:
        if not receiver.poll(WALL_FACTOR * seconds):  # a child that never ends (blocked)
            raise CheckGuard(guard_message(seconds))
        status, payload, charged[0], stopped = receiver.recv()
        for _ in range(stopped):
            note_stopped(run)
    finally:
        if child.is_alive():
            child.kill()
        child.join(1)
        receiver.close()
    if status == "error":
        raise payload
    return cast(T, payload)  # what work() returned, unpickled from the child
