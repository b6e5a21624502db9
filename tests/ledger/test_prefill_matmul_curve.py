"""The prefill pass's matmuls at a measured per-layer time by tokens (kb/ledger/prefill.py).

kb/data/end-to-end.json `prefill_matmul` declares the rule: a `matmul` receipt's rows of
metric "linear-layer matmul time per layer" for the scenario's model, accelerator, tp and
16-bit weights price the prefill's matmuls as L * t(M) at M = the replica's prompt tokens;
linear in time between bracketing rows, the largest row's time per token beyond it, and
no curve below the smallest row. Only the prefill pass: the decode step is unchanged.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

from kb.ledger.prefill import MATMUL_TIME_METRIC, curve_rows, time_at
from kb.ledger.scenario import Scenario, outcome, prefill_matmul_receipt
from kb.model import KnowledgeBase

CURVE = "receipts/vidur-llama-2-linear-layer-matmul-time"
A100 = "hardware/nvidia-a100-80gb-sxm4"
H100 = "hardware/nvidia-h100-sxm"
US = Fraction(1, 10**6)


def _row(shipped: KnowledgeBase, tokens: int, tp: int = 1, model: str = "llama-2-7b") -> Fraction:
    record = shipped.get(CURVE)
    assert record is not None
    for row in record.get("results"):
        if (
            row["model"] == f"models/{model}"
            and row["hardware"] == A100
            and row["tp"] == tp
            and row["input_tokens"] == tokens
        ):
            return Fraction(str(row["value"]["value"])) * US
    raise AssertionError(f"no row of {tokens} tokens")


def _kernel_row(shipped: KnowledgeBase, tokens: int) -> Fraction:
    """The A100 Llama-2-7B TP1 row of receipts/vidur-llama-2-non-matmul-kernel-time."""
    record = shipped.get("receipts/vidur-llama-2-non-matmul-kernel-time")
    assert record is not None
    for row in record.get("results"):
        if row["model"] == "models/llama-2-7b" and row["hardware"] == A100 and row["tp"] == 1:
            if row["input_tokens"] == tokens:
                return Fraction(str(row["value"]["value"])) * US
    raise AssertionError(f"no kernel row of {tokens} tokens")


def test_the_rule_is_declared_before_pricing() -> None:
    data = json.loads(
        (Path(__file__).resolve().parents[2] / "kb" / "data" / "end-to-end.json").read_text()
    )
    rule = data["prefill_matmul"]
    assert MATMUL_TIME_METRIC in rule["measured"]
    assert rule["reason"] and rule["beyond_the_largest_row"] and rule["below_the_smallest_row"]


def test_curve_reading_exact_between_beyond_below() -> None:
    rows = [(64, Fraction(2), 0), (128, Fraction(3), 1), (256, Fraction(7), 2)]
    assert time_at(rows, 128) == (Fraction(3), "row 1 (128 tokens)")
    value, how = time_at(rows, 192) or (None, "")
    assert value == 5 and "between rows 1 (128 tokens) and 2 (256)" in how
    value, how = time_at(rows, 512) or (None, "")
    assert value == 14 and "beyond the curve" in how  # 7 per 256 tokens, times 512
    assert time_at(rows, 32) is None  # below the smallest row: no curve
    assert time_at([], 128) is None


def test_rows_of_another_case_are_not_used(shipped: KnowledgeBase) -> None:
    record = shipped.get(CURVE)
    assert curve_rows(record, "models/llama-2-7b", A100, 1)
    assert curve_rows(record, "models/llama-2-7b", A100, 3) == []  # no TP3 row
    assert curve_rows(record, "models/llama-2-7b", A100, 1, "fp8") == []  # 16-bit rows only
    assert curve_rows(record, "models/llama-3.1-8b", A100, 1) == []  # another model's shapes
    s = Scenario(
        model="models/llama-2-7b",
        hardware=H100,
        count=1,
        input_tokens=128,
        output_tokens=1,
        weight_precision="fp8",
    )
    assert prefill_matmul_receipt(s, shipped) is None  # an FP8 prefill keeps the MAMF rate


def test_ttft_is_the_layers_times_the_row_plus_the_rest(shipped: KnowledgeBase) -> None:
    """Llama-2-7B on one A100, batch 1, a 128-token prompt: the row of exactly 128 tokens.

    Without the curve the prefill is max(weight read, T_math at the MAMF rate): the
    difference of the two TTFTs is exactly 32 x t(128) minus that max, plus the prompt's
    non-matmul kernels, which the peak question leaves out as it leaves out the curve
    (`prefill_kernels`, session 25: 32 x (t_k(128) - t_k(1))); nothing else moves."""
    kw = dict(model="models/llama-2-7b", hardware=A100, count=1, batch=1)
    req = dict(input_tokens=128, output_tokens=1, engine="engines/tensorrt-llm")
    with_curve = Scenario(**kw, **req, overhead_fallback="engines/nemo")  # type: ignore[arg-type]
    assert prefill_matmul_receipt(with_curve, shipped) == CURVE
    measured = outcome(with_curve, shipped)
    peak = outcome(
        Scenario(**kw, **req, overhead_fallback="engines/nemo", peak_compute=True),  # type: ignore[arg-type]
        shipped,
    )
    assert (
        prefill_matmul_receipt(
            Scenario(**kw, **req, peak_compute=True),
            shipped,  # type: ignore[arg-type]
        )
        is None
    )
    assert measured.ttft is not None and peak.ttft is not None
    assert measured.tpot == peak.tpot  # below the ridge the decode step does not move
    # peak pricing: the prefill is the weight read (above T_math at 312 TFLOP/s for 128 tokens)
    read = Fraction(2 * 6_738_149_376, 1_700 * 10**9)
    layers = 32
    attention = Fraction(2 * layers * 32 * 128 * 128**2, 312 * 10**12)
    math_peak = Fraction(2 * 6_738_149_376 * 128, 312 * 10**12) + attention
    assert read > math_peak
    curve = layers * _row(shipped, 128) + attention * 312 / Fraction("271.2")
    kernels = layers * (_kernel_row(shipped, 128) - _kernel_row(shipped, 1))
    assert measured.ttft - peak.ttft == curve - read + kernels


def test_beyond_the_curve_the_time_scales_with_tokens(shipped: KnowledgeBase) -> None:
    """Batch 16 x 2048 = 32768 tokens: 8 x the 4096-token row per layer (matmuls and, since
    session 25, the non-matmul kernels beyond their one-token row, `prefill_kernels`)."""
    base = dict(model="models/llama-2-7b", hardware=A100, count=1, batch=16, output_tokens=1)
    small = outcome(Scenario(**base, input_tokens=1024), shipped)  # type: ignore[arg-type]
    large = outcome(Scenario(**base, input_tokens=2048), shipped)  # type: ignore[arg-type]
    assert small.ttft is not None and large.ttft is not None
    # each beyond the curve: 16384 and 32768 tokens, 4x and 8x the 4096-token row per layer;
    # the attention is quadratic in the prompt (4x), the overhead and all-reduces absent (tp 1)
    t4096 = _row(shipped, 4096)
    mamf = Fraction("271.2") * 10**12
    att = [Fraction(2 * 32 * 16 * 32 * 128 * s**2) / mamf for s in (1024, 2048)]
    k4096, k1 = _kernel_row(shipped, 4096), _kernel_row(shipped, 1)
    assert small.ttft == 32 * 4 * t4096 + att[0] + 32 * (4 * k4096 - k1)
    assert large.ttft == 32 * 8 * t4096 + att[1] + 32 * (8 * k4096 - k1)


def test_an_end_to_end_row_names_the_curve_among_its_assumptions(shipped: KnowledgeBase) -> None:
    """TensorRT-LLM v0.9's Llama 7B first-token row on A100 (16-bit, TP1, 128 tokens)."""
    from kb.ledger.endtoend import evaluate_row

    record = shipped.get("receipts/trtllm-v0.9-first-token-latency-batch1")
    assert record is not None
    rows = record.get("results")
    index = next(
        i
        for i, r in enumerate(rows)
        if r.get("model") == "models/llama-2-7b"
        and r.get("hardware", "") == A100
        and r.get("input_tokens") == 128
    )
    result = evaluate_row(shipped, record, index, rows[index], calibration=False)
    assert f"prefill matmuls at the per-layer times of {CURVE}" in result.assumed
    # and an FP8 row of the same table does not use it
    fp8 = next(
        i
        for i, r in enumerate(rows)
        if r.get("model") == "models/llama-2-7b"
        and r.get("hardware", "") == H100
        and r.get("input_tokens") == 128
    )
    other = evaluate_row(shipped, record, fp8, rows[fp8], calibration=False)
    assert not any(CURVE in a for a in other.assumed)
