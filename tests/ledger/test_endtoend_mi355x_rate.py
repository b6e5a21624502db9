"""MI355X's measured FP8 matmul rate prices its FP8 scenarios (issue 35, session 14).

receipts/rocm-blog-mi355x-fp8-gemm holds AMD's ROCm-blog timings of FP8 GEMMs on one MI355X
(hipBLASLt and the blog's own kernel at two square shapes). hipBLASLt's better row carries
the metric the composed ledger reads as a measured matmul rate (kb/data/end-to-end.json
`compute_rate`), so an FP8 scenario on MI355X runs its matmuls at it, below the datasheet's
dense FP8 peak; FP4 has no such row and stays at the peak, said as such.
"""

from __future__ import annotations

from fractions import Fraction

from kb.ledger.endtoend import evaluate_row
from kb.ledger.scenario import Scenario, compute_rate, compute_rate_peak
from kb.model import KnowledgeBase
from tests.ledger.ledger_fixtures import figure as _value

MI355X = "hardware/amd-instinct-mi355x"
GEMM = "receipts/rocm-blog-mi355x-fp8-gemm"
RECIPE = "receipts/vllm-recipes-llama-3.3-70b-mi355x-tp1-8k1k-conc64"


def test_fp8_on_mi355x_is_priced_at_hipblaslts_best_row(shipped: KnowledgeBase) -> None:
    s = Scenario(model="models/llama-3.3-70b", hardware=MI355X, count=1, weight_precision="fp8")
    pointer = compute_rate(s, shipped)
    assert pointer == f"{GEMM}#results.1.value"
    record = shipped.get(GEMM)
    assert record is not None
    library = [
        Fraction(str(r["value"]["value"]))
        for r in record.data["results"]
        if r["label"].startswith("hipBLASLt")
    ]
    assert _value(shipped, pointer) == max(library)
    assert _value(shipped, pointer) < _value(shipped, f"{MI355X}#compute.fp8")


def test_fp4_on_mi355x_stays_at_the_peak(shipped: KnowledgeBase) -> None:
    s = Scenario(model="models/llama-3.3-70b", hardware=MI355X, count=1, weight_precision="fp4")
    assert compute_rate_peak(s, shipped)


def test_the_recipes_fp8_rows_no_longer_say_datasheet_peak(shipped: KnowledgeBase) -> None:
    record = shipped.get(RECIPE)
    assert record is not None
    for index, row in enumerate(record.data["results"]):
        result = evaluate_row(shipped, record, index, row, calibration=False)
        assert result.predicted is not None, result.reason
        at_peak = any("datasheet peak" in a for a in result.assumed)
        assert at_peak == (row["precision"] != "fp8"), (row["label"], result.assumed)
