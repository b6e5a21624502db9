"""The step budget bounds SymPy's call-free loops too (kb/equations/work.py).

`(a + b + c + d + f)**60` expands through `multinomial_coefficients(5, 60)`: 635,376
coefficients made in one Python loop with no Python call in it, so a budget counting
calls alone saw a handful of steps there and only the CPU guard (EQ029) bounded the
~2 CPU-s it takes. Such a loop's lines count as steps, so a small budget stops it.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Iterator
from types import FrameType

import pytest
from sympy.ntheory.multinomial import multinomial_coefficients

from kb.equations.expr import parse_expression
from kb.equations.timeout import CheckTimeout, run_with_budget
from kb.equations.work import OutOfWork, counting, uncounted


def test_a_call_free_loop_is_stopped_by_a_small_budget() -> None:
    with pytest.raises(OutOfWork), counting(20_000, fresh=True):
        multinomial_coefficients(5, 60)  # ~10 lines for each of its 635,376 coefficients


def test_a_call_free_loop_counts_a_step_per_line() -> None:
    with counting(10**9, fresh=True) as budget:
        coefficients = multinomial_coefficients(4, 12)
    assert len(coefficients) == 455  # C(15, 3) tuples, each made by several lines
    assert budget.count > 4 * len(coefficients), budget.count


def test_the_sixtieth_power_of_a_sum_is_stopped_inside_its_expansion() -> None:
    """The EQ029 rule case's expression under a budget that runs out within the expansion's
    loop: the stop lands in that loop (before, only after it, the loop's 2 CPU-s spent)."""
    from kb.equations.algebra import decide_zero

    text = "(a + b + c + d + f)**60 - (a + b + c + d + g)**60"
    expr = parse_expression(text, allow_undeclared=True).value
    with pytest.raises(OutOfWork) as stopped, counting(50_000, fresh=True) as budget:
        decide_zero(expr)
    frames = [frame.name for frame in traceback.extract_tb(stopped.value.__traceback__)]
    assert "multinomial_coefficients" in frames, frames
    assert budget.count == 50_000
    with pytest.raises(CheckTimeout, match="budget of 50,000 steps"):  # EQ014, as a check
        run_with_budget(lambda: decide_zero(expr), 50_000)


def _one() -> int:
    return 1


def _calls(count: int) -> int:
    for _ in range(count):
        abs(_one())  # a builtin makes no step: only Python calls count
    return count


def _numbers(count: int) -> Iterator[int]:
    for _ in range(count):
        yield _one()


def test_the_count_of_a_fixed_check_is_what_it_always_was() -> None:
    """What the trace function counts, pinned: a Python call is a step, a generator's start
    and each of its resumptions is one, leaving the block is two (the context manager's
    __exit__ and the resumed `counting`), and a call-free loop's lines are steps too. The
    values were taken with the trace function before it stopped CPython looking for line
    events in frames it does not trace (work.py), a change that must count the same."""
    counts = []
    for calls in (0, 1, 10):
        with counting(10**9) as budget:
            _calls(calls)
        counts.append(budget.count)
    with counting(10**9) as budget:
        sum(_numbers(5))
    counts.append(budget.count)
    with counting(10**9, fresh=True) as budget:
        multinomial_coefficients(4, 12)
    counts.append(budget.count)
    assert counts == [3, 4, 13, 13, 10_707]


def test_uncounted_work_makes_no_step_and_the_count_goes_on_after_it() -> None:
    """kb.equations.work.uncounted: bounded work inside a budget (a parse) is not counted;
    calling it is one step, and the calls after it are counted as before."""
    with counting(10**9) as budget:
        assert uncounted(lambda: _calls(10)) == 10
    assert budget.count == 3  # uncounted's own call, then leaving the block (two)
    with counting(10**9) as budget:
        uncounted(lambda: _calls(10))
        _calls(5)
    assert budget.count == 3 + 6
    with pytest.raises(OutOfWork), counting(20):  # the budget still stops after it
        uncounted(lambda: _calls(10))
        _calls(100)


def test_uncounted_outside_a_budget_leaves_another_trace_function_alone() -> None:
    def other(frame: FrameType, event: str, arg: object) -> None:
        return None

    previous = sys.gettrace()
    sys.settrace(other)
    try:
        assert uncounted(sys.gettrace) is other
    finally:
        sys.settrace(previous)
