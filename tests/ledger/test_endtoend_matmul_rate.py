"""The scenario's matmul rate: measured where a matmul receipt states it, else the peak.

kb/data/end-to-end.json declares it (`compute_rate`): a row of a `matmul` receipt naming
the accelerator, the format and the metric "maximum achievable matmul throughput" gives
the compute rate; otherwise the datasheet peak `hardware#compute.<format>`, and the
end-to-end row says so among its assumptions.
"""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from pathlib import Path

from kb.ledger.endtoend import evaluate_row
from kb.ledger.matmul_rates import MATMUL_METRIC, measured_matmul_rate
from kb.ledger.scenario import (
    Scenario,
    compute_rate,
    compute_rate_peak,
    outcome,
)
from kb.model import KnowledgeBase, Record

MAMF = "receipts/stas00-mamf-matmul"
A100 = "hardware/nvidia-a100-80gb-sxm4"
H100 = "hardware/nvidia-h100-sxm"
MI300X = "hardware/amd-instinct-mi300x"
MI325X = "hardware/amd-instinct-mi325x"


def test_the_rule_is_declared_before_pricing() -> None:
    data = json.loads(
        (Path(__file__).resolve().parents[2] / "kb" / "data" / "end-to-end.json").read_text()
    )
    assert "matmul" in data["compute_rate"]["measured"]
    assert data["compute_rate"]["reason"]


def test_measured_rate_where_a_receipt_names_accelerator_and_format(
    shipped: KnowledgeBase,
) -> None:
    assert measured_matmul_rate(shipped, A100, "bf16") == f"{MAMF}#results.0.value"
    assert measured_matmul_rate(shipped, H100, "fp8") == f"{MAMF}#results.2.value"
    # no row for this pair: no rate borrowed from another accelerator or format
    assert measured_matmul_rate(shipped, A100, "fp8") is None
    # the MAMF table's MI325X FP8 cell is empty and no other receipt has one: none
    assert measured_matmul_rate(shipped, MI325X, "fp8") is None
    assert measured_matmul_rate(shipped, MI300X, "bf16") is not None


def test_peak_is_used_and_said_where_nothing_was_measured(shipped: KnowledgeBase) -> None:
    s = Scenario(
        model="models/llama-2-7b", hardware=MI325X, count=1, batch=1, weight_precision="fp8"
    )
    assert compute_rate(s, shipped) == f"{MI325X}#compute.fp8"
    assert compute_rate_peak(s, shipped)
    a100 = Scenario(model="models/llama-2-7b", hardware=A100, count=1, batch=1)
    assert not compute_rate_peak(a100, shipped)
    forced = Scenario(model="models/llama-2-7b", hardware=A100, count=1, peak_compute=True)
    assert compute_rate(forced, shipped) == f"{A100}#compute.bf16"


def test_prefill_at_the_measured_rate_is_slower_by_the_rate_ratio(shipped: KnowledgeBase) -> None:
    """A compute-bound prefill (batch 16 x 2048 prompt) scales with 1/compute rate.

    Llama 3.1 8B: no per-layer matmul curve of it (kb/ledger/prefill.py), so the prefill's
    matmuls are the ridge class's T_math at the compute rate."""
    base = dict(model="models/llama-3.1-8b", hardware=A100, count=1, batch=16)
    req = dict(input_tokens=2048, output_tokens=1)
    measured = outcome(Scenario(**base, **req), shipped)  # type: ignore[arg-type]
    peak = outcome(Scenario(**base, **req, peak_compute=True), shipped)  # type: ignore[arg-type]
    assert measured.ttft is not None and peak.ttft is not None
    assert measured.ttft > peak.ttft
    record = shipped.get(A100)
    assert record is not None
    peak_rate = Fraction(str(record.get("compute.bf16.value")))  # TFLOP/s as written
    mamf = shipped.get(MAMF)
    assert mamf is not None
    achieved = Fraction(str(mamf.get("results.0.value.value")))
    # the prefill's matmul term is the largest part: the ratio is close to peak/achieved
    assert measured.ttft / peak.ttft <= peak_rate / achieved
    assert measured.ttft / peak.ttft > 1 + (peak_rate / achieved - 1) / 2


def test_an_end_to_end_row_at_peak_says_so(shipped: KnowledgeBase) -> None:
    receipt = "receipts/vllm-ci-llama-3-70b-h200-tp4-latency-batch8"
    record = shipped.get(receipt)
    assert record is not None
    # a row on H200 stating no precision (read as bf16): no measured H200 BF16 matmul row
    # (stas00's table lists none); the MI355X MXFP4 row this test used has had a measured
    # rate since session 24 (receipts/aiter-mi355x-mxfp4-gemm)
    row = copy.deepcopy(dict(record.data["results"][0]))
    assert "precision" not in row
    result = evaluate_row(shipped, record, 0, row, calibration=False)
    assert any("datasheet peak" in a for a in result.assumed)
    assert not any(a.startswith("matmuls at the measured rate") for a in result.assumed)


def test_a_malformed_matmul_row_is_skipped_not_a_traceback() -> None:
    kb = KnowledgeBase(root="test")
    kb.add(
        Record(
            "receipts/zz-bad-matmul",
            "receipt",
            "receipts/zz-bad-matmul.yaml",
            {
                "pattern": "matmul",
                "results": [
                    "not a row",
                    {"hardware": MI300X, "precision": "bf16", "metric": "other"},
                    {"hardware": MI300X, "precision": "bf16", "metric": MATMUL_METRIC},
                ],
            },
        )
    )
    # no value on the only matching row, the others malformed or of another metric
    assert measured_matmul_rate(kb, MI300X, "bf16") is None
