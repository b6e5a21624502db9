"""kb.plan.pareto's two-dimension front (one sort) against the pairwise definition.

`front` of two dimensions takes a sorted sweep; the pairwise definition (no other
option at least as good on both and strictly better on one) is `dominates`. They must
name the same options in the same order, ties and both directions included.
"""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from kb.plan.pareto import dominates, front


def pairwise(points: dict[str, tuple[Fraction, Fraction]], ways: tuple[str, str]) -> list[str]:
    return [
        n
        for n, p in points.items()
        if not any(dominates(q, p, ways) for m, q in points.items() if m != n)
    ]


small = st.fractions(min_value=0, max_value=4, max_denominator=2)  # many ties


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(small, small), max_size=12),
    st.sampled_from(["lower", "higher"]),
    st.sampled_from(["lower", "higher"]),
)
def test_the_sweep_is_the_pairwise_front(
    values: list[tuple[Fraction, Fraction]], a: str, b: str
) -> None:
    points = {f"o{i}": v for i, v in enumerate(values)}
    options = {n: {"a": x, "b": y} for n, (x, y) in points.items()}
    assert front(options, ("a", "b"), {"a": a, "b": b}) == pairwise(points, (a, b))


def test_ties_stay_and_a_point_equal_on_one_side_is_dominated() -> None:
    options = {
        "p": {"a": Fraction(1), "b": Fraction(5)},
        "q": {"a": Fraction(1), "b": Fraction(5)},  # equal to p: both stay
        "r": {"a": Fraction(1), "b": Fraction(6)},  # same a, worse b: dominated
        "s": {"a": Fraction(0), "b": Fraction(9)},  # best a: stays
        "t": {"a": Fraction(2), "b": Fraction(5)},  # worse a, same b: dominated
    }
    assert front(options, ("a", "b"), {"a": "lower", "b": "lower"}) == ["p", "q", "s"]
