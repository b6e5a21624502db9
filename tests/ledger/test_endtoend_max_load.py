"""Rows of an offline maximum-load run: priced at the batch kb/data/end-to-end.json declares.

A row with `load: maximum` (TensorRT-LLM v1.0's trtllm-bench throughput tables) states
neither batch nor concurrency; kb prices it at the largest batch whose whole sequences
(input + output tokens) fit 0.95 of each device's memory after the weights, at most 4096
(`assumed.max_load_batch`). The batch is worked by hand below, from the model's geometry
and the accelerator's capacity, so a change to either the rule or the figures fails here.
"""

from __future__ import annotations

import copy
import json
import math
from fractions import Fraction
from pathlib import Path

from kb.ledger.capacity import Capacity
from kb.ledger.endtoend import NOT_EVALUABLE, conditions, declaration, evaluate_row, report_row
from kb.ledger.workload import SATURATION_BITS, _saturation
from kb.model import KnowledgeBase

LLAMA_70B = "receipts/trtllm-v1.0-llama-3.3-70b-throughput-h100-h200-b200"
MAVERICK = "receipts/trtllm-v1.0-llama-4-maverick-throughput-h100-h200-b200"
NIM = "receipts/nim-1.8-llama-3.3-70b-h100-tp2-fp8-concurrency"


def _row(kb: KnowledgeBase, receipt: str, index: int, **patch: object) -> dict[str, object]:
    record = kb.get(receipt)
    assert record is not None
    row = copy.deepcopy(dict(record.data["results"][index]))
    row.update(patch)
    return row


def test_the_assumption_is_declared_with_its_sources() -> None:
    data = json.loads(
        (Path(__file__).resolve().parents[2] / "kb" / "data" / "end-to-end.json").read_text()
    )
    entry = data["assumed"]["max_load_batch"]
    assert Fraction(entry["kv_fraction"]) == Fraction(95, 100)
    assert entry["batch_cap"] == 4096
    assert any("tuning.py" in s for s in entry["sources"])
    assert declaration().max_load_fraction == Fraction(95, 100)


def test_a_max_load_row_is_priced_at_the_hand_worked_batch(shipped: KnowledgeBase) -> None:
    # Llama 3.3 70B in FP8 on one H200, 128/2048 tokens (row 1): weights 70,552,387,584 B
    # (params x 1 B), KV 2 x 80 layers x 8 heads x 128 x 2 B = 327,680 B per token, capacity
    # 141 GiB. 0.95 x (141 GiB - weights) / (327,680 x 2,176) = 107.7: batch 107.
    record = shipped.get(LLAMA_70B)
    assert record is not None
    row = _row(shipped, LLAMA_70B, 1)
    assert row["load"] == "maximum" and "batch" not in row and "concurrency" not in row
    scenario, measures, assumed = conditions(shipped, record, row)
    expected = math.floor(
        Fraction(95, 100) * (141 * 2**30 - 70_552_387_584) / (327_680 * (128 + 2048))
    )
    assert expected == 107
    assert scenario.batch == expected
    assert scenario.context == 128 + 2048 // 2  # priced at the mean context, as every row
    assert any(a.startswith("batch 107:") and "maximum-load" in a for a in assumed)
    result = evaluate_row(shipped, record, 1, row, False)
    assert result.predicted is not None and result.error is not None
    assert result.state in ("validated", "contradicted")
    shown = report_row(result)
    assert "batch 107" in shown["conditions"]


def test_without_load_maximum_the_row_is_not_evaluable(shipped: KnowledgeBase) -> None:
    record = shipped.get(LLAMA_70B)
    assert record is not None
    row = _row(shipped, LLAMA_70B, 1)
    del row["load"]
    result = evaluate_row(shipped, record, 1, row, False)
    assert result.state == NOT_EVALUABLE
    assert result.reason == "the source states neither the batch nor the concurrency"


def test_a_max_load_row_of_another_engine_is_not_evaluable(shipped: KnowledgeBase) -> None:
    record = shipped.get(LLAMA_70B)
    assert record is not None
    data = copy.deepcopy(record.data)
    data["engine"]["record"] = "engines/vllm"
    other = type(record)(record.id, record.kind, record.path, data)
    result = evaluate_row(shipped, other, 1, _row(shipped, LLAMA_70B, 1), False)
    assert result.state == NOT_EVALUABLE
    assert "maximum-load run of engines/vllm" in result.reason


def test_the_batch_is_capped_and_a_multiple_of_the_replicas() -> None:
    roomy = Capacity(
        weights=Fraction(0),
        kv_per_token=Fraction(1),
        capacity=Fraction(10**9),
        reserve=Fraction(0),
        workspace=Fraction(0),
        block_tokens=1,
        dp=3,
        paging="",
    )
    assert roomy.max_load_batch(1, Fraction(95, 100), 4096) == 4095  # 1365 per replica x 3
    tight = Capacity(
        weights=Fraction(900),
        kv_per_token=Fraction(1),
        capacity=Fraction(1000),
        reserve=Fraction(0),
        workspace=Fraction(0),
        block_tokens=1,
        dp=1,
        paging="",
    )
    assert tight.max_load_batch(10, Fraction(1, 2), 4096) == 5  # 0.5 x 100 B / 10 B
    assert tight.max_load_batch(1000, Fraction(1, 2), 4096) == 0  # nothing fits


def test_the_expert_read_saturates_exactly() -> None:
    found = _saturation(1, 128)
    assert found is not None
    miss, bound = Fraction(127, 128), Fraction(1, 2**SATURATION_BITS)
    assert miss**found < bound <= miss ** (found - 1)
    assert _saturation(2, 2) is None and _saturation(None, 8) is None


def test_a_large_moe_batch_is_priced_and_printable(shipped: KnowledgeBase) -> None:
    record = shipped.get(MAVERICK)
    assert record is not None
    # B200, 128/2048, as one static batch (without its run's N: trtllm_bench_run steps the
    # run at a femtosecond, whose rate prints without rounding)
    row = _row(shipped, MAVERICK, 2)
    row.pop("prompts")
    result = evaluate_row(shipped, record, 2, row, False)
    assert result.predicted is not None
    assert any("rounded to a denominator" in a for a in result.assumed)
    exact = report_row(result)["exact"]
    assert Fraction(exact["predicted"]) == result.predicted  # prints and reads back


def test_the_nim_receipt_names_its_engine(shipped: KnowledgeBase) -> None:
    record = shipped.get(NIM)
    assert record is not None
    assert record.get("engine.record") == "engines/tensorrt-llm"
    result = evaluate_row(shipped, record, 0, _row(shipped, NIM, 0), False)
    assert result.predicted is not None, result.reason
