"""The B200's measured FP4 matmul rate prices its FP4 scenarios (issue 35, session 16).

receipts/deepgemm-b200-fp4-gemm holds the B200 rows of a DeepGEMM pull request's dense FP4 GEMM
table (DeepGEMM's MXF4 kernel and cuBLAS beside it). Its best row carries the metric the composed
ledger reads as a measured matmul rate (kb/data/end-to-end.json `compute_rate`), so an FP4
scenario on the B200 runs its matmuls there, under two thirds of the datasheet's dense FP4, and
its end-to-end rows no longer say "datasheet peak". The H100's FP8 rate is not touched: it was
already a measured one (stas00's MAMF), which the tests below pin.
"""

from __future__ import annotations

from fractions import Fraction

from kb.ledger.endtoend import evaluate_row
from kb.ledger.scenario import Scenario, compute_rate
from kb.model import KnowledgeBase
from tests.ledger.ledger_fixtures import figure as _value

B200 = "hardware/nvidia-b200"
GEMM = "receipts/deepgemm-b200-fp4-gemm"
MAMF = "receipts/stas00-mamf-matmul"
LLAMA_70B = "receipts/trtllm-v1.0-llama-3.3-70b-throughput-h100-h200-b200"


def _scenario(hardware: str, precision: str) -> Scenario:
    return Scenario(
        model="models/llama-3.3-70b", hardware=hardware, count=1, weight_precision=precision
    )


def test_fp4_on_b200_is_priced_at_the_best_measured_row(shipped: KnowledgeBase) -> None:
    pointer = compute_rate(_scenario(B200, "fp4"), shipped)
    assert pointer == f"{GEMM}#results.0.value"
    record = shipped.get(GEMM)
    assert record is not None
    rows = [Fraction(str(r["value"]["value"])) for r in record.data["results"]]
    assert _value(shipped, pointer) == max(rows)
    peak = _value(shipped, f"{B200}#compute.fp4")
    assert Fraction(1, 2) < _value(shipped, pointer) / peak < Fraction(2, 3)


def test_fp8_rates_stay_where_they_were(shipped: KnowledgeBase) -> None:
    b200 = compute_rate(_scenario(B200, "fp8"), shipped)
    h100 = compute_rate(_scenario("hardware/nvidia-h100-sxm", "fp8"), shipped)
    assert b200.startswith(f"{MAMF}#") and h100.startswith(f"{MAMF}#")
    assert _value(shipped, h100) < _value(shipped, "hardware/nvidia-h100-sxm#compute.fp8")


def _row(shipped: KnowledgeBase, label: str) -> tuple[str, str | None]:
    record = shipped.get(LLAMA_70B)
    assert record is not None
    for index, row in enumerate(record.data["results"]):
        if row.get("label") == label:
            result = evaluate_row(shipped, record, index, row, calibration=False)
            assert result.predicted is not None, result.reason
            assert not any("datasheet peak" in a for a in result.assumed), result.assumed
            return result.state, result.reason
    raise AssertionError(f"no row {label!r} in {LLAMA_70B}")


def test_the_b200_fp4_rows_are_priced_at_it(shipped: KnowledgeBase) -> None:
    assert _row(shipped, "B200, TP1, 5000/500")[0] == "validated"
    assert _row(shipped, "B200, TP1, 128/2048")[0] == "validated"
    # A miss stays a miss: the 2048/128 row is still too fast at the measured rate.
    assert _row(shipped, "B200, TP1, 2048/128")[0] == "contradicted"
