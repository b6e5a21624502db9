"""`--sweep batch=1,8,64,256` (or context=...): where the preferred mapping changes.

At each value the whole plan is priced again (kb.plan.planner.plan) and, per
dimension, the preferred option is the feasible one with the best value (every one
of a tie). Between two neighbouring values where the preferred option changes from
A to B, the tie is solved exactly where the ledger allows:

- for TTFT and TPOT the tie of the two values themselves; for the throughputs the
  tie of the time per token they invert (`batch / throughput` over a batch sweep,
  `1 / throughput` over a context sweep), which the composed ledger makes a
  straight line in the swept parameter while nothing changes regime (the weight
  read, the KV read linear in batch and context, the all-reduces interpolated
  linearly between two measured sizes);
- the straight line through the two sweep points gives the tie `x` as an exact
  Fraction; the ledger is then evaluated at the admissible whole values on each
  side of `x` (multiples of both options' dp for a batch), and the tie is `solved`
  only when all four values lie exactly on those lines and the preference flips
  between them. Otherwise (a regime change: the ridge, a curve's bracket, a
  device running out of memory; or a dimension that is a step function, such as
  the memory headroom) the change is `bracketed by the sweep` between the two
  values, and the reason is said.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from kb.plan.enumerate import Placement
from kb.plan.pareto import best
from kb.plan.planner import (
    BY_KEY,
    ModelFacts,
    Plan,
    Price,
    Query,
    default_price,
    plan,
    status_of,
    values_of,
    with_value,
)

SOLVABLE = {"ttft", "tpot", "tokens_per_s_system", "tokens_per_s_per_device"}


@dataclass(frozen=True)
class Point:
    value: int
    plan: Plan
    preferred: Mapping[str, tuple[str, ...]]  # dimension -> best options (empty: none)


@dataclass(frozen=True)
class Change:
    dimension: str
    before: tuple[str, ...]
    after: tuple[str, ...]
    between: tuple[int, int]
    break_even: Fraction | None
    how: str


@dataclass(frozen=True)
class Sweep:
    parameter: str
    points: tuple[Point, ...]
    changes: tuple[Change, ...]


def sweep_plan(
    query: Query,
    facts: ModelFacts,
    kb: Any,
    parameter: str,
    values: Sequence[int],
    price: Price | None = None,
) -> Sweep:
    """Plan at each value; say where each dimension's preferred option changes."""
    points = []
    for value in values:
        result = plan(with_value(query, parameter, value), facts, kb, price)
        feasible = {o.name: o.values for o in result.of("feasible")}
        preferred = {
            d: tuple(best(feasible, d, BY_KEY[d].better))
            for d, why in result.available.items()
            if why is None
        }
        points.append(Point(value, result, preferred))
    changes = []
    for left, right in zip(points, points[1:], strict=False):
        for dim in BY_KEY:
            before, after = left.preferred.get(dim, ()), right.preferred.get(dim, ())
            if set(before) == set(after) or not (before or after):
                continue
            changes.append(_change(query, kb, parameter, dim, left, right, before, after, price))
    return Sweep(parameter, tuple(points), tuple(changes))


def _option(point: Point, name: str) -> Any:
    return next((o for o in point.plan.options if o.name == name), None)


def tie_value(dim: str, parameter: str, p: int, value: Fraction) -> Fraction:
    """The quantity whose tie is the dimension's tie and which is linear in p (see above)."""
    if dim in ("ttft", "tpot"):
        return value
    return (Fraction(p) if parameter == "batch" else Fraction(1)) / value


