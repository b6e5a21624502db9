"""The prefill pass's non-matmul kernels at a measured per-layer time (kernels.py).

kb/data/end-to-end.json `prefill_kernels` declares the rule: a `memory-stream` receipt's rows
of metric "non-matmul kernel time per layer" for the scenario's model, accelerator and tp
add L * max(0, t_k(M) - t_k(1)) to the prefill pass, M = the replica's prompt tokens, read
as the matmul curve is read (exact row, linear between rows, the largest row's time per
token beyond it). A hand check of one row per reading, and of what it leaves alone.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

from kb.ledger.endtoend import evaluate_row
from kb.ledger.kernels import KERNEL_TIME_METRIC, kernel_rows, prefill_kernels_receipt
from kb.ledger.scenario import Scenario, outcome
from kb.model import KnowledgeBase

KERNELS = "receipts/vidur-llama-2-non-matmul-kernel-time"
FIRST_TOKEN = "receipts/trtllm-v0.9-first-token-latency-batch1"
H100 = "hardware/nvidia-h100-sxm"
H200 = "hardware/nvidia-h200-sxm"
LLAMA_2_7B = "models/llama-2-7b"
US = Fraction(1, 10**6)


def _us(shipped: KnowledgeBase, tokens: int) -> Fraction:
    """The receipt's H100 Llama-2-7B TP1 row of `tokens`, in seconds, as written."""
    record = shipped.get(KERNELS)
    assert record is not None
    for row in record.get("results"):
        if row["model"] == LLAMA_2_7B and row["hardware"] == H100 and row["tp"] == 1:
            if row["input_tokens"] == tokens:
                return Fraction(str(row["value"]["value"])) * US
    raise AssertionError(f"no row of {tokens} tokens")


def _fp8(batch: int, inputs: int, outputs: int = 1) -> Scenario:
    return Scenario(
        model=LLAMA_2_7B,
        hardware=H100,
        count=1,
        batch=batch,
        input_tokens=inputs,
        output_tokens=outputs,
        engine="engines/tensorrt-llm",
        weight_precision="fp8",
        kv_precision="fp8",
        overhead_fallback="engines/nemo",
    )


def test_the_rule_is_declared_before_pricing() -> None:
    data = json.loads(
        (Path(__file__).resolve().parents[2] / "kb" / "data" / "end-to-end.json").read_text()
    )
    rule = data["prefill_kernels"]
    assert KERNEL_TIME_METRIC in rule["measured"]
    assert "t_k(M) - t_k(1)" in rule["what"]
    assert rule["applies_to"] and rule["reason"] and rule["not_covered"] and rule["sources"]
    assert "+-25%" in rule["band"]


def test_the_receipt_is_found_for_its_cases_only(shipped: KnowledgeBase) -> None:
    assert prefill_kernels_receipt(shipped, LLAMA_2_7B, H100, 1) == KERNELS
    assert prefill_kernels_receipt(shipped, "models/llama-2-70b", H100, 8) == KERNELS
    assert prefill_kernels_receipt(shipped, LLAMA_2_7B, H100, 3) is None  # no TP3 rows
    assert prefill_kernels_receipt(shipped, LLAMA_2_7B, H200, 1) is None  # not profiled
    assert prefill_kernels_receipt(shipped, "models/llama-3.1-8b", H100, 1) is None
    rows = kernel_rows(shipped.get(KERNELS), LLAMA_2_7B, H100, 1)
    assert [m for m, _, _ in rows] == [1, 128, 256, 512, 1024, 2048, 4096]


def test_first_token_row_by_hand(shipped: KnowledgeBase) -> None:
    """TensorRT-LLM v0.9, LLaMA 7B FP8 on one H100, batch 1, a 2048-token prompt (row 9).

    The 2048-token row is exact: 32 layers x (179.5 - 19.0) us = 5.136 ms, added beside the
    read-or-matmul part; the row's prediction is that TTFT and names the receipt."""
    record = shipped.get(FIRST_TOKEN)
    assert record is not None
    row = record.get("results")[9]
    assert (row["hardware"], row["input_tokens"], row["tp"]) == (H100, 2048, 1)
    result = evaluate_row(shipped, record, 9, row, False)
    kernels = 32 * (_us(shipped, 2048) - _us(shipped, 1))
    assert kernels == Fraction(5136, 10**6)
    assert result.outcome is not None and result.outcome.request is not None
    request = result.outcome.request
    assert request.prefill_kernels == kernels
    parts = request.prefill_read + request.prefill_overhead + request.prefill_collectives
    assert request.ttft == parts + kernels
    assert result.predicted == request.ttft
    assert any(KERNELS in text for text in result.assumed)


def test_a_static_batch_beyond_the_largest_row(shipped: KnowledgeBase) -> None:
    """84 prompts of 2048 tokens in one pass: M = 172032, the 4096-token row's time per token."""
    request = outcome(_fp8(84, 2048, 128), shipped).request
    assert request is not None
    per_token = _us(shipped, 4096) / 4096
    assert request.prefill_kernels == 32 * (per_token * 84 * 2048 - _us(shipped, 1))


def test_between_rows_and_the_calibration_prompt(shipped: KnowledgeBase) -> None:
    """NeMo's calibration request (128 tokens, batch one, H100 TP1): the term is zero there,
    so the per-layer overhead fitted on it holds what it held; at batch 6 (768 tokens) it
    is linear between the 512- and 1024-token rows."""
    at_128 = outcome(_fp8(1, 128), shipped).request
    assert at_128 is not None and at_128.prefill_kernels == 0
    assert _us(shipped, 128) == _us(shipped, 1)
    at_768 = outcome(_fp8(6, 128), shipped).request
    assert at_768 is not None
    between = (_us(shipped, 512) + _us(shipped, 1024)) / 2
    assert at_768.prefill_kernels == 32 * (between - _us(shipped, 1))


def test_a_case_without_rows_is_unchanged(shipped: KnowledgeBase) -> None:
    """The same prompt on an H200 (no profile): no term, and TTFT is its other parts."""
    s = Scenario(
        model=LLAMA_2_7B,
        hardware=H200,
        count=1,
        input_tokens=2048,
        output_tokens=1,
        weight_precision="fp8",
    )
    request = outcome(s, shipped).request
    assert request is not None and request.prefill_kernels == 0
    parts = request.prefill_read + request.prefill_overhead + request.prefill_collectives
    assert request.ttft == parts
