"""kb.plan.pareto.pair_fronts over ranks names the same fronts as `front` over exact values.

pair_fronts ranks each dimension once (equal values share a rank) and takes every
pair's front over the ranks; `front` compares the exact Fractions. Ties, missing
values and both directions included, they must agree name for name and in order.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import combinations

from hypothesis import given, settings
from hypothesis import strategies as st

from kb.plan.pareto import front, pair_fronts, ranks

DIMS = ("a", "b", "c")
small = st.one_of(st.none(), st.fractions(min_value=0, max_value=3, max_denominator=2))


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(small, small, small), max_size=10),
    st.tuples(*(st.sampled_from(["lower", "higher"]) for _ in DIMS)),
)
def test_fronts_over_ranks_are_the_fronts_over_values(
    rows: list[tuple[Fraction | None, ...]], ways: tuple[str, ...]
) -> None:
    options = {f"o{i}": dict(zip(DIMS, row, strict=True)) for i, row in enumerate(rows)}
    better = dict(zip(DIMS, ways, strict=True))
    expected = [((a, b), front(options, (a, b), better)) for a, b in combinations(DIMS, 2)]
    assert pair_fronts(options, DIMS, better) == expected


def test_ranks_share_ties_and_put_the_best_first() -> None:
    options = {
        "p": {"x": Fraction(3)},
        "q": {"x": Fraction(1)},
        "r": {"x": Fraction(3)},
        "s": {"x": None},
    }
    assert ranks(options, "x", "lower") == {"q": 0, "p": 1, "r": 1}
    assert ranks(options, "x", "higher") == {"p": 0, "r": 0, "q": 1}
