"""The break-even envelope: the parameter value at which candidate and reference tie.

For a chosen parameter (a link's bandwidth, a link's latency, or the batch), both
ledgers are rebuilt with that parameter as a positive SymPy symbol, and
`Ttotal_c - Ttotal_r = 0` is solved over the positive reals with `solveset` (the
ledger's max/min stay exact Max/Min). Each interconnect record's line rate is then put
in for the bandwidth (and each stated link latency for the latency) to say on which
side of the tie it falls. SymPy is imported here
only, so rules and `kb explain` never pay for it.

A link's bandwidth is one port's, in every place: what the interconnect records state, and
what a reader choosing a network card compares. A TP ring over every NIC of a node
(`cross_node_rails`, kb.ledger.rails) is priced at min(c_r*x, W_intra) for a port rate x
(kb.ledger.ledger `transfer_cost`), so the tie, the rate "the placement uses" and each
record's side are all per port, with the ring's c_r ports (`BreakEven.rings`).
tests/ledger/test_breakeven_rails.py prices the ledger at the tie and finds it.

Placing a figure does not recompute both ledgers for every interconnect. The
difference is continuous in the parameter for positive values (the ledger is sums,
products, quotients by the parameter, max and min: the very code that builds the
symbolic difference, which could not branch on a symbol), so between two ties its
sign cannot change. When the ties are known (`tie`, with every solution rational, or
`no tie`), the first figure in each interval between them is computed exactly and
decides the rest of that interval; a figure equal to a tie is a tie. Otherwise every
figure is computed. tests/ledger/test_breakeven_sides.py holds both to computing each.
The figures are read from the interconnect records, and sorted, once (`Figures`: a
run keeps them, kb.ledger.analysis), not once per break-even.

Most differences are `c + k*x` or `c + k/x` with rational c and k (one transfer on the
varied link, no max or min left): their one positive root, if any, is `-c/k` (or its
reciprocal), solved exactly without `solveset` (`_solve_simple`); any other shape goes
to SymPy. A piecewise-linear difference (the non-matmul kernel curve in a batch break-even:
a Piecewise of lines inside a Max) is solved exactly between its break points
(kb.ledger.piecewise_solve). tests/ledger/test_breakeven_solve.py and
tests/ledger/test_piecewise_solve.py hold each to SymPy's answer.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from kb.kinds.interconnect import Interconnect
from kb.ledger.inputs import Envelope, OptionSpec
from kb.ledger.ledger import Overrides, compute_ledger
from kb.ledger.piecewise_solve import Solved, solve_piecewise_linear
from kb.ledger.quantities import QuantityError, figure
from kb.ledger.rails import Rings
from kb.ledger.transfers import line_rate

SOLVE_STEPS = 6_000_000  # steps (kb.equations.work): two check budgets


@dataclass(frozen=True)
class Placed:
    """Where one interconnect record's figure (line rate or latency) falls relative to the tie."""

    interconnect: str
    value: Fraction  # B/s for the bandwidth parameter, s for latency
    side: str  # candidate faster | reference faster | tie


@dataclass(frozen=True)
class Placeable:
    """One parameter's figures in record order, and their order by value (sorted once).

    `ordered` holds the distinct values ascending; `rank[i]` is the index of
    `figures[i]`'s value in it, so a tie is placed among the figures by one bisection.
    `each[side]` holds every figure placed on that side, made once and shared by
    every break-even that places these figures.
    """

    figures: tuple[tuple[str, Fraction], ...] = ()
    ordered: tuple[Fraction, ...] = ()
    rank: tuple[int, ...] = ()
    each: Mapping[str, tuple[Placed, ...]] = field(default_factory=dict)


SIDES = ("candidate faster", "tie", "reference faster")


def placeable(figures: Iterable[tuple[str, Fraction]]) -> Placeable:
    """Sort `figures` (interconnect id, value) by value once, for `placed`."""
    listed = tuple(figures)
    ordered = tuple(sorted({value for _, value in listed}))
    where = {value: index for index, value in enumerate(ordered)}
    each = {side: tuple(Placed(name, value, side) for name, value in listed) for side in SIDES}
    return Placeable(listed, ordered, tuple(where[value] for _, value in listed), each)


@dataclass(frozen=True)
class Figures:
    """What a break-even places: every interconnect's line rate, and its stated latency."""

    bandwidth: Placeable = field(default_factory=Placeable)
    latency: Placeable = field(default_factory=Placeable)

    def of(self, parameter: str) -> Placeable:
        """The figures of `parameter` (none for the batch)."""
        if parameter == "bandwidth":
            return self.bandwidth
        return self.latency if parameter == "latency" else Placeable()


