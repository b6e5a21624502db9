"""kb.equations.minmax decides a Max or Min of numbers exactly as SymPy's xreplace does.

The fast path returns the larger (smaller) argument when interval arithmetic orders the
arguments, and None otherwise (SymPy then decides). Per push: random inputs of the shape
of flops/moe-ep-nvlink-rdma-decode's `ll_time_tail` (the Max the planner evaluates), a
Min, and ties the intervals cannot order. With KB_FULL=1: every Max of two MoE models'
planner passes (the explorer's default menus), each compared with SymPy's own answer.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import sympy as sp

import kb.equations.minmax as minmax
from tests.sample import full

N, G, T, k, V, BW_nvl, BW_net = sp.symbols("N G T k V BW_nvl BW_net", positive=True)
TAIL = 1 + sp.sqrt(2 - 2 / N) * sp.sqrt(sp.log(N)) / (sp.sqrt(T) * sp.sqrt(k))
LL_TIME_TAIL = sp.Max(V * TAIL * (N - G) / (BW_net * N), V * TAIL * (G - 1) / (BW_nvl * N))


def _values(rng: random.Random) -> dict[sp.Symbol, sp.Rational]:
    n = rng.choice([2, 4, 8, 16, 32, 64, 256])
    return {
        N: sp.Rational(n),
        G: sp.Rational(rng.randint(1, min(n, 8))),
        T: sp.Rational(rng.randint(1, 600_000), rng.choice([1, 2, 3, 8])),
        k: sp.Rational(rng.choice([1, 2, 4, 8])),
        V: sp.Rational(rng.randint(1, 10**12), rng.randint(1, 1000)),
        BW_nvl: sp.Rational(rng.choice([450, 900, 1800]) * 10**9),
        BW_net: sp.Rational(rng.choice([25, 50, 100]) * 10**9, rng.choice([1, 2, 3])),
    }


def _same(expression: sp.Expr, values: dict[sp.Symbol, sp.Rational]) -> bool:
    """decided() gave an answer, and it is SymPy's (same expression, same 40-digit value)."""
    found = minmax.decided(expression, values)
    want = expression.xreplace(values)
    if found is None:
        return False
    assert found == want, (values, found, want)
    assert str(sp.N(found, 40)) == str(sp.N(want, 40))
    return True


def test_the_ep_tail_max_is_sympys() -> None:
    rng = random.Random(36)
    taken = [_same(LL_TIME_TAIL, _values(rng)) for _ in range(150)]
    assert sum(taken) >= 140  # the fast path is the common path, not a rare one


def test_a_min_is_sympys() -> None:
    rng = random.Random(18)
    smaller = sp.Min(*LL_TIME_TAIL.args)
    assert sum(_same(smaller, _values(rng)) for _ in range(40)) >= 35


def test_ties_and_the_unbounded_are_left_to_sympy() -> None:
    x = sp.Symbol("x", positive=True)
    equal = sp.Max(sp.log(x**3), 3 * sp.log(2) * x / x, evaluate=False)  # log(8), 3*log(2)
    assert minmax.decided(equal, {x: sp.Rational(2)}) is None
    assert minmax.decided(sp.Max(sp.exp(x), x + 1), {x: sp.Rational(1)}) is None  # exp: not bounded
    assert minmax.decided(x + 1, {x: sp.Rational(1)}) is None  # not a Max or Min
    assert minmax.decided(sp.Max(x, 2 * x), {}) is None  # no value: a symbol stays


@pytest.mark.skipif(not full(), reason="KB_FULL=1: every Max of two MoE models' passes")
def test_every_max_of_a_planner_pass_is_sympys(monkeypatch: pytest.MonkeyPatch) -> None:
    from kb.api import open_kb, validate
    from kb.sitegen import explorer
    from kb.sitegen.plan_pages import model_pass

    root = Path(__file__).resolve().parents[2] / "records"
    kb = open_kb(root, checked=validate(root, remember=False))
    kb.freeze()
    real, seen = minmax.decided, []

    def checked(expression: Any, values: Any) -> Any:
        found = real(expression, values)
        if found is not None:
            seen.append(found)
            assert found == expression.xreplace(values)
        return found

    monkeypatch.setattr(minmax, "decided", checked)
    menus = explorer.DEFAULT_MENUS
    hardware = [h.id for h in explorer.planned_hardware(kb, menus)]
    for model in ("models/deepseek-v3", "models/qwen3-235b-a22b"):
        record = kb.get(model)
        assert record is not None
        model_pass(kb, record, hardware, menus)
    assert seen
