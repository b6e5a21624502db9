"""A budget counted in work, not seconds: the same check gets the same verdict at any load.

A symbolic check's work is the number of Python function calls it makes (SymPy is
pure Python, so every step of simplify, cancel or solveset is a call). A trace
function (`sys.settrace`, the 'call' event only: no line events) counts them in
the thread that runs the check and stops the work at its limit by raising
`OutOfWork` at the next call. The count of a check is a property of its input,
not of the machine or its load: a busy runner takes longer to make the same
calls, it does not make fewer.

What the count depends on besides the input, and what kb does about it:

- SymPy's cache (a call answered from it is one call, not the whole computation):
  `counting(..., fresh=True)`, used for every outermost budget, clears it first, so
  a check's count does not depend on what was checked before it in the process
  (an incremental run checks fewer records than a full one, in another order).
- SymPy's random generators (its assumptions try the facts left to deduce in a
  shuffled order; some numeric tests draw random points), seeded from the OS at
  import: the same fresh budget seeds them (`SYMPY_SEED`) first.
- Python's string hash seed, random per process: the order in which SymPy walks
  a set of symbols can change a count slightly (0.3 % measured on a 1.5 M-call
  simplify across seeds). A check within that margin of its limit may land on
  either side in two processes; docs/guarantees.md states it.
- A loop that makes no Python call makes no 'call' event: in SymPy's few such loops
  that can run long on an accepted input (`CALL_FREE_LOOPS`: the multinomial
  coefficients a power of a sum expands through) every line is a step as well.
- kb's own work inside a check that its input bounds (parsing an expression the check
  reads, finding the definitions on a cycle) is left out of the count (`uncounted`):
  it is bounded as the parse of every equation, which runs outside any budget, and
  untraced it costs some 2.5 times less.
- Work outside Python calls (one huge C-level integer product) is not counted:
  kb refuses the inputs that make one (literals past 1e±300, powers past 64,
  kb.equations.expr), and a generous wall-clock guard (kb.equations.timeout)
  stops anything else with its own finding (EQ027), distinct from EQ014.

Budgets nest: an inner budget ends no later than the enclosing one, and the
enclosing one is charged the inner one's calls. `OutOfWork` is a BaseException,
so a library's `except Exception` cannot swallow it; CPython removes a trace
function that raised, so after the stop the work runs uncounted until it unwinds
to `counting`, which puts the enclosing budget's counter back.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from kb.run import Spending


T = TypeVar("T")


class OutOfWork(BaseException):
    """Raised at a check's next call once its work budget is spent (caught by kb.timeout)."""


class _Budget:
    """One open budget of this thread: its count, the count at which it stops, its run.

    `run`: the Spending of the run the check belongs to (kb.run; None outside a run),
    given by whoever opened the outermost budget and inherited by the budgets inside it,
    so a nested check counts its stops where the check that holds it does.
    """

    __slots__ = ("count", "limit", "run")

    def __init__(self, limit: int, run: Spending | None = None) -> None:
        self.count = 0
        self.limit = limit
        self.run = run


class _Local(threading.local):
    def __init__(self) -> None:
        self.stack: list[_Budget] = []


_LOCAL = _Local()


# SymPy functions whose work is one loop making no Python call (so no 'call' event while it
# runs): `(a + b + c + d + f)**60` expands through multinomial_coefficients(5, 60), 635,376
# coefficients and ~2 CPU-s in one frame. In these frames every line counts as a step too.
CALL_FREE_LOOPS = frozenset(
    {"multinomial_coefficients", "binomial_coefficients", "binomial_coefficients_list"}
)
_SYMPY_NTHEORY = f"{os.sep}sympy{os.sep}ntheory{os.sep}"
SYMPY_SEED = 0  # SymPy's random generators at the start of every outermost budget


