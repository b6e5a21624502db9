"""Effects that replace a term of an equation: solve before and after, compare.

"Reduce-scatter + all-gather halves the payload (2*s instead of 4*s) and
therefore halves B*" is a statement about an equation, not a closed form: the
term `4*B*d` of the crossover becomes `2*B*d`. `solution_ratio` applies the
replacements to both sides, solves the original and the changed equation for
the variable (each must have exactly one solution) and returns new/old.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp

from kb.equations.expr import ParsedEquation


class RewriteError(ValueError):
    """A replacement that does not apply, or an equation that does not solve uniquely."""


def replace_terms(expr: sp.Expr, pairs: Sequence[tuple[sp.Expr, sp.Expr]]) -> sp.Expr:
    """Apply each `old -> new` replacement; every one must change something."""
    for old, new in pairs:
        changed = expr.subs(old, new)
        if changed == expr:
            raise RewriteError(f"the term {old} does not occur in {expr}")
        expr = changed
    return expr


def unique_solution(residual: sp.Expr, var: sp.Symbol) -> sp.Expr:
    """Return the one solution of residual = 0 for `var`."""
    solutions = sp.solve(residual, var)
    if len(solutions) != 1:
        raise RewriteError(f"expected one solution for {var}, found {len(solutions)}")
    return solutions[0]


def solution_ratio(
    equation: ParsedEquation, pairs: Sequence[tuple[sp.Expr, sp.Expr]], var: sp.Symbol
) -> tuple[sp.Expr, sp.Expr, sp.Expr]:
    """Return (old solution, new solution, new/old) after replacing terms of `equation`."""
    residual = equation.residual
    try:
        changed = replace_terms(equation.lhs.value, pairs) - equation.rhs.value
    except RewriteError:
        changed = equation.lhs.value - replace_terms(equation.rhs.value, pairs)
    before = unique_solution(residual, var)
    after = unique_solution(changed, var)
    return before, after, sp.cancel(sp.together(after / before))
