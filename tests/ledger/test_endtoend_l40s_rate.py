"""The L40S's measured FP8 matmul rate prices its FP8 scenarios (issue 35, part THROUGHPUT).

receipts/sglang-l40s-fp8-gemm-llama-3.1-8b-shapes holds the L40S rows of sgl-kernel's FP8 GEMM
benchmark (SGLang PR 6756), converted from the script's "GB/s" label by its own formula. Its best
row carries the metric the composed ledger reads as a measured matmul rate (kb/data/end-to-end.json
`compute_rate`), so an FP8 scenario on the L40S runs its matmuls there, about half the datasheet's
dense FP8 figure, and an end-to-end row on the L40S no longer says "datasheet peak".
"""

from __future__ import annotations

from fractions import Fraction

from kb.ledger.endtoend import evaluate_row
from kb.ledger.scenario import Scenario, compute_rate, compute_rate_peak
from kb.model import KnowledgeBase
from tests.ledger.ledger_fixtures import figure as _value

L40S = "hardware/nvidia-l40s"
GEMM = "receipts/sglang-l40s-fp8-gemm-llama-3.1-8b-shapes"
PEAK_ROWS = (
    "receipts/trtllm-v0.8-l40s-peak-throughput",
    "receipts/trtllm-v0.9-l40s-peak-throughput",
)

# The printed "GB/s" of the best row and its shape (the script: (2MNK + MN) * 4 B / s).
PRINTED, M, N, K = Fraction("1.448570e6"), 2048, 6144, 4096


def test_the_best_row_is_the_scripts_figure_converted_to_flops() -> None:
    flops = PRINTED * 10**9 / 4 * Fraction(2 * M * N * K, 2 * M * N * K + M * N)
    assert round(flops / 10**12, 1) == Fraction("362.1")


def test_fp8_on_l40s_is_priced_at_the_best_measured_row(shipped: KnowledgeBase) -> None:
    s = Scenario(model="models/llama-2-7b", hardware=L40S, count=1, weight_precision="fp8")
    pointer = compute_rate(s, shipped)
    assert pointer == f"{GEMM}#results.0.value"
    record = shipped.get(GEMM)
    assert record is not None
    rows = [Fraction(str(r["value"]["value"])) for r in record.data["results"]]
    assert _value(shipped, pointer) == max(rows)
    peak = _value(shipped, f"{L40S}#compute.fp8")
    assert Fraction(2, 5) < _value(shipped, pointer) / peak < Fraction(3, 5)  # about half


def test_bf16_on_l40s_stays_at_the_peak(shipped: KnowledgeBase) -> None:
    s = Scenario(model="models/llama-2-7b", hardware=L40S, count=1, weight_precision="bf16")
    assert compute_rate_peak(s, shipped)


def test_the_tp1_peak_throughput_rows_are_priced_at_it_and_validate(
    shipped: KnowledgeBase,
) -> None:
    for receipt in PEAK_ROWS:
        record = shipped.get(receipt)
        assert record is not None
        for index, row in enumerate(record.data["results"]):
            result = evaluate_row(shipped, record, index, row, calibration=False)
            assert result.predicted is not None, result.reason
            assert not any("datasheet peak" in a for a in result.assumed), result.assumed
            if row.get("tp") == 1:  # no all-reduce: the matmul rate and the reads alone
                assert result.state == "validated", (receipt, row["label"], result.error)