def figures_of(interconnects: Iterable[Interconnect]) -> Figures:
    """Read each interconnect's line rate and latency once (`_figures`), sorted for `placed`."""
    links = list(interconnects)
    return Figures(placeable(_figures("bandwidth", links)), placeable(_figures("latency", links)))


@dataclass(frozen=True)
class BreakEven:
    candidate: str
    parameter: str  # bandwidth | latency | batch
    link: str  # the link whose parameter varies ('' for batch)
    current: Fraction
    status: str  # tie | no tie | tie over a range | unverified
    values: tuple[Fraction, ...] = ()
    detail: str = ""
    sides: tuple[Placed, ...] = field(default=())
    rings: Rings | None = None  # bandwidth of a ring over c_r NICs a node: x is one port's


def _overrides(parameter: str, link: str, value: Any) -> Overrides:
    if parameter == "batch":
        return Overrides(batch=value)
    if parameter == "bandwidth":
        return Overrides(bandwidth={link: value})
    return Overrides(latency={link: value})


def difference(
    envelope: Envelope, ref: OptionSpec, cand: OptionSpec, parameter: str, link: str, value: Any
) -> Any:
    """Ttotal_candidate - Ttotal_reference with `parameter` set to `value`."""
    over = _overrides(parameter, link, value)
    return compute_ledger(envelope, cand, over).total - compute_ledger(envelope, ref, over).total


def _side(delta: Any) -> str:
    if delta == 0:
        return "tie"
    return "candidate faster" if delta < 0 else "reference faster"


def _to_fraction(value: Any) -> Fraction:
    import sympy

    rational = sympy.nsimplify(value) if not isinstance(value, sympy.Rational) else value
    return Fraction(int(rational.p), int(rational.q))


def _solve(expr: Any, symbol: Any) -> Solved:
    """Solve `expr = 0` for positive `symbol`: exactly when it is simple, else by SymPy."""
    simple = _solve_simple(expr, symbol)
    if simple is None:
        simple = solve_piecewise_linear(expr, symbol)
    return simple if simple is not None else _solve_sympy(expr, symbol)


def _solve_simple(expr: Any, symbol: Any) -> Solved | None:
    """`c + k*x = 0` or `c + k/x = 0` (rational c, k != 0) over x > 0; None for any other shape.

    x = -c/k (or k/-c for `k/x`) when that is positive; no positive root otherwise
    (c = 0 included: k*x and k/x are never zero for x > 0).
    """
    const, term = expr.as_coeff_Add()
    coeff, power = term.as_coeff_Mul()
    if not (const.is_Rational and coeff.is_Rational) or coeff == 0:
        return None
    if power == symbol:
        inverse = False
    elif power == 1 / symbol:
        inverse = True
    else:
        return None
    if const == 0 or (const > 0) == (coeff > 0):
        return "no tie", (), ""
    root = Fraction(int(const.p), int(const.q)) / Fraction(int(coeff.p), int(coeff.q))
    return "tie", (1 / -root if inverse else -root,), ""


# Memo of `_solve_sympy`: SymPy's answer is a pure function of (expr, symbol), and the same
# placement's break-evens are solved again by every caller that prices it (kb ledger, the
# site's pages, the explorer). Only answers are kept, never "unverified" (a spent budget or
# the wall-clock guard says nothing about the expression); bounded, cleared when full.
_SOLVED: dict[tuple[Any, Any], Solved] = {}
KEPT_SOLVES = 1024


def _solve_sympy(expr: Any, symbol: Any) -> Solved:
    """`_solve_fresh`, memoised (`_SOLVED`): the same answer, SymPy asked once per expression."""
    key = (expr, symbol)
    found = _SOLVED.get(key)
    if found is None:
        found = _solve_fresh(expr, symbol)
        if found[0] != "unverified":
            if len(_SOLVED) >= KEPT_SOLVES:
                _SOLVED.clear()
            _SOLVED[key] = found
    return found


def _solve_fresh(expr: Any, symbol: Any) -> Solved:
    """Solve `expr = 0` for positive `symbol` within a budget of steps; never hangs or raises."""
    import sympy

    from kb.equations.timeout import CheckGuard, CheckTimeout, run_with_budget

    domain = sympy.Interval.open(0, sympy.oo)
    try:
        solution = run_with_budget(lambda: sympy.solveset(expr, symbol, domain=domain), SOLVE_STEPS)
    except CheckGuard as exc:
        return "unverified", (), str(exc)
    except CheckTimeout:
        return "unverified", (), f"no solution within the budget of {SOLVE_STEPS:,} steps"
    except (ValueError, TypeError, NotImplementedError) as exc:
        return "unverified", (), f"SymPy could not solve it ({type(exc).__name__})"
    if solution is sympy.S.EmptySet:
        return "no tie", (), ""
    if isinstance(solution, sympy.FiniteSet) and all(v.is_Rational for v in solution):
        return "tie", tuple(sorted(_to_fraction(v) for v in solution)), ""
    if isinstance(solution, (sympy.Interval, sympy.Union)):
        return "tie over a range", (), str(solution)
    return "unverified", (), f"SymPy returned {solution}"


