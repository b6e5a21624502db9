"""vLLM's paged-attention decode of 2023-12 to 2024-03 reads the KV cache once per query head.

kb/data/end-to-end.json `kv_read_per_query_head` names engines/vllm at the versions of PR 2192,
PR 2542 and PR 3240 (issue 35, session 21): their decode kernel launches one block per query
head, each loading its KV head's cache (grid(num_heads, num_seqs[, partitions]),
kv_head_idx = head_idx / num_queries_per_kv). The rule's formula is unchanged; these tests
hold which vLLM rows it reaches and what it adds to a request.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

from kb.ledger.endtoend import conditions, evaluate_row, kv_read_per_query_head_versions
from kb.ledger.scenario import outcome
from kb.model import KnowledgeBase

VLLM = "engines/vllm"
CUSTOM_AR = "receipts/vllm-custom-all-reduce-a100-e2e"
NOTE = "decode attention reads the KV cache once per query head"
A100_HBM = 1700 * 10**9  # hardware/nvidia-a100-80gb-sxm4#memory.bandwidth_achieved, B/s


def test_the_declared_versions_are_the_three_receipts_of_the_old_kernel() -> None:
    versions = kv_read_per_query_head_versions()[VLLM]
    assert set(versions) == {
        "PR 2192 (merged 2023-12/2024-01)",
        "PR 2542 branch vs main of 2024-01-22",
        "PR 3240 branch vs main of 2024-03-06",
    }


def test_exactly_the_declared_versions_gqa_rows_state_it(shipped: KnowledgeBase) -> None:
    declared = kv_read_per_query_head_versions()[VLLM]
    seen: set[str] = set()
    for record in shipped.records.values():
        if record.kind != "receipt" or record.get("engine.record") != VLLM:
            continue
        for index, row in enumerate(record.get("results") or []):
            result = evaluate_row(shipped, record, index, row, calibration=False)
            if result.predicted is None:
                continue
            says = any(NOTE in a for a in result.assumed)
            model = shipped.get(str(result.conditions.get("model")))
            assert model is not None
            gqa = model.get("geometry.kv_heads") < model.get("geometry.heads")
            assert says == (record.get("engine.version") in declared and gqa), (record.id, index)
            if says:
                seen.add(f"{record.id}#{index}")
    assert {f"{CUSTOM_AR}#0", f"{CUSTOM_AR}#1"} <= seen


def test_the_request_gains_seven_more_cache_reads_per_decode_step(shipped: KnowledgeBase) -> None:
    record = shipped.get(CUSTOM_AR)
    assert record is not None
    scenario, _, _ = conditions(shipped, record, record.get("results")[0])
    assert scenario.kv_read_per_query_head
    with_rule = outcome(scenario, shipped)
    without = outcome(replace(scenario, kv_read_per_query_head=False), shipped)
    assert with_rule.latency is not None and without.latency is not None
    # one rank's cache per step: 64 sequences x 384 tokens (256 + 256/2) x 80 layers x (K, V)
    # x 2 of the 8 KV heads (tp = 4) x 128 x 2 B (bf16), at the HBM rate; read 64/8 = 8 times
    read = Fraction(64 * 384 * 80 * 2 * 2 * 128 * 2, A100_HBM)
    assert with_rule.tpot is not None and without.tpot is not None
    assert with_rule.tpot - without.tpot == (8 - 1) * read
    assert with_rule.ttft == without.ttft  # the prefill is another kernel
    assert with_rule.latency - without.latency == 255 * (8 - 1) * read
    assert with_rule.need_per_device == without.need_per_device  # the cache's size is unchanged
