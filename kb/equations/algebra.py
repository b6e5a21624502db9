"""Deciding identities cheaply and honestly: cancel first, simplify later, numbers last.

`cancel(together(e)) == 0` decides rational functions in well under a
millisecond; only expressions with max/min/log/sqrt go on to `simplify` (under
the check's budget of steps) and then to exact evaluation at seeded random points, which can
refute (a counterexample) but never prove.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import sympy as sp

from kb.equations.timeout import CheckGuard, CheckTimeout, run_with_budget
from kb.equations.work import uncounted
from kb.run import Spending

ZERO, NONZERO, UNKNOWN = "zero", "nonzero", "unknown"


@dataclass(frozen=True)
class ZeroVerdict:
    """Whether an expression is identically zero, with the evidence."""

    outcome: str
    residual: sp.Expr
    counterexample: dict[str, str] | None = None
    timed_out: bool = False

    def describe(self) -> str:
        if self.outcome == ZERO:
            return "identically zero"
        if self.counterexample:
            at = ", ".join(f"{k}={v}" for k, v in self.counterexample.items())
            return f"residual {short(self.residual)} is not zero (at {at})"
        if self.timed_out:
            return "timed out before deciding"
        return f"residual {short(self.residual)} could not be decided"


def short(expr: sp.Expr, limit: int = 160) -> str:
    """Render an expression on one bounded line for messages."""
    from kb.equations.expr import to_text

    text = to_text(expr)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def is_rational_function(expr: sp.Expr) -> bool:
    """Sums, products and integer powers of symbols and numbers only.

    Min and Max are no `sp.Function`: they used to pass, and a residual such as
    Min(B, Max(1, 2)) - Min(2, B) was declared nonzero without a witness.
    """
    return all(
        isinstance(a, (sp.Add, sp.Mul, sp.Symbol, sp.Number))
        or (isinstance(a, sp.Pow) and a.exp.is_Integer)
        for a in sp.preorder_traversal(expr)
    )


def decide_zero(expr: sp.Expr, run: Spending | None = None) -> ZeroVerdict:
    """Decide whether `expr` is identically zero for positive values of its symbols.

    Inside a check it spends from that check's budget; outside, from `run` (what its
    run has spent, kb.equations.timeout; None, its own budget only).
    """
    residual = sp.cancel(sp.together(expr))
    if residual == 0:
        return ZeroVerdict(ZERO, residual)
    if is_rational_function(residual):
        return ZeroVerdict(NONZERO, residual, sample_nonzero(residual))
    try:
        simpler = run_with_budget(lambda: sp.simplify(residual), run=run)
    except CheckGuard:  # the wall-clock guard: the enclosing check reports it (EQ027)
        raise
    except CheckTimeout:
        simpler = residual
        timed_out = True
    else:
        timed_out = False
    if simpler == 0:
        return ZeroVerdict(ZERO, simpler)
    witness = sample_nonzero(simpler)
    if witness:
        return ZeroVerdict(NONZERO, simpler, witness, timed_out)
    return ZeroVerdict(UNKNOWN, simpler, None, timed_out)


def sample_points(
    symbols: Iterable[sp.Symbol], count: int = 5, seed: int = 0
) -> Iterator[dict[sp.Symbol, Any]]:
    """Seeded, exact positive rational points (deterministic across runs)."""
    rng = random.Random(seed)
    ordered = sorted(symbols, key=lambda s: s.name)
    for _ in range(count):
        yield {s: sp.Rational(rng.randint(1, 10**6), rng.randint(1, 10**3)) for s in ordered}


def sample_nonzero(expr: sp.Expr) -> dict[str, str] | None:
    """Find a point where `expr` is clearly nonzero; None if it vanishes at every sample."""
    for point in sample_points(expr.free_symbols):
        value = sp.N(expr.xreplace(point), 30)
        if value.is_number and value.is_finite is not False and abs(value) > 1e-20:
            return {s.name: str(v) for s, v in point.items()}
    return None


def ratio_constant(numerator: sp.Expr, denominator: sp.Expr) -> sp.Expr | None:
    """numerator/denominator when it is a nonzero number, else None."""
    if denominator == 0:
        return None
    ratio = sp.cancel(sp.together(numerator / denominator))
    return ratio if ratio.is_number and ratio != 0 else None


def expand_definitions(
    expr: sp.Expr, definitions: dict[sp.Symbol, sp.Expr], keep: Iterable[sp.Symbol] = ()
) -> sp.Expr:
    """Replace defined symbols by their definitions, transitively, to a fixed point.

    A symbol on a cycle of definitions (`a = f(b)` and `b = g(a)`: one equation and its
    inverse) is not expanded: substituting around the cycle never ends, and stopping
    after some rounds would leave an expression that mixes a symbol with its own
    definition. It stays a free symbol, an input, as a kept one does.
    """
    kept = set(keep)
    active = {s: e for s, e in definitions.items() if s not in kept}
    active = uncounted(lambda: _acyclic(active))  # bookkeeping on the definitions' symbols
    for _ in range(len(active) + 1):  # an acyclic chain is at most len(active) deep
        replaced = expr.xreplace(active)
        if replaced == expr:
            return expr
        expr = replaced
    return expr


def _acyclic(definitions: dict[sp.Symbol, sp.Expr]) -> dict[sp.Symbol, sp.Expr]:
    """The definitions whose symbol is on no cycle of them.

    A walk of the graph of which definition names which symbol, each definition's
    symbols read once: bounded by the definitions' size, so it is not counted in a
    check's budget (kb.equations.work.uncounted); it was 5 % of a cold run's steps.
    """
    uses = {symbol: value.free_symbols for symbol, value in definitions.items()}
    return {s: e for s, e in definitions.items() if not _on_cycle(s, uses)}


def _on_cycle(start: sp.Symbol, uses: dict[sp.Symbol, set[sp.Basic]]) -> bool:
    """Whether `start` is reached again by following the definitions' symbols from it."""
    stack = list(uses[start])
    seen: set[sp.Basic] = set()
    while stack:
        symbol = stack.pop()
        if symbol == start:
            return True
        if symbol in seen or symbol not in uses:
            continue
        seen.add(symbol)
        stack.extend(uses[symbol])
    return False


def rational_value(value: sp.Expr) -> sp.Rational:
    """Return `value` exactly if rational, else its 40-digit decimal as a rational."""
    if value.is_Rational:
        return value
    return sp.Rational(str(sp.N(value, 40)))


def number_text(value: sp.Expr, digits: int = 8) -> str:
    """Show a number as `3318.4478 (exact 222336/67)`."""
    if value.is_Integer:
        return str(value)
    if value.is_Rational:
        return _rational_text(value, digits)
    return str(sp.N(value, digits))


@functools.lru_cache(maxsize=4096)
def _rational_text(value: sp.Rational, digits: int) -> str:
    """number_text of a rational, kept: the same inputs recur in every evaluation's trail."""
    return f"{sp.N(value, digits)} (exact {value})"
