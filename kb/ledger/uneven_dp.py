"""A finite run's requests over data-parallel replicas that do not divide them evenly.

kb/data/end-to-end.json `finite_run.requests_over_dp` (issue 35, session 23): N requests
over dp replicas run as `N mod dp` replicas of ceil(N/dp) requests and the others of
floor(N/dp), each simulated as one replica is (kb.ledger.finite_run). The run lasts
until its slowest replica finishes, so the system's output rate is N*O over the longest
duration; a statistic over the requests is taken over every replica's requests. With
dp dividing N there is one share and every figure is the replica's, exactly as before.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kb.ledger.finite_run import RunResult


def shares(requests: int, dp: int) -> tuple[tuple[int, int], ...]:
    """(requests per replica, replicas running that many), the larger share first."""
    low, extra = divmod(requests, dp)
    found = ((low + 1, extra), (low, dp - extra))
    return tuple((n, replicas) for n, replicas in found if replicas and n)


@dataclass(frozen=True)
class Combined:
    """The system's figures from its replicas' runs."""

    ttft: Fraction
    tpot: Fraction | None  # None: no request decodes past its first token
    latency: Fraction
    system_rate: Fraction  # output tokens per second of the whole system
    slowest: RunResult  # the replica run that sets the duration


def combine(runs: Sequence[tuple[RunResult, int]], which: str) -> Combined:
    """The system's statistics and output rate from (run, replicas running it) pairs."""
    slowest = max((run for run, _ in runs), key=lambda run: run.duration)
    if len(runs) == 1:
        run, replicas = runs[0]
        tpot = run.statistic(run.tpots, which) if run.tpots else None
        return Combined(
            run.statistic(run.ttfts, which),
            tpot,
            run.statistic(run.latencies, which),
            run.output_rate * replicas,
            run,
        )
    tokens = sum(run.requests * run.output_tokens * replicas for run, replicas in runs)
    tpots = [(run.tpots, replicas) for run, replicas in runs if run.tpots]
    return Combined(
        _pooled([(run.ttfts, replicas) for run, replicas in runs], which),
        _pooled(tpots, which) if tpots else None,
        _pooled([(run.latencies, replicas) for run, replicas in runs], which),
        Fraction(tokens) / slowest.duration,
        slowest,
    )


def _pooled(parts: Sequence[tuple[Sequence[Fraction], int]], which: str) -> Fraction:
    """The mean or median over every replica's values (each list counted per replica)."""
    from kb.ledger.finite_run import exact_mean

    pooled = [Fraction(v) for values, replicas in parts for _ in range(replicas) for v in values]
    return exact_mean(pooled) if which == "mean" else Fraction(statistics.median(pooled))
