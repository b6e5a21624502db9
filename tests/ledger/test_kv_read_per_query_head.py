"""A decode attention without grouped-query sharing reads the KV cache once per query head.

kb/data/end-to-end.json `kv_read_per_query_head` (issue 35, THROUGHPUT): TensorRT-LLM before
its XQA kernel (the 0.5 and 0.6.1 receipts) ran one attention block per query head, each
loading its KV head's cache. The composed decode step then reads a rank's cache
heads / max(kv_heads, tp) times over; the cache's size is unchanged. The workload states it
(`kv_read_per_query_head`), so a placement, a scenario and an end-to-end row price it alike.
"""

from __future__ import annotations

import json
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

from kb.ledger.endtoend import evaluate_row, kv_read_per_query_head_versions
from kb.ledger.scenario import Scenario, outcome
from kb.model import KnowledgeBase

H100 = "hardware/nvidia-h100-sxm"
V061 = "receipts/trtllm-v0.6.1-llama-2-peak-throughput"
V08 = "receipts/trtllm-v0.8-h100-peak-throughput"
NOTE = "decode attention reads the KV cache once per query head"


def _base() -> Scenario:
    return Scenario(
        model="models/llama-2-70b",
        hardware=H100,
        count=2,
        tp=2,
        batch=64,
        input_tokens=2048,
        output_tokens=2048,
        context=3072,
        engine="engines/tensorrt-llm",
        weight_precision="fp8",
        kv_precision="fp8",
    )


def test_the_rule_is_declared_with_its_versions_and_what_was_seen_first() -> None:
    data = json.loads(
        (Path(__file__).resolve().parents[2] / "kb" / "data" / "end-to-end.json").read_text()
    )
    entry = data["kv_read_per_query_head"]
    assert "Observed before this was declared" in entry["reason"] and entry["sources"]
    versions = kv_read_per_query_head_versions()["engines/tensorrt-llm"]
    assert "0.6.1" in versions and "v0.8.0" not in versions and "0.7a (pre-release)" not in versions


def test_the_step_reads_the_cache_eight_times_for_llama_2_70b(shipped: KnowledgeBase) -> None:
    plain = outcome(_base(), shipped)
    per_head = outcome(replace(_base(), kv_read_per_query_head=True), shipped)
    assert plain.tpot is not None and per_head.tpot is not None
    # the cache one rank reads per step: 64 sequences x 3072 tokens x 80 layers x (K, V)
    # x 4 of the 8 KV heads (tp = 2) x 128 x 1 B (fp8), at the HBM rate
    read = Fraction(64 * 3072 * 80 * 2 * 4 * 128, 1) / Fraction(2970 * 10**9)
    assert per_head.tpot - plain.tpot == (Fraction(64, 8) - 1) * read
    assert per_head.need_per_device == plain.need_per_device  # the cache's size is unchanged
    assert per_head.ttft == plain.ttft  # the prefill is another kernel


def test_a_multi_head_model_is_unchanged(shipped: KnowledgeBase) -> None:
    s = replace(_base(), model="models/llama-2-7b", count=1, tp=1)
    assert (
        outcome(s, shipped).tpot == outcome(replace(s, kv_read_per_query_head=True), shipped).tpot
    )


def test_only_the_declared_versions_gqa_rows_state_it(shipped: KnowledgeBase) -> None:
    for receipt in (V061, V08):
        record = shipped.get(receipt)
        assert record is not None
        for index, row in enumerate(record.data["results"]):
            result = evaluate_row(shipped, record, index, row, calibration=False)
            says = any(NOTE in a for a in result.assumed)
            gqa = result.conditions.get("model") == "models/llama-2-70b"
            assert says == (receipt == V061 and gqa), (receipt, row["label"])
            if says:  # v0.6.1's 70B rows: +41% to +139% before, in the band now, except the
                # A100 FP16 128/2048 row since session 24 (hbm_streamed_rate): -28.7%, a miss
                missed = row["label"] == "Llama 2 70B, A100 FP16, 128/2048"
                state = "contradicted" if missed else "validated"
                assert result.state == state, (row["label"], result.error)
