"""kb.ledger.scaled.Scaled: integers over one denominator are the Fractions they stand for.

The fast statistics (integer sum, integer sort) must give exactly what the Fractions'
sum and statistics.median give, for odd and even counts, negative values, repeats and
values that reduce; and a Scaled is equal to (and hashes as) the tuple of its values,
so a RunResult compares the same whichever the simulator built.
"""

from __future__ import annotations

import statistics
from fractions import Fraction as F

import pytest

from kb.ledger import finite_run, run_by_step
from kb.ledger.scaled import Scaled

CASES = [
    ((7,), 3),
    ((4, 2, 2, 9), 6),  # even count, repeats, values that reduce (4/6 = 2/3)
    ((-5, 11, 0, 3, 3), 10**15),
    (tuple((k * 7919) % 1001 - 500 for k in range(301)), 2 * 3 * 5 * 7 * 1024),
]


@pytest.mark.parametrize(("numerators", "denominator"), CASES)
def test_the_integer_statistics_are_the_fractions(
    numerators: tuple[int, ...], denominator: int
) -> None:
    scaled = Scaled(numerators, denominator)
    values = tuple(F(n, denominator) for n in numerators)
    assert scaled.mean() == sum(values, F(0)) / len(values)
    assert scaled.median() == F(statistics.median(values))
    assert scaled == values and values == scaled and list(scaled) == list(values)
    assert hash(scaled) == hash(values)
    assert scaled[0] == values[0] and scaled[1:3] == values[1:3] and len(scaled) == len(values)


def test_a_run_statistic_is_the_same_from_scaled_and_from_fractions() -> None:
    run = run_by_step.simulate(5, 23, 9, 6, 17, F(3, 1000), F(9, 1000), F(20, 1000), F(1, 1000))
    assert isinstance(run.ttfts, Scaled)
    plain = finite_run.RunResult(
        tuple(run.ttfts), tuple(run.tpots), tuple(run.latencies), run.duration,
        run.steps, run.output_tokens, run.requests, run.notes, run.group_steps,
    )  # fmt: skip
    for which in finite_run.STATISTICS:
        for field in ("ttfts", "tpots", "latencies"):
            fast = run.statistic(getattr(run, field), which)
            assert fast == plain.statistic(getattr(plain, field), which), (which, field)
    assert run == plain


def test_a_denominator_below_one_is_refused() -> None:
    with pytest.raises(ValueError):
        Scaled((1,), 0)
