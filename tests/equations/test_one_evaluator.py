"""One compiler: kb.equations.expr.to_tree, for the checker's plans and the site's calculators.

Held on every equation of the shipped records (as written and with definitions
expanded, as kb calc and the calculator expand them) and on random expressions:
the compiled tree is the plan builder's (planbuild.to_tree, which the plans
replay) or both refuse, and the exact tree evaluated with fractions
(exact.evaluate_tree) gives the very number SymPy's substitution gives (the
symbolic path the checker, kb calc and the ledger take).
"""

from __future__ import annotations

import os
from fractions import Fraction
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from kb.api import open_kb
from kb.equations.algebra import expand_definitions
from kb.equations.exact import Inexact, evaluate_tree
from kb.equations.expr import NotCompiled, to_tree
from kb.equations.expr import NotCompiled as NotExact  # planbuild compiles with expr.to_tree
from kb.equations.planbuild import to_tree as plan_tree
from kb.equations.system import build_system

RECORDS = Path(__file__).resolve().parents[2] / "records"


@cache
def _shipped_expressions() -> list[sp.Expr]:
    """Every shipped equation's right side, as written and expanded (built on first use, not at
    collection: collection runs on every xdist worker)."""
    kb = open_kb(RECORDS)
    found: list[sp.Expr] = []
    for record in kb.records.values():
        if not record.data.get("equations"):
            continue
        system = build_system(record.data)
        for equation in system.equations.values():
            found.append(equation.rhs.value)
            found.append(expand_definitions(equation.rhs.value, system.definitions(), []))
    return found


def _compiled(expr: sp.Expr, real: bool = False) -> tuple[str, Any]:
    try:
        return ("tree", to_tree(expr, real))
    except NotCompiled as exc:
        return ("refused", str(exc))


def _planned(expr: sp.Expr) -> tuple[str, Any]:
    try:
        return ("tree", plan_tree(expr))
    except NotExact as exc:
        return ("refused", str(exc))


def _values(expr: sp.Expr, seed: int) -> dict[str, Fraction]:
    names = sorted(s.name for s in expr.free_symbols)
    return {
        name: Fraction(3 + (i * 7 + seed) % 11, 1 + (i + seed) % 4) for i, name in enumerate(names)
    }


def _agree(expr: sp.Expr, values: dict[str, Fraction]) -> None:
    """evaluate_tree of the compiled tree is SymPy's exact value, or it defers (Inexact)."""
    tree = to_tree(expr)
    symbolic = expr.xreplace({s: sp.Rational(values[s.name]) for s in expr.free_symbols})
    try:
        exact = evaluate_tree(tree, values)
    except Inexact:  # the checker then takes the symbolic path: SymPy has no finite value
        assert not (symbolic.is_Rational and symbolic.is_finite), (expr, symbolic)
        return
    assert symbolic.is_Rational, (expr, symbolic)
    assert exact == Fraction(int(symbolic.p), int(symbolic.q)), expr


def test_the_shipped_records_have_equations_to_compare() -> None:
    shipped = _shipped_expressions()
    assert len(shipped) > 100
    assert sum(_compiled(e)[0] == "tree" for e in shipped) > 100


@pytest.mark.parametrize("real", [False, True])
def test_every_shipped_equation_compiles_as_the_plans_compile_it(real: bool) -> None:
    for expr in _shipped_expressions():
        compiled = _compiled(expr, real)
        if not real:
            assert compiled == _planned(expr), expr
        elif _planned(expr)[0] == "tree":  # the calculator's language extends the exact one
            assert compiled == _planned(expr), expr


def test_every_shipped_exact_tree_evaluates_to_sympys_value() -> None:
    checked = 0
    for expr in _shipped_expressions():
        if _compiled(expr)[0] == "tree":
            for seed in range(3):
                _agree(expr, _values(expr, seed))
            checked += 1
    assert checked > 100


NAMES = ("a", "b", "c")
_LEAVES = st.one_of(
    st.sampled_from([sp.Symbol(n, positive=True) for n in NAMES]),
    st.fractions(Fraction(-50), 50, max_denominator=50).map(sp.Rational),
)


def _built(make: Any, args: Any) -> sp.Expr | None:
    try:
        built: sp.Expr = make(*args)
    except (ValueError, TypeError):  # SymPy refuses e.g. Max(zoo, a): not a draw
        return None
    return built


def _extend(inner: st.SearchStrategy[sp.Expr]) -> st.SearchStrategy[sp.Expr]:
    pairs = st.lists(inner, min_size=2, max_size=3)
    return st.one_of(
        pairs.map(lambda a: _built(sp.Add, a)),
        pairs.map(lambda a: _built(sp.Mul, a)),
        st.tuples(inner, st.integers(-3, 3)).map(lambda a: _built(sp.Pow, a)),
        st.tuples(inner, st.sampled_from([sp.Rational(1, 2), sp.Rational(3, 2)])).map(
            lambda a: _built(sp.Pow, a)
        ),
        pairs.map(lambda a: _built(sp.Max, a)),
        pairs.map(lambda a: _built(sp.Min, a)),
        inner.map(lambda a: _built(sp.floor, [a])),
        inner.map(lambda a: _built(sp.ceiling, [a])),
        inner.map(lambda a: _built(sp.log, [a])),
        inner.map(lambda a: _built(sp.exp, [a])),
    ).filter(lambda e: e is not None)  # type: ignore[return-value]


EXPRESSIONS = st.recursive(_LEAVES, _extend, max_leaves=8)
VALUES = st.lists(
    st.fractions(min_value=Fraction(1, 100), max_value=100, max_denominator=100),
    min_size=3,
    max_size=3,
)


# Per push 60 fixed examples; a long run sets KB_FUZZ_EXAMPLES.
@settings(
    max_examples=int(os.environ.get("KB_FUZZ_EXAMPLES", "0")) or 60,
    deadline=None,
    derandomize=True,
)
@given(EXPRESSIONS, VALUES)
def test_one_compiler_and_the_exact_evaluator_agree_with_sympy(
    expr: sp.Expr, xs: list[Fraction]
) -> None:
    assert _compiled(expr) == _planned(expr)
    real = _compiled(expr, real=True)
    if _planned(expr)[0] == "tree":
        assert real == _planned(expr)
        _agree(expr, dict(zip(NAMES, xs, strict=True)))
