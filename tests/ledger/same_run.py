"""One comparison for the finite-run tests: a grouped simulation against its per-request oracle."""

from __future__ import annotations

from kb.ledger.finite_run import RunResult


def assert_same_run(grouped: RunResult, reference: RunResult) -> None:
    """Equal duration and steps, and the same TTFTs, TPOTs and latencies in any order."""
    assert grouped.duration == reference.duration
    assert grouped.steps == reference.steps
    for mine, theirs in (
        (grouped.ttfts, reference.ttfts),
        (grouped.tpots, reference.tpots),
        (grouped.latencies, reference.latencies),
    ):
        assert sorted(mine) == sorted(theirs)
