"""The RTX PRO 6000 Server Edition's measured matmul rates, and its memory at the datasheet.

receipts/aiconfigurator-rtx-pro-6000-server-gemm holds the best rows of NVIDIA AIConfigurator's
GEMM tables measured on the card (issue 35, session 25, w25-rtxrate). Each format's best row
carries the metric the composed ledger reads as a measured matmul rate (kb/data/end-to-end.json
`compute_rate`), so FP4, FP8 and BF16 matmuls on the card run there, below the datasheet-derived
dense figures. No measured bandwidth of the card passed the criterion, so its streams stay at
the datasheet rate, said on the row (`hbm_streamed_rate`). The latency-to-rate arithmetic of
each row is checked against the latency its locator quotes.
"""

from __future__ import annotations

import re
from fractions import Fraction

import pytest

from kb.ledger.endtoend import evaluate_row
from kb.ledger.hbm_rate import streamed_rate
from kb.ledger.matmul_rates import MATMUL_METRIC
from kb.ledger.scenario import Scenario, compute_rate
from kb.model import KnowledgeBase
from tests.ledger.ledger_fixtures import figure as _value

CARD = "hardware/nvidia-rtx-pro-6000-blackwell-server-edition"
GEMM = "receipts/aiconfigurator-rtx-pro-6000-server-gemm"
RTX = "receipts/trtllm-v1.0-rtx-pro-6000-pipeline-parallel-throughput"
SHAPE = re.compile(r"m (\d+), n (\d+), k (\d+).*?latency ([0-9.]+) \(ms\)")


def _scenario(precision: str) -> Scenario:
    return Scenario(
        model="models/llama-3.3-70b", hardware=CARD, count=1, weight_precision=precision
    )


@pytest.mark.parametrize(("precision", "index"), [("fp4", 0), ("fp8", 1), ("bf16", 2)])
def test_each_format_is_priced_at_its_best_measured_row(
    shipped: KnowledgeBase, precision: str, index: int
) -> None:
    pointer = compute_rate(_scenario(precision), shipped)
    assert pointer == f"{GEMM}#results.{index}.value"
    record = shipped.get(GEMM)
    assert record is not None
    rows = [r for r in record.data["results"] if r["precision"] == precision]
    assert sum(r["metric"] == MATMUL_METRIC for r in rows) == 1
    best = _value(shipped, pointer)
    assert best == max(Fraction(str(r["value"]["value"])) for r in rows)
    assert best < _value(shipped, f"{CARD}#compute.{precision}")


def test_every_rate_is_its_quoted_latency_in_flops(shipped: KnowledgeBase) -> None:
    record = shipped.get(GEMM)
    assert record is not None
    for row in record.data["results"]:
        found = SHAPE.search(row["value"]["locator"])
        assert found is not None, row["label"]
        m, n, k, ms = (Fraction(x) for x in found.groups())
        tflops = 2 * m * n * k / (ms / 1000) / 10**12
        assert abs(tflops - Fraction(str(row["value"]["value"]))) < Fraction(1, 20), row["label"]


def test_memory_stays_at_the_datasheet_rate(shipped: KnowledgeBase) -> None:
    pointer, note = streamed_rate(shipped, CARD)
    assert pointer == f"{CARD}#memory.bandwidth" and note


def test_the_rows_name_the_measured_rate_and_a_miss_stays_a_miss(shipped: KnowledgeBase) -> None:
    record = shipped.get(RTX)
    assert record is not None
    states: dict[int, str] = {}
    for index in (3, 24):  # PP8 128/128, PP1 2048/128
        row = record.data["results"][index]
        result = evaluate_row(shipped, record, index, row, calibration=False)
        assert result.predicted is not None, result.reason
        assert any(f"measured rate {GEMM}#results.0.value" in a for a in result.assumed)
        states[index] = result.state
    assert states == {3: "contradicted", 24: "validated"}
