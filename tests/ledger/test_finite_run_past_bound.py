"""A finite run past the simulator's bound, priced at the steady state (`finite_run_past_bound`).

The rule says: a closed loop of C clients running k = N/C requests each is the steady
state apart from its start and tail, which span at most one of the k cycles, so the
steady output rate is within 1/k of the run's. Held here on runs short enough to
simulate (a grid of times like the DeepSeek-R1 row's, and that row's own composed times
at k = 2; KB_FULL=1 adds k = 4), and on the shipped row, which the simulator refuses and
which is now priced with its k and bound said.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import replace
from fractions import Fraction as F

import pytest

from kb.ledger.endtoend import conditions, evaluate_row
from kb.ledger.finite_run import RunTooLong
from kb.ledger.past_bound import edge_bound
from kb.ledger.run_by_step import simulate
from kb.ledger.scenario import outcome
from kb.ledger.serving import steady_state
from kb.model import KnowledgeBase

R1 = "receipts/trtllm-deepseek-r1-b200-h200-max-throughput"
# t_dec at batch 1 and at batch C, d_s, L*t_o: of the order of the R1 B200 row's (seconds)
TIMES = (F(12, 1000), F(213, 10000), F(242, 10000), F(43, 10000))


def _steady_over_finite(
    clients: int, per_client: int, inputs: int, outputs: int, budget: int, times: tuple[F, ...]
) -> F:
    at_one, at_clients, stall, overhead = times
    run = simulate(
        clients, clients * per_client, inputs, outputs, budget, at_one, at_clients, stall, overhead
    )
    steady = steady_state("mixed", clients, outputs, at_clients, stall + overhead, overhead)
    return F(clients * outputs) / steady.latency / run.output_rate - 1


@pytest.mark.parametrize(
    ("clients", "per_client", "inputs", "outputs", "room"),
    list(itertools.product((4, 16, 64), (2, 4, 8), (128, 1024), (64, 256), (1, 2))),
)
def test_the_steady_rate_is_within_one_cycle_in_k_of_the_simulated_run(
    clients: int, per_client: int, inputs: int, outputs: int, room: int
) -> None:
    budget = clients + room * inputs
    bias = _steady_over_finite(clients, per_client, inputs, outputs, budget, TIMES)
    bound = edge_bound(clients * per_client, clients)
    assert bound == F(1, per_client)
    assert abs(bias) <= bound


def _r1_times(shipped: KnowledgeBase) -> tuple[int, int, int, int, tuple[F, ...]]:
    record = shipped.get(R1)
    assert record is not None
    scenario, _, _ = conditions(shipped, record, record.data["results"][0])
    at_c = outcome(replace(scenario, input_tokens=None), shipped)
    single = outcome(replace(scenario, batch=scenario.dp), shipped)
    assert at_c.tpot is not None and single.tpot is not None and single.ttft is not None
    overhead = next(F(r.value) for r in single.rows if r.name == "overhead")
    times = (single.tpot, at_c.tpot, single.ttft - overhead, overhead)
    assert scenario.input_tokens and scenario.output_tokens
    clients = scenario.batch // scenario.dp
    return clients, scenario.input_tokens, scenario.output_tokens, 1536, times


def test_the_r1_rows_own_times_at_two_requests_a_client(shipped: KnowledgeBase) -> None:
    clients, inputs, outputs, budget, times = _r1_times(shipped)
    assert clients == 384
    assert abs(_steady_over_finite(clients, 2, inputs, outputs, budget, times)) <= F(1, 2)


@pytest.mark.skipif(not os.environ.get("KB_FULL"), reason="KB_FULL=1: about 7 s of CPU")
def test_the_r1_rows_own_times_at_four_requests_a_client(
    shipped: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("kb.ledger.finite_run.MAX_GROUP_STEPS", 10**8)  # past kb's bound
    clients, inputs, outputs, budget, times = _r1_times(shipped)
    assert abs(_steady_over_finite(clients, 4, inputs, outputs, budget, times)) <= F(1, 4)


def test_the_r1_run_is_past_the_bound_and_priced_at_the_steady_state_with_its_bias(
    shipped: KnowledgeBase,
) -> None:
    clients, inputs, outputs, budget, times = _r1_times(shipped)
    with pytest.raises(RunTooLong):
        simulate(clients, clients * 16, inputs, outputs, budget, *times)
    record = shipped.get(R1)
    assert record is not None
    result = evaluate_row(shipped, record, 0, record.data["results"][0], False)
    assert result.predicted is not None and result.error is not None
    note = next(a for a in result.assumed if a.startswith("finite_run_past_bound:"))
    assert "Each client runs 16 requests" in note and "1/16 = 6.25%" in note
    assert any(a.startswith("serving steady state of 384") for a in result.assumed)


def test_a_run_of_one_request_a_client_has_no_steady_state_to_stand_in() -> None:
    assert edge_bound(3072, 3072) is None
    assert edge_bound(6144, 3072) == F(1, 2)
