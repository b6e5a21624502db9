"""MI300X's measured FP8 matmul rate prices its FP8 scenarios (issue 35, part A).

receipts/azure-nd-mi300x-v5-fp8-gemm holds the Azure AI benchmarking guide's nine
hipBLASLt FP8 GEMM rows on one MI300X; the best of them carries the metric the
composed ledger reads as a measured matmul rate (kb/data/end-to-end.json
`compute_rate`). So an FP8 scenario on MI300X runs its matmuls at that rate, not at
the datasheet's dense FP8 peak, and AMD's ROCm vLLM rows no longer say "datasheet peak".
"""

from __future__ import annotations

from fractions import Fraction

from kb.ledger.endtoend import evaluate_row
from kb.ledger.scenario import Scenario, compute_rate, compute_rate_peak, outcome
from kb.model import KnowledgeBase
from tests.ledger.ledger_fixtures import figure as _value

MI300X = "hardware/amd-instinct-mi300x"
GEMM = "receipts/azure-nd-mi300x-v5-fp8-gemm"
ROCM_70B = "receipts/rocm-vllm-llama-3.1-70b-mi300x-tp8-latency-by-batch"


def test_the_measured_rate_is_the_best_row_and_below_the_peak(shipped: KnowledgeBase) -> None:
    s = Scenario(
        model="models/llama-3.1-70b", hardware=MI300X, count=8, tp=8, weight_precision="fp8"
    )
    pointer = compute_rate(s, shipped)
    assert pointer.startswith(GEMM + "#results.")
    assert not compute_rate_peak(s, shipped)
    record = shipped.get(GEMM)
    assert record is not None
    rows = [Fraction(str(r["value"]["value"])) for r in record.data["results"]]
    assert _value(shipped, pointer) == max(rows)
    assert _value(shipped, pointer) < _value(shipped, f"{MI300X}#compute.fp8")


def test_a_compute_bound_prefill_is_slower_at_the_measured_rate(shipped: KnowledgeBase) -> None:
    base = dict(
        model="models/llama-3.1-70b",
        hardware=MI300X,
        count=8,
        tp=8,
        batch=32,
        input_tokens=2048,
        output_tokens=1,
        weight_precision="fp8",
    )
    measured = outcome(Scenario(**base), shipped)  # type: ignore[arg-type]
    peak = outcome(Scenario(**base, peak_compute=True), shipped)  # type: ignore[arg-type]
    assert measured.ttft is not None and peak.ttft is not None
    assert measured.ttft > peak.ttft


def test_the_rocm_vllm_rows_no_longer_say_datasheet_peak(shipped: KnowledgeBase) -> None:
    record = shipped.get(ROCM_70B)
    assert record is not None
    result = evaluate_row(shipped, record, 0, record.data["results"][0], calibration=False)
    assert result.predicted is not None
    assert not any("matmuls at the datasheet peak" in a for a in result.assumed)
