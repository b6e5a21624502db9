"""A finite run past the simulator's bound, priced at its steady state (finite_run_past_bound).

kb/data/end-to-end.json `finite_run_past_bound` declares the rule: a run kb.ledger.finite_run
refuses as longer than MAX_GROUP_STEPS is, apart from its start and tail, the closed loop's
steady state (kb.ledger.serving). Each of its C clients runs k = N/C requests; start and
tail span at most one of those k cycles, so the steady output rate is at most 1/k above the
run's (tests/ledger/test_finite_run_past_bound.py holds that on runs short enough to
simulate). Only the output rate is priced so: the per-request statistics of a run's start
are not the steady state's.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

from kb.ledger.scenario import Outcome, Scenario
from kb.model import KnowledgeBase

PAST_BOUND_MEASURES = ("output_tokens_per_s", "output_tokens_per_s_per_gpu")

Serving = Callable[[KnowledgeBase, Scenario, Outcome, dict[str, Any]], "Outcome | str"]


def edge_bound(requests: int, clients: int) -> Fraction | None:
    """1/k, k = the requests each client runs; None when k < 2 (no steady state to speak of)."""
    per_client = Fraction(requests, clients)
    return 1 / per_client if per_client >= 2 else None


def past_bound(
    kb: KnowledgeBase,
    scenario: Scenario,
    requests: int,
    at_c: Outcome,
    common: dict[str, Any],
    serving: Serving,
) -> Outcome | str:
    """The steady state at the run's concurrency (`serving`: endtoend's), with the bias said."""
    bound = edge_bound(requests, scenario.batch)
    if bound is None:
        return f"a run of {requests} requests at concurrency {scenario.batch}: past the bound"
    common["assumed"] = (
        *common["assumed"],
        f"finite_run_past_bound: a run of {requests} requests at concurrency {scenario.batch} "
        f"is past the simulator's bound; priced at its steady state. Each client runs "
        f"{Fraction(requests, scenario.batch)} requests: the start and tail left out are at "
        f"most 1/{1 / bound} = {float(bound):.2%} of the run (the steady rate is at most that "
        f"much above the run's)",
    )
    return serving(kb, scenario, at_c, common)