def _tracer(budget: _Budget) -> Any:
    def lines(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line":
            budget.count += 1
            if budget.count > budget.limit:
                budget.count = budget.limit  # the line it stops at is not run
                raise OutOfWork
        return lines

    def trace(frame: FrameType, event: str, arg: Any) -> Any:
        budget.count += 1
        if budget.count > budget.limit:
            budget.count = budget.limit  # the call it stops at is not made
            raise OutOfWork
        code = frame.f_code
        if code.co_name in CALL_FREE_LOOPS and _SYMPY_NTHEORY in code.co_filename:
            return lines  # a call-free loop: its lines are counted
        # No trace function in the new frame, so its lines are never counted; with its
        # lines switched off CPython does not even look for a line's trace function on
        # each new line (3.6 % of a cold `kb validate`'s CPU). The count is unchanged.
        frame.f_trace_lines = False
        return None  # only calls are counted

    return trace


@contextmanager
def counting(units: int, fresh: bool = False, run: Spending | None = None) -> Iterator[_Budget]:
    """Count the calls made in this block; OutOfWork at the call past `units`.

    The budget ends no later than the enclosing one, and belongs to its run (`run`
    for an outermost budget). `fresh` clears SymPy's cache first (outermost budgets:
    see the module).
    """
    stack = _LOCAL.stack
    outer = stack[-1] if stack else None
    limit = units if outer is None else min(units, max(outer.limit - outer.count, 0))
    if fresh:
        _fresh_sympy()
    budget = _Budget(limit, run if outer is None else outer.run)
    previous, tracer = sys.gettrace(), _tracer(budget)
    stack.append(budget)
    hook = sys.unraisablehook
    if outer is None:
        sys.unraisablehook = _rearming(hook)
    sys.settrace(tracer)
    try:
        yield budget
    finally:
        sys.settrace(previous)
        stack.pop()
        if outer is None:
            sys.unraisablehook = hook
        else:
            outer.count += budget.count


def uncounted(work: Callable[[], T]) -> T:
    """work(), neither counted nor traced by this thread's open budget (if any).

    Only for kb's own work that is bounded whatever the input: the parse of an
    expression a check reads from its record (kb.equations.expr bounds its length,
    syntax nodes, depth, literals and powers; the parse of every equation runs outside
    any budget for that reason, in System.build_system). Under the trace function a
    call costs some 2.5 times its untraced cost, and the parse of a claim's `expr` was
    counted in its check. Nothing else changes: the work runs where it ran, on the
    same SymPy cache, and the calls before and after it are counted as they were.
    """
    if not _LOCAL.stack:
        return work()  # no budget: any other trace function (a debugger's) is left alone
    tracer = sys.gettrace()
    sys.settrace(None)
    try:
        return work()
    finally:
        sys.settrace(tracer)


def _fresh_sympy() -> None:
    """Clear SymPy's cache and seed SymPy's random generators (the module docstring).

    SymPy's assumption system tries the facts left to deduce in an order its own
    generator shuffles, and some numeric tests draw random points; both generators are
    seeded from the OS at import, so the same query made a different number of calls in
    another process. `sympy.core.random.seed` seeds both: every outermost budget starts
    from the same draws.
    """
    from sympy.core.cache import clear_cache
    from sympy.core.random import seed

    clear_cache()
    seed(SYMPY_SEED)


def _rearming(hook: Any) -> Any:
    """An unraisable hook that puts a swallowed stop back.

    The stop can land in a call Python cannot raise from (a weakref callback, a
    `__del__` run by the collector mid-check): Python reports it as "unraisable"
    and, since the trace function raised, removes it. This hook says nothing of
    that stop and traces this thread's innermost budget again, so the next call of
    the check raises it where it can propagate.
    """

    def rearm(unraisable: Any) -> None:
        stack = _LOCAL.stack
        if isinstance(unraisable.exc_value, OutOfWork) and stack:
            sys.settrace(_tracer(stack[-1]))
            return
        hook(unraisable)

    return rearm


def spent_here() -> int | None:
    """The calls counted so far by this thread's innermost open budget (None outside any)."""
    stack = _LOCAL.stack
    return stack[-1].count if stack else None


def run_here() -> Spending | None:
    """The run this thread's innermost open budget belongs to (None outside any, or a run)."""
    stack = _LOCAL.stack
    return stack[-1].run if stack else None
