"""The Pareto front of every pair of dimensions: never one collapsed score.

For two dimensions (each `lower` or `higher` is better) an option is on the pair's
front when no other option is at least as good on both and strictly better on one.
Ties stay on the front together. An option without a value on either dimension of a
pair takes no part in that pair. Exact arithmetic (Fractions): no float ties.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from itertools import combinations

Values = Mapping[str, Fraction | None]


def better_or_equal(a: Fraction, b: Fraction, better: str) -> bool:
    return a <= b if better == "lower" else a >= b


def dominates(a: Sequence[Fraction], b: Sequence[Fraction], better: Sequence[str]) -> bool:
    """True when `a` is at least as good as `b` on every dimension and strictly better on one."""
    return all(better_or_equal(x, y, w) for x, y, w in zip(a, b, better, strict=True)) and any(
        x != y for x, y in zip(a, b, strict=True)
    )


def front(
    options: Mapping[str, Values], dims: Sequence[str], better: Mapping[str, str]
) -> list[str]:
    """The names (in the given order) no other option dominates on `dims`."""
    points: dict[str, list[Fraction]] = {}
    for name, v in options.items():
        got = [v.get(d) for d in dims]
        if all(x is not None for x in got):
            points[name] = [x for x in got if x is not None]
    ways = [better[d] for d in dims]
    if len(dims) == 2:
        return _front_2d(points, ways)
    return [
        name
        for name, point in points.items()
        if not any(dominates(other, point, ways) for o, other in points.items() if o != name)
    ]


def _front_2d(points: Mapping[str, Sequence[Fraction | int]], ways: Sequence[str]) -> list[str]:
    """`front` of two dimensions by one sort instead of comparing every pair of options.

    With both dimensions turned to lower-is-better, (x, y) is dominated exactly when
    some option has a smaller x and a y at most y, or the same x and a smaller y (an
    equal point dominates nothing: ties stay on the front). The same names, in the
    same order, as the pairwise definition (tests/plan/test_pareto_2d.py holds them equal).
    """
    signs = [1 if w == "lower" else -1 for w in ways]
    lowered = {n: (p[0] * signs[0], p[1] * signs[1]) for n, p in points.items()}
    by_x: dict[Fraction | int, Fraction | int] = {}  # the least y at each x
    for x, y in lowered.values():
        by_x[x] = min(y, by_x.get(x, y))
    below: dict[Fraction | int, Fraction | int | None] = {}  # the least y at any smaller x
    least: Fraction | int | None = None
    for x in sorted(by_x):
        below[x] = least
        least = by_x[x] if least is None else min(least, by_x[x])
    kept = []
    for name, (x, y) in lowered.items():
        smaller = below[x]
        if not ((smaller is not None and smaller <= y) or by_x[x] < y):
            kept.append(name)
    return kept


def pair_fronts(
    options: Mapping[str, Values], dims: Sequence[str], better: Mapping[str, str]
) -> list[tuple[tuple[str, str], list[str]]]:
    """((a, b), front) for each pair of `dims`, in the order the dimensions are given.

    Each dimension's values are ranked once (`ranks`: equal values share a rank, a
    better value has a lower one), and every pair's front is taken over the ranks: the
    same comparisons as over the exact values, made once per dimension instead of once
    per pair (tests/plan/test_pareto_ranks.py holds the fronts equal to `front`'s).
    """
    ranked = {d: ranks(options, d, better[d]) for d in dims}
    found = []
    for a, b in combinations(dims, 2):
        points = {
            name: (ranked[a][name], ranked[b][name])
            for name in options
            if name in ranked[a] and name in ranked[b]
        }
        found.append(((a, b), _front_2d(points, ("lower", "lower"))))
    return found


def ranks(options: Mapping[str, Values], dim: str, better: str) -> dict[str, int]:
    """Each option's rank on `dim`: 0 for the best value, equal values equal ranks.

    Options without a value on `dim` have none. Exact: the values are sorted once.
    """
    have = [(v, n) for n, values in options.items() if (v := values.get(dim)) is not None]
    have.sort(key=lambda item: item[0], reverse=better != "lower")
    found: dict[str, int] = {}
    rank = -1
    for index, (value, name) in enumerate(have):
        if index == 0 or value != have[index - 1][0]:
            rank += 1
        found[name] = rank
    return found


def best(options: Mapping[str, Values], dim: str, better: str) -> list[str]:
    """The options with the best value on one dimension (all of them on a tie)."""
    have: dict[str, Fraction] = {}
    for n, v in options.items():
        x = v.get(dim)
        if x is not None:
            have[n] = x
    if not have:
        return []
    top = min(have.values()) if better == "lower" else max(have.values())
    return [n for n, v in have.items() if v == top]