def _current(
    envelope: Envelope, cand: OptionSpec, parameter: str, link: str
) -> tuple[Fraction, Rings | None]:
    """The value the candidate prices `parameter` at (a port's rate for a ring over rails)."""
    if parameter == "batch":
        return envelope.batch, None
    on_link = [t for t in cand.transfers if t.link == link]
    if parameter == "latency":
        on_link = [t for t in on_link if not t.receipts] or on_link
        return on_link[0].latency.value, None
    rings = next((t.rings for t in on_link if t.rings is not None), None)
    return (on_link[0].bandwidth.value, None) if rings is None else (rings.port, rings)


def _figures(parameter: str, interconnects: Iterable[Interconnect]) -> list[tuple[str, Fraction]]:
    """Each interconnect's line rate (bandwidth) or stated latency (latency)."""
    out = []
    for link in interconnects:
        if parameter == "bandwidth":
            found = line_rate(link)
        elif parameter == "latency" and link.latency is not None:
            try:
                found = figure(link.latency, link.id)
            except QuantityError:
                found = None
        else:
            found = None
        wanted = "B/s" if parameter == "bandwidth" else "s"
        if found is not None and found.dim == wanted and found.value > 0:
            out.append((link.id, found.value))
    return out


def break_even(
    envelope: Envelope,
    ref: OptionSpec,
    cand: OptionSpec,
    parameter: str,
    link: str,
    figures: Figures | None = None,
) -> BreakEven:
    """Solve for the tie in `parameter`; place every interconnect's figure (`figures_of`)."""
    import sympy

    symbol = sympy.Symbol("x", positive=True)
    expr = difference(envelope, ref, cand, parameter, link, symbol)
    status, values, detail = _solve(expr, symbol)
    current, rings = _current(envelope, cand, parameter, link)
    if status == "no tie":
        side = _side(difference(envelope, ref, cand, parameter, link, current))
        detail = f"{side} for every positive value"

    def side_at(value: Fraction) -> str:
        return _side(difference(envelope, ref, cand, parameter, link, value))

    ties = values if status in ("tie", "no tie") else None
    sides = placed((figures or Figures()).of(parameter), side_at, ties)
    return BreakEven(cand.name, parameter, link, current, status, values, detail, sides, rings)


def placed(
    figures: Placeable,
    side_at: Callable[[Fraction], str],
    ties: tuple[Fraction, ...] | None,
) -> tuple[Placed, ...]:
    """Each figure's side of the tie: `side_at` once per interval between `ties` (sorted).

    `ties` None: the tie points are not known, and `side_at` decides every figure.
    Otherwise each figure's interval (or its equality with a tie) comes from its rank
    among the sorted values (`Placeable`), compared with each tie's rank, and the
    first figure of each interval, in record order, calls `side_at`.
    """
    if ties is None:
        return tuple(Placed(name, value, side_at(value)) for name, value in figures.figures)
    ordered = figures.ordered
    # a value of rank r lies above tie t iff bisect_right(ordered, t) <= r
    above = [bisect.bisect_right(ordered, tie) for tie in ties]
    equal = {at - 1 for at, tie in zip(above, ties, strict=True) if at and ordered[at - 1] == tie}
    intervals = [_TIE if r in equal else bisect.bisect_right(above, r) for r in figures.rank]
    side_of = {_TIE: "tie"}
    for interval in sorted(set(intervals) - {_TIE}, key=intervals.index):
        side_of[interval] = side_at(figures.figures[intervals.index(interval)][1])
    each = figures.each
    if not each.keys() >= set(side_of.values()):  # a side the shared objects lack
        return tuple(
            Placed(name, value, side_of[interval])
            for (name, value), interval in zip(figures.figures, intervals, strict=True)
        )
    return tuple(each[side_of[interval]][i] for i, interval in enumerate(intervals))


_TIE = -1  # the interval of a figure equal to a tie


def parameters_of(cand: OptionSpec) -> list[tuple[str, str]]:
    """List the (parameter, link) pairs worth solving for: each candidate link, then batch.

    Latency is a parameter only for links the candidate prices by estimate: a measured
    transfer's latency is inside its receipt, so varying it would change nothing.
    """
    pairs: list[tuple[str, str]] = []
    for link in sorted({t.link for t in cand.transfers}):
        pairs.append(("bandwidth", link))
        if any(t.link == link and not t.receipts for t in cand.transfers):
            pairs.append(("latency", link))
    if any(t.scales_with_batch for t in cand.transfers):
        pairs.append(("batch", ""))
    return pairs
