"""TensorRT-LLM v1.0 Llama 3.1 8B maximum-load rows exceed the 16-bit KV-cache bound.

At maximum load every decode step reads each running sequence's cache, so the output rate is
at most HBM rate / (mean context x KV bytes per token), whatever the batch. docs/ledger.md
says the H100 rows at 128/2048 and 2048/2048 and the H200 row at 2048/2048 lie above that
bound for a 16-bit cache: the runs did not read one. Since session 22 the rows state an FP8
cache from sources independent of their values (tests/ledger/test_llama8b_fp8_kv_cache.py);
this test holds the bound's arithmetic to the shipped records.
"""

from __future__ import annotations

from fractions import Fraction

from kb.model import KnowledgeBase

RECEIPT = "receipts/trtllm-v1.0-llama-3.1-8b-throughput-h100-h200"


def _bound(kb: KnowledgeBase, hardware: str, context: int, kv_bytes: int) -> Fraction:
    model = kb.get("models/llama-3.1-8b")
    device = kb.get(hardware)
    assert model is not None and device is not None
    geometry = model.data["geometry"]
    per_token = 2 * geometry["layers"] * geometry["kv_heads"] * geometry["head_dim"] * kv_bytes
    bandwidth = device.data["memory"]["bandwidth"]
    rate = Fraction(str(bandwidth["value"])) * (10**9 if bandwidth["unit"] == "GB/s" else 10**12)
    return rate / (context * per_token)


def _rows(kb: KnowledgeBase) -> dict[str, dict[str, object]]:
    record = kb.get(RECEIPT)
    assert record is not None
    return {str(r["label"]): dict(r) for r in record.data["results"]}


def test_three_rows_exceed_the_16_bit_bound_and_none_the_8_bit_one(shipped: KnowledgeBase) -> None:
    rows = _rows(shipped)
    above = []
    for label, row in rows.items():
        if row["output_tokens"] == 128:
            continue  # short outputs: the prefill dominates, the bound is far away
        context = int(str(row["input_tokens"])) + int(str(row["output_tokens"])) // 2
        measured = Fraction(str(row["value"]["value"]))  # type: ignore[index]
        hardware = str(row["hardware"])
        if measured > _bound(shipped, hardware, context, 2):
            above.append(label)
        assert measured < _bound(shipped, hardware, context, 1)  # an FP8 cache fits the rates
    assert sorted(above) == ["H100, TP1, 128/2048", "H100, TP1, 2048/2048", "H200, TP1, 2048/2048"]


def test_the_bound_is_the_hand_worked_one(shipped: KnowledgeBase) -> None:
    # 3.35 TB/s / (3,072 tokens x 131,072 B) = 8,320 tok/s; the page measured 9,305.
    bound = _bound(shipped, "hardware/nvidia-h100-sxm", 2048 + 1024, 2)
    assert round(bound) == 8320
    assert _rows(shipped)["H100, TP1, 2048/2048"]["precision"] == "fp8"
    assert _rows(shipped)["H100, TP1, 2048/2048"]["kv_precision"] == "fp8"  # stated, session 22
