"""HBM reads at the measured STREAM rate, each engine's overhead at the rate it was fitted with.

kb/data/end-to-end.json declares `memory_rate`: an end-to-end row's reads are priced at
the Triad row of a `memory-stream` receipt of its accelerator where one exists, else at
the datasheet bandwidth (said on the row). An engine's per-layer overhead is the
measured step less the reads kb models, so with measured reads it is the fit restated at
the calibration GPU's measured rate (`per_layer_overhead.at_measured_memory`); an engine
without one keeps its datasheet-rate fit, and the row says so. kb ledger's placements and
kb plan keep the datasheet rate and the datasheet-rate fit.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

from kb.ledger.endtoend import evaluate_row
from kb.ledger.quantities import figure
from kb.ledger.scenario import (
    MEMORY_METRIC,
    Scenario,
    measured_memory_rate,
    memory_rate,
    memory_rate_peak,
    outcome,
)
from kb.model import KnowledgeBase, Record

H100 = "hardware/nvidia-h100-sxm"
B200 = "hardware/nvidia-b200"
MI300X = "hardware/amd-instinct-mi300x"
STREAM_H100 = "receipts/azure-nd-h100-v5-hbm-bandwidth"


def _value(kb: KnowledgeBase, pointer: str) -> Fraction:
    """The figure a pointer names, in base units (B/s, s)."""
    record_id, _, field = pointer.partition("#")
    record = kb.get(record_id)
    assert record is not None
    return figure(record.get(field), "").value


def _row(outcome_rows: tuple[object, ...], name: str) -> object:
    return next(r for r in outcome_rows if getattr(r, "name", None) == name)


def test_the_rule_is_declared_before_pricing() -> None:
    data = json.loads(
        (Path(__file__).resolve().parents[2] / "kb" / "data" / "end-to-end.json").read_text()
    )
    rule = data["memory_rate"]
    assert "memory-stream" in rule["measured"] and "Triad" in rule["measured"]
    assert "at_measured_memory" in rule["overhead"]
    assert rule["reason"]


def test_the_triad_row_of_the_accelerators_own_receipt(shipped: KnowledgeBase) -> None:
    assert measured_memory_rate(shipped, H100) == f"{STREAM_H100}#results.3.value"
    pointer = measured_memory_rate(shipped, MI300X)
    assert pointer is not None and pointer.startswith("receipts/azure-nd-mi300x-v5-hbm")
    assert _value(shipped, pointer) < _value(shipped, f"{MI300X}#memory.bandwidth")
    assert measured_memory_rate(shipped, B200) is None  # nothing measured: nothing borrowed


def test_only_when_asked(shipped: KnowledgeBase) -> None:
    plain = Scenario(model="models/llama-2-7b", hardware=H100, count=1)
    asked = Scenario(model="models/llama-2-7b", hardware=H100, count=1, measured_memory=True)
    assert memory_rate(plain, shipped) == f"{H100}#memory.bandwidth"
    assert memory_rate(asked, shipped) == f"{STREAM_H100}#results.3.value"
    none_here = Scenario(model="models/llama-2-7b", hardware=B200, count=1, measured_memory=True)
    assert memory_rate_peak(none_here, shipped)


def test_the_read_scales_by_the_rate_and_the_overhead_is_the_restated_fit(
    shipped: KnowledgeBase,
) -> None:
    base = dict(
        model="models/llama-3.1-70b",
        hardware=H100,
        count=8,
        tp=8,
        context=2048,
        engine="engines/vllm",
    )
    peak = outcome(Scenario(**base), shipped)  # type: ignore[arg-type]
    measured = outcome(Scenario(**base, measured_memory=True), shipped)  # type: ignore[arg-type]
    ratio = _value(shipped, f"{H100}#memory.bandwidth") / _value(
        shipped, f"{STREAM_H100}#results.3.value"
    )
    useful_peak, useful_measured = _row(peak.rows, "useful"), _row(measured.rows, "useful")
    assert Fraction(useful_measured.value) == Fraction(useful_peak.value) * ratio  # type: ignore[attr-defined]
    fit = _value(shipped, "flops/serving-tp-vs-dp#claims.7.expect")
    restated = _value(shipped, "flops/serving-tp-vs-dp#claims.9.expect")
    assert restated < fit
    layers = 80
    over_peak, over_measured = _row(peak.rows, "overhead"), _row(measured.rows, "overhead")
    assert Fraction(over_peak.value) == layers * fit  # type: ignore[attr-defined]
    assert Fraction(over_measured.value) == layers * restated  # type: ignore[attr-defined]
    assert "restated at that GPU's measured STREAM rate" in over_measured.formula  # type: ignore[attr-defined]


def test_an_engine_without_a_restated_fit_keeps_its_own_and_says_so(
    shipped: KnowledgeBase,
) -> None:
    s = Scenario(
        model="models/llama-2-7b",
        hardware=H100,
        count=1,
        context=1024,
        engine="engines/sglang",
        measured_memory=True,
    )
    over = _row(outcome(s, shipped).rows, "overhead")
    fit = _value(shipped, "flops/tp-decode-allreduce-time#claims.1.expect")
    assert Fraction(over.value) == 32 * fit  # type: ignore[attr-defined]
    assert "datasheet bandwidth" in over.formula  # type: ignore[attr-defined]


def test_a_row_without_a_measured_rate_says_datasheet_peak(shipped: KnowledgeBase) -> None:
    record = shipped.get("receipts/sglang-gpt-oss-120b-b200-h100-batch1")
    assert record is not None
    rows = record.data["results"]
    index = next(i for i, r in enumerate(rows) if r.get("hardware") == B200)
    result = evaluate_row(shipped, record, index, rows[index], calibration=False)
    assert any("HBM reads at the datasheet peak" in a for a in result.assumed)


def test_a_malformed_stream_row_is_skipped_not_a_traceback() -> None:
    kb = KnowledgeBase(root="test")
    kb.add(
        Record(
            "receipts/zz-bad-stream",
            "receipt",
            "receipts/zz-bad-stream.yaml",
            {
                "pattern": "memory-stream",
                "hardware": [MI300X],
                "results": ["not a row", {"metric": "other"}, {"metric": MEMORY_METRIC}],
            },
        )
    )
    assert measured_memory_rate(kb, MI300X) is None
