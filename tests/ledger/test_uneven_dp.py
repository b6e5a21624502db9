"""finite_run.requests_over_dp: N requests over dp replicas that do not divide them (session 23).

kb.ledger.uneven_dp splits N into ceil and floor shares, and combines the replicas' runs: the
system's rate is N*O over the slowest replica's duration, each statistic is over every
replica's requests, and with one share every figure is the replica's, as before the rule.
"""

from __future__ import annotations

from fractions import Fraction as F

from kb.ledger.finite_run import RunResult
from kb.ledger.uneven_dp import combine, shares


def _run(requests: int, ttfts: tuple[int, ...], duration: int) -> RunResult:
    times = tuple(F(t) for t in ttfts)
    return RunResult(times, times, times, F(duration), 10, 4, requests)


def test_the_shares_are_the_most_even_whole_split() -> None:
    assert shares(1500, 8) == ((188, 4), (187, 4))
    assert shares(3000, 8) == ((375, 8),)
    assert shares(3, 8) == ((1, 3),)  # five replicas run nothing
    for n, dp in ((1500, 8), (3000, 8), (3, 8), (17, 4)):
        assert sum(k * r for k, r in shares(n, dp)) == n


def test_one_share_is_the_replica_times_the_replicas() -> None:
    run = _run(2, (1, 3), 8)
    found = combine([(run, 4)], "mean")
    assert (found.ttft, found.tpot, found.latency) == (F(2), F(2), F(2))
    assert found.system_rate == run.output_rate * 4 == F(2 * 4 * 4, 8)
    assert found.slowest is run


def test_two_shares_end_with_the_slowest_and_pool_the_requests() -> None:
    big, small = _run(3, (1, 2, 6), 12), _run(2, (1, 1), 10)
    found = combine([(big, 1), (small, 2)], "mean")
    assert found.slowest is big
    assert found.system_rate == F((3 + 2 * 2) * 4, 12)  # N*O over the longest duration
    assert found.ttft == F(1 + 2 + 6 + 2 * (1 + 1), 7)  # over all seven requests
    median = combine([(big, 1), (small, 2)], "median")
    assert median.ttft == F(1)  # 1, 1, 1, 1, 1, 2, 6
