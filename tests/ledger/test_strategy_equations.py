"""The ledger's collective costs are the ones the strategy records state as checked equations.

Each collective equation of records/strategies/ (parsed with kb's safe parser, never
eval) is evaluated in base units and compared with `transfer_cost` for one collective,
so editing either the records or the code alone makes this fail.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest
import sympy
import yaml

from kb.equations.expr import parse_equation
from kb.ledger.ledger import Overrides, transfer_cost
from kb.ledger.quantities import Figure
from kb.ledger.transfers import TransferSpec

STRATEGIES = Path(__file__).resolve().parents[2] / "records" / "strategies"
CASES = [
    ("tensor-parallel", "all_reduce", "all-reduce"),
    ("tensor-parallel", "reduce_scatter", "reduce-scatter"),
    ("tensor-parallel", "all_gather", "all-gather"),
    ("expert-parallel", "all_to_all", "all-to-all"),
    ("pipeline-parallel", "point_to_point", "point-to-point"),
]


def equation(strategy: str, name: str) -> str:
    data = yaml.safe_load((STRATEGIES / f"{strategy}.yaml").read_text(encoding="utf-8"))
    return str(data["equations"][name]["expr"])


def fig(value: Fraction, dim: str) -> Figure:
    return Figure(value, dim, "estimated", "test")


@pytest.mark.parametrize(("strategy", "name", "pattern"), CASES)
@pytest.mark.parametrize("ranks", [2, 3, 8, 64])
def test_ledger_matches_the_strategy_equation(
    strategy: str, name: str, pattern: str, ranks: int
) -> None:
    size, alpha, bandwidth = Fraction(131072), Fraction(3, 10**6), Fraction(450 * 10**9)
    parsed = parse_equation(equation(strategy, name), allow_undeclared=True)
    values = {
        "S": size,
        "N": 2 if pattern == "point-to-point" else ranks,
        "alpha": alpha,
        "BW": bandwidth,
    }
    subs = {
        sym: sympy.Rational(values[sym.name].numerator, values[sym.name].denominator)
        if isinstance(values[sym.name], Fraction)
        else values[sym.name]
        for sym in parsed.rhs.value.free_symbols
    }
    expected = parsed.rhs.value.subs(subs)
    spec = TransferSpec(
        "t",
        pattern,
        "interconnects/x",
        values["N"],
        1,
        fig(size, "B"),
        False,
        fig(alpha, "s"),
        fig(bandwidth, "B/s"),
        (),
        None,
        "/t",
    )
    raw = transfer_cost(spec, Fraction(1), Fraction(0), Overrides()).raw
    assert sympy.Rational(raw.numerator, raw.denominator) == expected
