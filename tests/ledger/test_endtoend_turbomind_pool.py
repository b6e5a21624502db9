"""The shipped LMDeploy TTFT rows past the benchmark's KV pool (end-to-end.json `turbomind_pool`).

A row whose batch the declared pool does not hold as whole sequences is priced by the
simulated run, even where kb's own feasibility finds the stated batch does not fit (the
engine never holds more than its pool, and kb finds the pool fits); a row the pool holds
keeps the first_token round rule; a receipt with no declared pool is never touched.
"""

from __future__ import annotations

from dataclasses import replace

from kb.ledger.endtoend import conditions, evaluate_row
from kb.ledger.paged_run import Pool
from kb.ledger.scenario import outcome
from kb.ledger.turbomind_pool import declared_pools, past_pool
from kb.model import KnowledgeBase

LMDEPLOY_13B = "receipts/lmdeploy-llama-2-13b-a100-tp1-static"


def test_a_row_past_the_pool_that_kb_found_does_not_fit_is_priced_by_the_run(
    shipped: KnowledgeBase,
) -> None:
    record = shipped.get(LMDEPLOY_13B)
    assert record is not None
    row = record.data["results"][37]  # batch 64, 2048/128, average first-token latency
    scenario, _, _ = conditions(shipped, record, row)
    assert not outcome(scenario, kb=shipped).fits  # the stated batch, whole: it does not
    found = past_pool(LMDEPLOY_13B, scenario)
    assert found is not None and found.pool == Pool(500, 128)
    result = evaluate_row(shipped, record, 37, row, False)
    assert result.predicted is not None and result.error is not None
    note = next(a for a in result.assumed if a.startswith("turbomind_pool:"))
    assert "holds 29 of the 64 whole sequences" in note
    assert "64 threads x 6 rounds" in note
    assert not any("join the next" in a for a in result.assumed)  # not the round rule


def test_a_row_the_pool_holds_keeps_the_round_rule(shipped: KnowledgeBase) -> None:
    record = shipped.get(LMDEPLOY_13B)
    assert record is not None
    row = record.data["results"][17]  # batch 16, 2048/128: 16 x 17 blocks <= 500
    scenario, _, _ = conditions(shipped, record, row)
    assert past_pool(LMDEPLOY_13B, scenario) is None
    assert past_pool(LMDEPLOY_13B, replace(scenario, batch=32)) is not None  # 544 blocks
    result = evaluate_row(shipped, record, 17, row, False)
    assert any("the other 15 join the next" in a for a in result.assumed)
    assert not any(a.startswith("turbomind_pool:") for a in result.assumed)


def test_only_the_lmdeploy_receipts_declare_a_pool() -> None:
    assert set(declared_pools()) == {
        "receipts/lmdeploy-llama-2-7b-a100-tp1-static",
        "receipts/lmdeploy-llama-2-7b-a100-tp1-static-shapes",
        "receipts/lmdeploy-llama-2-13b-a100-tp1-static",
        "receipts/lmdeploy-llama-2-70b-a100-tp4-static",
        "receipts/lmdeploy-llama-2-70b-a100-tp4-static-shapes",
    }
