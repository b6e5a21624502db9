"""vLLM's offline benchmark_throughput rows, priced as a finite run (`offline_throughput`).

kb/data/end-to-end.json declares the rule (session 17): all N prompts sent at once
(finite_run with C = N), the README's rate read as total (input + output) tokens/s, and
the run simulated in the engine's KV pool with vLLM's preemption by recompute where the
pool does not hold every whole sequence (`offline_throughput.preemption`, session 18).
"""

from __future__ import annotations

import json
from dataclasses import replace
from fractions import Fraction as F
from typing import Any

from kb.ledger.capacity import capacity
from kb.ledger.endtoend import (
    CONTRADICTED,
    OFFLINE_NOTE,
    UNITS,
    VALIDATED,
    RowResult,
    conditions,
    evaluate_row,
)
from kb.ledger.offline_run import offline_row, replica_pool, unheld
from kb.ledger.paged_run import Pool
from kb.model import KnowledgeBase
from kb.resources import _package_dir

R70 = "receipts/rocm-vllm-llama-3.1-70b-mi300x-tp8-max-throughput"
R405 = "receipts/rocm-vllm-llama-3.1-405b-mi300x-tp8-max-throughput"


def _row(shipped: KnowledgeBase, receipt: str, index: int, **change: Any) -> RowResult:
    record = shipped.records[receipt]
    row = {**record.data["results"][index], **change}
    return evaluate_row(shipped, record, index, row, False)


def test_the_rule_is_declared_with_its_sources() -> None:
    data = json.loads((_package_dir("data") / "end-to-end.json").read_text(encoding="utf-8"))
    rule = data["offline_throughput"]
    for key in ("applies_to", "run", "duration", "which_rate", "capacity", "reason"):
        assert rule[key]
    for key in ("applies_to", "blocks", "step", "recompute", "recompute_time", "reason"):
        assert rule["preemption"][key]
    assert any("kv_cache_manager.py" in s for s in rule["preemption"]["sources"])
    assert any("benchmark_throughput.py" in s for s in rule["sources"])
    assert any("scheduler.py" in s for s in rule["sources"])
    assert "total_tokens_per_s" in data["measures"] and UNITS["total_tokens_per_s"] == "1/s"


def test_a_run_the_pool_holds_is_priced_step_by_step(shipped: KnowledgeBase) -> None:
    result = _row(shipped, R70, 1)  # 1500 prompts of 128/4096
    assert result.state in (VALIDATED, CONTRADICTED)
    assert OFFLINE_NOTE in result.assumed
    assert any("1500 requests at concurrency 1500 (finite_run)" in a for a in result.assumed)


def test_total_is_the_output_rate_times_the_sequence_over_the_output(
    shipped: KnowledgeBase,
) -> None:
    total = _row(shipped, R70, 2)  # 2000 prompts of 500/2000
    output = _row(shipped, R70, 2, measures="output_tokens_per_s")
    assert total.predicted is not None and output.predicted is not None
    assert total.predicted == output.predicted * F(500 + 2000, 2000)


def test_a_run_the_pool_cannot_hold_is_priced_with_preemption(
    shipped: KnowledgeBase,
) -> None:
    result = _row(shipped, R405, 1)  # 1500 whole sequences of 4224 tokens of the 405B
    assert result.state in (VALIDATED, CONTRADICTED) and result.predicted is not None
    assert OFFLINE_NOTE not in result.assumed
    assert any("949 of the 1,500 whole 4224-token sequences" in a for a in result.assumed)
    assert any("preemption by recompute simulated" in a for a in result.assumed)
    run = [a for a in result.assumed if a.startswith("the run: ")]
    assert run and not run[0].startswith("the run: 0 preemptions")


def test_a_run_the_pool_holds_never_preempts(shipped: KnowledgeBase) -> None:
    for receipt, index in ((R70, 0), (R70, 3), (R405, 0), (R405, 3)):
        result = _row(shipped, receipt, index)
        assert OFFLINE_NOTE in result.assumed
        assert not any(a.startswith("the run: ") for a in result.assumed)


def test_the_capacity_check_is_exact_at_its_edge(shipped: KnowledgeBase) -> None:
    record = shipped.records[R405]
    scenario = conditions(shipped, record, record.data["results"][1])[0]
    found = capacity(scenario, shipped)
    pool = replica_pool(shipped, scenario)
    assert pool == Pool(found.cached_tokens // found.block_tokens, found.block_tokens)
    assert isinstance(pool, Pool)
    blocks = -(-(128 + 4096) // found.block_tokens)
    most = found.cached_tokens // found.block_tokens // blocks
    assert unheld(pool, replace(scenario, batch=most)) is None
    assert unheld(pool, replace(scenario, batch=most + 1)) is not None


def test_only_a_run_that_sends_every_prompt_at_once_is_offline() -> None:
    assert offline_row({"prompts": 3200, "concurrency": 3200})
    assert not offline_row({"prompts": 128, "concurrency": 64})  # vllm bench serve's loop
    assert not offline_row({"concurrency": 64})
    assert not offline_row({"prompts": True, "concurrency": True})


def test_a_batch_whose_one_pass_prefill_kb_cannot_price_still_runs(
    shipped: KnowledgeBase,
) -> None:
    # 2048 prompts of 2048 tokens in one pass need an all-reduce past the stock curve
    # (no link latency to extrapolate); the run never prefills them at once, so its
    # decode step is priced alone.
    result = _row(shipped, R70, 3)
    assert result.predicted is not None
    assert result.state in (VALIDATED, CONTRADICTED)


def test_a_recompute_is_priced_between_two_composed_passes(shipped: KnowledgeBase) -> None:
    """`preemption.recompute_time`: d_s(k) linear from the prompt's pass to the longest one."""
    from kb.ledger.offline_run import prefill_stall
    from kb.ledger.scenario import outcome

    record = shipped.records[R405]
    scenario = conditions(shipped, record, record.data["results"][1])[0]
    at_prompt = F(3, 100)
    stall = prefill_stall(shipped, scenario, at_prompt)
    assert stall(128) == at_prompt  # the prompt's own length: no other pass priced
    longest = outcome(replace(scenario, batch=scenario.dp, input_tokens=128 + 4096 - 1), shipped)
    overhead = next(F(r.value) for r in longest.rows if r.name == "overhead")
    assert longest.ttft is not None
    assert stall(4223) == longest.ttft - overhead
    assert (stall(128 + 4095 // 3) - at_prompt) * 3 == stall(4223) - at_prompt  # linear in k
