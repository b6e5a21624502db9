"""HBM streams at the measured rate (kb/data/end-to-end.json `hbm_streamed_rate`).

Declared in issue 35, session 24, before any row was priced with it. These tests hold:

- the one choice (kb.ledger.hbm_rate.streamed_rate): H100 SXM, MI300X, and since session 25
  B200, MI355X and L40S read at their measured `memory.bandwidth_achieved`; an accelerator
  without one (H20) at its datasheet `memory.bandwidth`;
- every priced end-to-end row says "datasheet rate" exactly when its accelerator has no
  measured figure (since session 25 no priced row does), and a row whose accelerator loses
  the figure falls back to the datasheet and says so (a copy of the records, L40S's removed);
- a hand composition of one TP8 decode step (NeMo's Llama-2-7B on eight H100s) equals the
  ledger exactly: the weight and KV reads at 2.97 TB/s, L*t_o with t_o the re-derived claim,
  the all-reduces as the curves priced them;
- t_o re-derived by hand on its calibration receipt, against the same measured rate, is the
  claim's expect, which engines/nemo's per-layer overhead points to;
- the unsharded weights' read (tp_unsharded_weights) uses the same rate.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

from kb.kinds.placement import placement
from kb.ledger.analysis import analyze_spec
from kb.ledger.endtoend import conditions
from kb.ledger.hbm_rate import declared, streamed_rate
from kb.ledger.inputs import Unresolved, resolve_view
from kb.ledger.scenario import scenario_record
from kb.ledger.unsharded import step_time
from kb.model import KnowledgeBase
from tests.shipped_outputs import ONE_WORKER, end_to_end_results

H100 = "hardware/nvidia-h100-sxm"
MI300X = "hardware/amd-instinct-mi300x"
A100 = "hardware/nvidia-a100-80gb-sxm4"
B200 = "hardware/nvidia-b200"
MI355X = "hardware/amd-instinct-mi355x"
L40S = "hardware/nvidia-l40s"
H20 = "hardware/nvidia-h20"
TP = "flops/tp-decode-allreduce-time"
NOTE = "HBM at the datasheet rate: no measured bandwidth"


def _value(kb: KnowledgeBase, pointer: str) -> Fraction:
    """A quantity's value in its base unit (B/s, s, B), exactly."""
    from kb.ledger.quantities import figure

    record_id, _, field = pointer.partition("#")
    record = kb.get(record_id)
    assert record is not None, record_id
    return figure(record.get(field), pointer).value


def test_the_declared_fields_and_note() -> None:
    assert declared() == ("memory.bandwidth_achieved", "memory.bandwidth", NOTE)


def test_measured_rates_are_streamed_and_h20_at_its_datasheet(shipped: KnowledgeBase) -> None:
    measured = {
        H100: 297 * 10**10,  # 2.97 TB/s, BabelStream Triad (Azure)
        MI300X: 409 * 10**10,  # 4.09 TB/s, BabelStream Triad (Azure)
        B200: 726 * 10**10,  # 7.26 TB/s, TMA read stream (receipts/semianalysis-b200-...)
        MI355X: 6914 * 10**9,  # 6.914 TB/s, MI350X read stream (receipts/rocm-mi350x-...)
        L40S: 810 * 10**9,  # 810 GB/s, L40 STREAM Triad (receipts/rrze-gpu-benches-l40-...)
    }
    for hardware, rate in measured.items():
        assert streamed_rate(shipped, hardware) == (f"{hardware}#memory.bandwidth_achieved", "")
        assert _value(shipped, f"{hardware}#memory.bandwidth_achieved") == rate, hardware
        assert rate < _value(shipped, f"{hardware}#memory.bandwidth"), hardware
    assert shipped.get(H20).get("memory.bandwidth_achieved") is None  # type: ignore[union-attr]
    assert streamed_rate(shipped, H20) == (f"{H20}#memory.bandwidth", NOTE)


@ONE_WORKER  # the shipped rows priced once a run (tests/shipped_outputs.py)
def test_a_row_says_datasheet_rate_exactly_when_its_accelerator_has_no_measured_one(
    shipped: KnowledgeBase,
) -> None:
    said: dict[Any, set[bool]] = {}
    for r in end_to_end_results():
        if r.predicted is not None:
            said.setdefault(r.conditions.get("hardware"), set()).add(NOTE in r.assumed)
    for hardware, notes in said.items():
        record = shipped.get(str(hardware))
        assert record is not None, hardware
        assert notes == {record.get("memory.bandwidth_achieved") is None}, hardware
    for hardware in (H100, A100, MI300X, B200, MI355X, L40S):
        assert said[hardware] == {False}, hardware


