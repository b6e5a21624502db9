"""The break-even envelope: the parameter value at which candidate and reference tie.

For a chosen parameter (a link's bandwidth, a link's latency, or the batch), both
ledgers are rebuilt with that parameter as a positive SymPy symbol, and
`Ttotal_c - Ttotal_r = 0` is solved over the positive reals with `solveset` (the
ledger's max/min stay exact Max/Min). Each interconnect record's line rate is then put
in for the bandwidth (and each stated link latency for the latency) to say on which
side of the tie it falls. SymPy is imported here
only, so rules and `kb explain` never pay for it.

Placing a figure does not recompute both ledgers for every interconnect. The
difference is continuous in the parameter for positive values (the ledger is sums,
products, quotients by the parameter, max and min: the very code that builds the
symbolic difference, which could not branch on a symbol), so between two ties its
sign cannot change. When the ties are known (`tie`, with every solution rational, or
`no tie`), the first figure in each interval between them is computed exactly and
decides the rest of that interval; a figure equal to a tie is a tie. Otherwise every
figure is computed. tests/ledger/test_breakeven_sides.py holds both to computing each.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from kb.kinds.interconnect import Interconnect
from kb.ledger.inputs import Envelope, OptionSpec
from kb.ledger.ledger import Overrides, compute_ledger
from kb.ledger.quantities import QuantityError, figure
from kb.ledger.transfers import line_rate

SOLVE_BUDGET_S = 5.0


@dataclass(frozen=True)
class Placed:
    """Where one interconnect record's figure (line rate or latency) falls relative to the tie."""

    interconnect: str
    value: Fraction  # B/s for the bandwidth parameter, s for latency
    side: str  # candidate faster | reference faster | tie


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


def _solve(expr: Any, symbol: Any) -> tuple[str, tuple[Fraction, ...], str]:
    """Solve `expr = 0` for positive `symbol` within a time budget; never hangs or raises."""
    import sympy

    from kb.equations.timeout import CheckTimeout, run_with_budget

    domain = sympy.Interval.open(0, sympy.oo)
    try:
        solution = run_with_budget(
            lambda: sympy.solveset(expr, symbol, domain=domain), SOLVE_BUDGET_S
        )
    except CheckTimeout:
        return "unverified", (), f"no solution within the {SOLVE_BUDGET_S:g} s budget"
    except (ValueError, TypeError, NotImplementedError) as exc:
        return "unverified", (), f"SymPy could not solve it ({type(exc).__name__})"
    if solution is sympy.S.EmptySet:
        return "no tie", (), ""
    if isinstance(solution, sympy.FiniteSet) and all(v.is_Rational for v in solution):
        return "tie", tuple(sorted(_to_fraction(v) for v in solution)), ""
    if isinstance(solution, (sympy.Interval, sympy.Union)):
        return "tie over a range", (), str(solution)
    return "unverified", (), f"SymPy returned {solution}"


def _current(envelope: Envelope, cand: OptionSpec, parameter: str, link: str) -> Fraction:
    if parameter == "batch":
        return envelope.batch
    on_link = [t for t in cand.transfers if t.link == link]
    if parameter == "latency":
        on_link = [t for t in on_link if not t.receipts] or on_link
    return on_link[0].bandwidth.value if parameter == "bandwidth" else on_link[0].latency.value


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
    interconnects: Iterable[Interconnect] = (),
) -> BreakEven:
    """Solve for the tie in `parameter`; for bandwidth, place every interconnect record."""
    import sympy

    symbol = sympy.Symbol("x", positive=True)
    expr = difference(envelope, ref, cand, parameter, link, symbol)
    status, values, detail = _solve(expr, symbol)
    current = _current(envelope, cand, parameter, link)
    if status == "no tie":
        side = _side(difference(envelope, ref, cand, parameter, link, current))
        detail = f"{side} for every positive value"

    def side_at(value: Fraction) -> str:
        return _side(difference(envelope, ref, cand, parameter, link, value))

    ties = values if status in ("tie", "no tie") else None
    sides = placed(_figures(parameter, interconnects), side_at, ties)
    return BreakEven(cand.name, parameter, link, current, status, values, detail, sides)


def placed(
    figures: Iterable[tuple[str, Fraction]],
    side_at: Callable[[Fraction], str],
    ties: tuple[Fraction, ...] | None,
) -> tuple[Placed, ...]:
    """Each figure's side of the tie: `side_at` once per interval between `ties` (sorted).

    `ties` None: the tie points are not known, and `side_at` decides every figure.
    """
    by_interval: dict[int, str] = {}
    out = []
    for record_id, value in figures:
        if ties is None:
            side = side_at(value)
        elif value in ties:
            side = "tie"
        else:
            interval = bisect.bisect(ties, value)
            if interval not in by_interval:
                by_interval[interval] = side_at(value)
            side = by_interval[interval]
        out.append(Placed(record_id, value, side))
    return tuple(out)


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
