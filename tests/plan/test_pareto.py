"""kb.plan.pareto: the front of each pair of dimensions, exact, ties kept."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kb.plan.pareto import best, dominates, front, pair_fronts

BETTER = {"t": "lower", "r": "higher", "m": "higher"}


def test_front_of_latency_against_throughput() -> None:
    options = {
        "a": {"t": Fraction(10), "r": Fraction(100)},
        "b": {"t": Fraction(20), "r": Fraction(300)},
        "c": {"t": Fraction(25), "r": Fraction(200)},  # b beats it on both
        "d": {"t": Fraction(10), "r": Fraction(100)},  # a tie with a: both stay
        "e": {"t": None, "r": Fraction(999)},  # not priced: takes no part
    }
    assert front(options, ("t", "r"), BETTER) == ["a", "b", "d"]
    assert best(options, "t", "lower") == ["a", "d"]
    assert best(options, "r", "higher") == ["e"]


def test_each_pair_has_its_own_front() -> None:
    options = {
        "x": {"t": Fraction(1), "r": Fraction(1), "m": Fraction(9)},
        "y": {"t": Fraction(2), "r": Fraction(2), "m": Fraction(1)},
    }
    fronts = dict(pair_fronts(options, ["t", "r", "m"], BETTER))
    assert fronts[("t", "r")] == ["x", "y"]
    assert fronts[("t", "m")] == ["x"]
    assert fronts[("r", "m")] == ["x", "y"]


values = st.fractions(min_value=0, max_value=20, max_denominator=4)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.dictionaries(
        st.text("abcdef", min_size=1, max_size=3), st.tuples(values, values), max_size=12
    )
)
def test_the_front_is_exactly_the_undominated(points: dict[str, tuple[Fraction, Fraction]]) -> None:
    options = {n: {"t": a, "r": b} for n, (a, b) in points.items()}
    on = set(front(options, ("t", "r"), BETTER))
    ways = ["lower", "higher"]
    for name, point in points.items():
        beaten = any(dominates(other, point, ways) for o, other in points.items() if o != name)
        assert (name in on) == (not beaten)