def test_a_row_whose_accelerator_loses_its_measured_rate_falls_back_and_says_so(
    shipped: KnowledgeBase, shipped_copy: Path
) -> None:
    """The fallback path, which no shipped row takes since session 25: L40S's figure removed."""
    from kb.api import open_kb
    from kb.checker import schema_stage
    from kb.ledger.endtoend import evaluate_row

    path = shipped_copy / "hardware" / "nvidia-l40s.yaml"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [line for line in lines if not line.startswith("  bandwidth_achieved:")]
    assert len(kept) == len(lines) - 1
    path.write_text("".join(kept), encoding="utf-8")
    copy = open_kb(shipped_copy, with_references=False)
    schema_stage(copy)
    receipt = "receipts/trtllm-v0.9-l40s-peak-throughput"
    results = []
    for kb in (shipped, copy):
        record = kb.get(receipt)
        assert record is not None
        results.append(evaluate_row(kb, record, 0, record.data["results"][0], calibration=False))
    measured, datasheet = results
    assert measured.conditions.get("hardware") == L40S
    assert NOTE not in measured.assumed and NOTE in datasheet.assumed
    assert measured.predicted is not None and datasheet.predicted is not None
    assert datasheet.predicted > measured.predicted  # tokens/s: the faster datasheet read


def _analysis(kb: KnowledgeBase, receipt: str, index: int) -> tuple[Any, Any, Any]:
    record = kb.get(receipt)
    assert record is not None
    scenario, _, _ = conditions(kb, record, record.data["results"][index])
    placement_record = scenario_record(scenario, kb)
    spec = resolve_view(placement(placement_record), placement_record, kb)
    assert not isinstance(spec, Unresolved) and not spec.gaps, getattr(spec, "gaps", spec)
    return scenario, spec, analyze_spec(spec)


def test_a_tp8_step_composed_by_hand_is_the_ledger(shipped: KnowledgeBase) -> None:
    """NeMo's Llama-2-7B, TP8, batch one on H100 (the TP8 row of its tensor-parallel table)."""
    scenario, spec, analysis = _analysis(shipped, "receipts/nemo-llama-2-7b-h100-tp-latency", 8)
    assert (scenario.tp, scenario.batch, scenario.hardware) == (8, 1, H100)
    model = shipped.get("models/llama-2-7b")
    assert model is not None
    g = model.data["geometry"]
    params = _value(shipped, "models/llama-2-7b#derived.params_total")
    bw = Fraction(297 * 10**10)  # the measured Triad rate, not the datasheet 3.35 TB/s
    t_w = params * 2 / (8 * bw)
    heads = Fraction(max(g["kv_heads"], 8), 8)
    head_dim = Fraction(g["d_model"], g["heads"])
    t_kv = scenario.context * 2 * g["layers"] * heads * head_dim * 2 / bw
    t_o = _value(shipped, f"{TP}#claims.0.expect")
    assert t_o == Fraction(985, 10**7)
    derived = spec.options[0].derived
    assert derived.weight_read.value == t_w
    assert derived.kv_read_per_sequence.value == t_kv
    ledger = analysis.sides[0].ledger
    all_reduces = sum((Fraction(t.exposed) for t in ledger.transfers), Fraction(0))
    assert all_reduces > 0
    assert ledger.total == t_w + scenario.batch * t_kv + all_reduces + g["layers"] * t_o


def test_t_o_rederived_by_hand_is_the_claim(shipped: KnowledgeBase) -> None:
    """(t_req/n_out - P_1*b_w/BW_hbm)/L_1 at the measured rate, rounded as the claim is."""
    receipt = "receipts/nemo-llama-2-7b-h100-tp1-latency#results.0"
    record = shipped.get(receipt.split("#")[0])
    assert record is not None
    row = record.data["results"][0]
    t_req = _value(shipped, f"{receipt}.value")
    params = _value(shipped, "models/llama-2-7b#derived.params_total")
    layers = shipped.get("models/llama-2-7b").data["geometry"]["layers"]  # type: ignore[union-attr]
    bw = _value(shipped, f"{H100}#memory.bandwidth_achieved")
    t_o = (t_req / row["output_tokens"] - params * 2 / bw) / layers
    assert round(t_o * 10**7) == 985  # 98.5 us
    claim = shipped.get(TP).data["claims"][0]  # type: ignore[union-attr]
    assert claim["id"] == "overhead-calibration-h100"
    assert claim["bind"]["BW_hbm"] == f"{H100}#memory.bandwidth_achieved"
    assert _value(shipped, f"{TP}#claims.0.expect") == Fraction(985, 10**7)
    engine = shipped.get("engines/nemo")
    assert engine is not None
    assert engine.data["per_layer_overhead"]["figure"] == f"{TP}#claims.0.expect"


def test_the_unsharded_read_uses_the_same_rate(shipped: KnowledgeBase) -> None:
    record = shipped.get("receipts/gpt-fast-llama-2-7b-a100-tp-sweep-batch1")
    assert record is not None
    scenario, _, _ = conditions(shipped, record, record.data["results"][3])
    assert scenario.tp == 8 and scenario.hardware == A100
    model = shipped.get("models/llama-2-7b")
    assert model is not None
    g = model.data["geometry"]
    unsharded = 2 * g["vocab"] * g["d_model"]  # untied embedding and head
    bw = _value(shipped, f"{A100}#memory.bandwidth_achieved")
    assert step_time(shipped, scenario) == unsharded * 2 * (1 - Fraction(1, 8)) / bw