def _change(
    query: Query,
    kb: Any,
    parameter: str,
    dim: str,
    left: Point,
    right: Point,
    before: tuple[str, ...],
    after: tuple[str, ...],
    price: Price | None,
) -> Change:
    span = (left.value, right.value)

    def bracketed(reason: str) -> Change:
        return Change(dim, before, after, span, None, f"bracketed by the sweep: {reason}")

    if not before or not after:
        return bracketed("no option is feasible on one side")
    if dim == "devices":
        return bracketed(
            f"a mapping's devices do not depend on the {parameter}; which mappings fit does"
        )
    if dim not in SOLVABLE:
        return bracketed(f"{BY_KEY[dim].label} is not a straight line in the {parameter}")
    a_name, b_name = before[0], after[0]
    ends = []
    for point in (left, right):
        a, b = _option(point, a_name), _option(point, b_name)
        for name, o in ((a_name, a), (b_name, b)):
            if o is None:
                return bracketed(f"{name} is not enumerated at {parameter} {point.value}")
            if o.status != "feasible":
                why = "does not fit" if o.status == "infeasible" else "is not priced"
                return bracketed(f"{name} {why} at {parameter} {point.value}")
        va, vb = a.values.get(dim), b.values.get(dim)
        if va is None or vb is None or va == 0 or vb == 0:
            return bracketed(f"{BY_KEY[dim].label} is not priced at {parameter} {point.value}")
        ends.append((a.placement, b.placement, va, vb))
    pa, pb = ends[0][0], ends[0][1]
    (x0, x1) = span
    ga = [tie_value(dim, parameter, x, e[2]) for x, e in zip(span, ends, strict=True)]
    gb = [tie_value(dim, parameter, x, e[3]) for x, e in zip(span, ends, strict=True)]
    d0, d1 = ga[0] - gb[0], ga[1] - gb[1]
    if d0 == d1 or (d0 > 0) == (d1 > 0) and d0 != 0 and d1 != 0:
        return bracketed("the two options' values do not cross on a straight line between them")
    x = x0 + d0 * (x1 - x0) / (d0 - d1)
    step = math.lcm(pa.dp, pb.dp) if parameter == "batch" else 1
    lo, hi = math.floor(x / step) * step, math.ceil(x / step) * step
    if lo < x0 or hi > x1 or lo < 1:
        return bracketed(f"no admissible {parameter} on both sides of the tie inside the sweep")

    def line(g: list[Fraction], at: int) -> Fraction:
        return g[0] + (g[1] - g[0]) * (at - x0) / (x1 - x0)

    got = {}
    for at in sorted({lo, hi}):
        priced = _values(query, kb, parameter, at, (pa, pb), price)
        if priced is None:
            return bracketed(f"the ledger cannot price both options at {parameter} {at}")
        va, vb = priced[0].get(dim), priced[1].get(dim)
        if va is None or vb is None or va == 0 or vb == 0:
            return bracketed(f"{BY_KEY[dim].label} is not priced at {parameter} {at}")
        ta, tb = tie_value(dim, parameter, at, va), tie_value(dim, parameter, at, vb)
        if ta != line(ga, at) or tb != line(gb, at):
            return bracketed(
                f"{BY_KEY[dim].label} is not a straight line in the {parameter} between "
                f"{x0} and {x1} (a regime changes: the ridge, a measured curve's bracket)"
            )
        got[at] = ta - tb
    if lo != hi and (got[lo] > 0) == (got[hi] > 0) and got[lo] != 0 and got[hi] != 0:
        return bracketed("the preference does not flip around the computed tie")
    return Change(
        dim,
        before,
        after,
        span,
        x,
        f"solved: {a_name} and {b_name} tie at {parameter} = {_text(x)}; the ledger's values "
        f"at {lo} and {hi}, the admissible values on each side of the tie, lie exactly "
        f"on the straight lines through its values at {x0} and {x1}",
    )


def _text(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{x} (~{float(x):.4g})"


def _values(
    query: Query,
    kb: Any,
    parameter: str,
    at: int,
    placements: tuple[Placement, Placement],
    price: Price | None,
) -> list[Mapping[str, Fraction | None]] | None:
    """The two options' values at one more value of the parameter (None: not both priced)."""
    moved = with_value(query, parameter, at)
    if moved.context is None and moved.input_tokens is None:
        moved = with_value(moved, "context", 1)  # as plan() prices it (NO_CONTEXT)
    try:
        outcomes = (price or default_price)([moved.scenario(p) for p in placements], kb)
    except ValueError:
        return None
    if any(status_of(o) != "feasible" for o in outcomes):
        return None
    return [values_of(p, o) for p, o in zip(placements, outcomes, strict=True)]
