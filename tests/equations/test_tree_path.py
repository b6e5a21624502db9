"""The compiled-tree path of `evaluate` and of the ledger's StepModel: SymPy's very value.

kb's one exact evaluator (kb.equations.exact over expr.to_tree) now answers where
`xreplace` answered on the planner's per-scenario paths; these tests hold the two
equal on the expressions those paths evaluate (Max of terms, powers, quotients), and
hold that a value the tree has none for (a division by zero, a huge power, a SymPy
input) still takes SymPy's path with SymPy's result.
"""

from __future__ import annotations

import random
from fractions import Fraction

import sympy as sp

from kb.equations.evalmemo import Evaluations, frozen
from kb.equations.evaluate import _substituted, compiled_tree
from kb.ledger.workload import StepModel
from kb.model import Record

t_w, t_kv, c, L, t_ar, t_o, T_math, k, E, B = sp.symbols(
    "t_w t_kv c L t_ar t_o T_math k E B", positive=True
)
ROOF = sp.Max(t_w, T_math) + t_kv + c * L * t_ar + L * t_o
FRACTION = 1 - (1 - k / E) ** B
QUOTIENT = t_w / (t_kv - t_o)


def _rational(rng: random.Random) -> sp.Rational:
    return sp.Rational(rng.randint(1, 10**12), rng.randint(1, 10**6))


def test_the_tree_gives_xreplace_s_value_on_random_exact_inputs() -> None:
    rng = random.Random(36)
    for expression in (ROOF, FRACTION, QUOTIENT):
        tree = compiled_tree(expression)
        assert tree is not None
        for _ in range(40):
            values = {s: _rational(rng) for s in expression.free_symbols}
            if expression is FRACTION:
                values[B] = sp.Integer(rng.randint(1, 300))
                values[k] = sp.Integer(rng.randint(1, 8))
                values[E] = sp.Integer(rng.randint(8, 256))
            got = _substituted(expression, tree, values)
            assert got == expression.xreplace(values) and got.is_Rational


def test_where_the_tree_has_no_value_sympy_decides() -> None:
    tree = compiled_tree(QUOTIENT)
    values = {t_w: sp.Integer(3), t_kv: sp.Integer(2), t_o: sp.Integer(2)}
    assert _substituted(QUOTIENT, tree, values) == QUOTIENT.xreplace(values) == sp.zoo
    huge = {k: sp.Integer(8), E: sp.Integer(256), B: sp.Integer(64 * 2048)}
    assert _substituted(FRACTION, compiled_tree(FRACTION), huge) == FRACTION.xreplace(huge)


def test_a_step_model_is_exact_on_the_tree_and_symbolic_with_a_symbol() -> None:
    terms = ("t_w", "t_kv", "c", "L", "t_ar", "t_o", "T_math")
    model = StepModel("flops/x", "roofline_step", "t = ...", ROOF, terms)
    rng = random.Random(7)
    for _ in range(30):
        values = {name: Fraction(rng.randint(0, 10**9), rng.randint(1, 10**5)) for name in terms}
        values["L"] = Fraction(rng.randint(1, 126))
        swap = {
            s: sp.Rational(values[s.name].numerator, values[s.name].denominator)
            for s in ROOF.free_symbols
        }
        expected = ROOF.xreplace(swap)
        got = model.value(values)
        assert isinstance(got, Fraction) and got == Fraction(int(expected.p), int(expected.q))
    x = sp.Symbol("x", positive=True)
    symbolic = model.value({**{n: Fraction(1) for n in terms}, "t_w": x})
    assert isinstance(symbolic, sp.Expr) and symbolic.free_symbols == {x}


def test_derived_is_computed_once_per_record_object_and_question() -> None:
    memo, calls = Evaluations(), []
    record = Record("flops/x", "flop_class", "flops/x.yaml", {})

    def compute() -> tuple[str, ...]:
        calls.append(1)
        return ("prepared",)

    first = memo.derived(record, ("prepared", "a"), compute)
    assert memo.derived(record, ("prepared", "a"), compute) is first and calls == [1]
    memo.derived(record, ("prepared", "b"), compute)
    memo.derived(Record("flops/x", "flop_class", "flops/x.yaml", {}), ("prepared", "a"), compute)
    assert calls == [1, 1, 1]


def test_frozen_keys_keep_types_apart_on_the_fast_path() -> None:
    assert frozen(1) != frozen(1.0) != frozen(True)
    assert frozen({"b": 1, "a": "x"}) == frozen({"a": "x", "b": 1})
    assert frozen({"v": Fraction(1, 3)}) != frozen({"v": 1 / 3})
