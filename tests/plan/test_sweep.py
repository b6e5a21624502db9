"""kb.plan.sweep: where the preferred mapping changes, the tie solved exactly or bracketed.

Two devices (layers 2): tp1, dp2, pp2, tp2. With TPOT(tp2) = 10 ms + b/1 ms and TPOT(dp2)
= 30 ms + b/2 ms the two tie where 10 + b = 30 + b/2, at b = 40 (hand-worked); with a
curved TPOT the tie is only bracketed by the sweep.
"""

from __future__ import annotations

from fractions import Fraction

from kb.plan.planner import ModelFacts, Query, plan
from kb.plan.sweep import sweep_plan
from tests.plan.fakes import pricing

MS = Fraction(1, 1000)
FACTS = ModelFacts(layers=2, experts=None)
QUERY = Query("models/m", "hardware/h", count=2, batch=8, context=100)


def linear() -> object:
    return pricing(
        {"tp2": lambda b: (10 + b) * MS, "dp2": lambda b: (30 + Fraction(b, 2)) * MS},
        too_big=("tp1", "pp2"),
    )


def test_a_straight_line_tie_is_solved_exactly() -> None:
    swept = sweep_plan(QUERY, FACTS, None, "batch", (8, 64), linear())  # type: ignore[arg-type]
    assert [p.preferred["tpot"] for p in swept.points] == [("tp2",), ("dp2",)]
    change = next(c for c in swept.changes if c.dimension == "tpot")
    assert change.break_even == 40
    assert change.how.startswith("solved: tp2 and dp2 tie at batch = 40")
    # tokens per second per device: b/(2*TPOT) on both (two devices each): the same tie
    per_device = next(c for c in swept.changes if c.dimension == "tokens_per_s_per_device")
    assert per_device.break_even == 40


def test_a_curve_is_only_bracketed() -> None:
    curved = pricing(
        {
            "tp2": lambda b: (10 + Fraction(b * b, 64)) * MS,
            "dp2": lambda b: (30 + Fraction(b, 2)) * MS,
        },
        too_big=("tp1", "pp2"),
    )
    swept = sweep_plan(QUERY, FACTS, None, "batch", (8, 64), curved)  # type: ignore[arg-type]
    change = next(c for c in swept.changes if c.dimension == "tpot")
    assert change.break_even is None
    assert change.how.startswith("bracketed by the sweep") and "straight line" in change.how


def test_a_step_dimension_is_bracketed_and_an_unchanged_one_not_listed() -> None:
    swept = sweep_plan(QUERY, FACTS, None, "batch", (8, 16), linear())  # type: ignore[arg-type]
    assert not [c for c in swept.changes if c.dimension == "tpot"]  # tp2 at both


def test_plan_orders_infeasible_first_and_marks_fronts() -> None:
    result = plan(QUERY, FACTS, None, linear())  # type: ignore[arg-type]
    assert [o.status for o in result.options] == [
        "infeasible",
        "infeasible",
        "feasible",
        "feasible",
    ]
    tp2 = next(o for o in result.options if o.name == "tp2")
    assert "tpot/tokens_per_s_system" in tp2.pareto  # 18 ms against dp2's 34 ms at batch 8
    assert result.available["energy_per_token"] is not None  # n/a, and said why
    assert result.available["tpot"] is None
