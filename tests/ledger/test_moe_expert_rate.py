"""An engine version's MoE expert rate: fitted by the declared rule, composed once, scoped.

kb/data/end-to-end.json `moe_expert_rate` (declared before any row was priced with it)
gives TensorRT-LLM v0.9.0 a rate r per accelerator at which its MoE kernel ran Mixtral's
routed-expert matmuls, fitted to the page's 2048-token first-token rows (the evidence:
tests/ledger/test_mixtral_moe_miss.py). These tests hold:

- the fit: recomputed here from each calibration row with kb's composition (the row priced
  without the term), it is the declared rate to three significant figures;
- the four fitted rows are calibration rows; the 128-token rows and the peak-throughput
  rows of the same version validate it, and say which rate they used;
- the term is the class's T_math split in two, the routed experts at r and the rest at
  the compute rate, in the one composition (a scenario, hence a row, a placement or a
  plan that states the rate), and nothing for a dense model;
- the scope: no other engine version, engine or model gets a rate;
- a rate in the wrong dimension is a gap at its pointer, not a traceback.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import Any

from kb.kinds.placement import placement
from kb.ledger.endtoend import (
    CALIBRATION,
    CONTRADICTED,
    VALIDATED,
    conditions,
    moe_expert_rates,
)
from kb.ledger.inputs import Unresolved, resolve_view
from kb.ledger.scenario import Scenario, outcome, scenario_record
from kb.model import KnowledgeBase, Record
from tests.shipped_outputs import ONE_WORKER, end_to_end_results

FIRST_TOKEN = "receipts/trtllm-v0.9-first-token-latency-batch1"
ENGINE = ("engines/tensorrt-llm", "v0.9.0")
H100 = "hardware/nvidia-h100-sxm"
MIXTRAL = "models/mixtral-8x7b"


def _routed_share(kb: KnowledgeBase) -> tuple[Fraction, Fraction]:
    """(P_e, P_active) of Mixtral: the routed experts' active parameters and all of them."""
    record = kb.get(MIXTRAL)
    assert record is not None
    g = record.data["geometry"]
    routed = Fraction(g["experts_active"] * 3 * g["d_model"] * g["d_ff"] * g["layers"])
    return routed, Fraction(record.data["derived"]["params_active"]["value"])


def _analysis(kb: KnowledgeBase, scenario: Scenario) -> Any:
    from kb.ledger.analysis import analyze_spec

    record = scenario_record(scenario, kb)
    spec = resolve_view(placement(record), record, kb)
    assert not isinstance(spec, Unresolved) and not spec.gaps, getattr(spec, "gaps", spec)
    return spec, analyze_spec(spec)


def _declared_rows() -> dict[str, int]:
    """hardware -> the index of the first-token row its rate was fitted to."""
    rows = moe_expert_rates()[1]
    assert rows, "no calibration rows declared"
    return {row: int(row.rsplit(".", 1)[1]) for row in rows if row.startswith(FIRST_TOKEN)}


def test_each_rate_is_the_fit_of_its_calibration_row(shipped: KnowledgeBase) -> None:
    record = shipped.get(FIRST_TOKEN)
    assert record is not None
    rates = moe_expert_rates()[0]
    routed, active = _routed_share(shipped)
    fitted = {}
    for index in _declared_rows().values():
        row = record.data["results"][index]
        scenario, _, _ = conditions(shipped, record, row)
        assert scenario.moe_expert_rate is not None  # the row is in scope
        bare = replace(scenario, moe_expert_rate=None)  # p: kb's pass without the term
        spec, analysis = _analysis(shipped, bare)
        request, derived = analysis.requests[0], spec.options[0].derived
        tokens = row["input_tokens"]
        expert_time = derived.math.value * tokens * routed / active  # F_e / C
        flops = 2 * routed * tokens / row["tp"]  # F_e per rank
        measured = Fraction(str(row["value"]["value"])) / 1000
        assert row["value"]["unit"] == "ms"
        rate = flops / (measured - request.ttft + expert_time) / 10**12
        declared = rates[(ENGINE[0], ENGINE[1], row["hardware"])]
        assert abs(rate - declared) < Fraction(1, 2), (row["hardware"], float(rate), declared)
        fitted[row["hardware"]] = rate
    assert set(fitted) == {h for (e, v, h) in rates if (e, v) == ENGINE}
    assert len(fitted) == 4


@ONE_WORKER  # the shipped rows priced once a run (tests/shipped_outputs.py)
def test_the_fitted_rows_calibrate_and_the_others_validate() -> None:
    calibrating = set(moe_expert_rates()[1])
    results = [r for r in end_to_end_results() if r.receipt.startswith("receipts/trtllm-v0.9-")]
    mixtral = [r for r in results if "Mixtral" in r.label]
    assert len(mixtral) == 24
    for result in mixtral:
        name = f"{result.receipt}#results.{result.index}"
        if name in calibrating:
            assert result.state == CALIBRATION, name
            assert result.error is not None and abs(result.error) < Fraction(1, 100)
        else:
            assert result.state in (VALIDATED, CONTRADICTED), name
        assert any("moe_expert_rate" in a for a in result.assumed), name
    assert len([r for r in mixtral if r.state == CALIBRATION]) == 4
    for result in results:  # the Llama rows of the same pages: no rate
        if "Mixtral" not in result.label:
            assert not any("moe_expert_rate" in a for a in result.assumed), result.label


def test_the_term_is_the_class_t_math_split_in_two(shipped: KnowledgeBase) -> None:
    """T_math = 2B(P_active - P_e)/(C tp) + 2B P_e/(r tp), the prefill's at B x tokens."""
    base = Scenario(
        model=MIXTRAL,
        hardware=H100,
        count=2,
        tp=2,
        batch=512,
        input_tokens=128,
        output_tokens=128,
        engine="engines/tensorrt-llm",
        weight_precision="fp8",
    )
    rate = Fraction(287)
    spec0, plain = _analysis(shipped, base)
    spec1, slowed = _analysis(shipped, replace(base, moe_expert_rate=rate))
    m0, m1 = spec0.options[0].derived.math, spec1.options[0].derived.math
    routed, active = _routed_share(shipped)
    compute = 2 * 512 * active / (2 * m0.value)  # C from the plain T_math
    expected = 2 * 512 * (active - routed) / (compute * 2) + 2 * 512 * routed / (rate * 10**12 * 2)
    assert m1.value == expected
    assert "moe_expert_rate" in m1.formula and "routed experts" in m1.formula
    assert slowed.requests[0].ttft > plain.requests[0].ttft
    # the decode step at batch 512 is above the ridge now: its matmuls, not the read
    assert (slowed_step := outcome(replace(base, moe_expert_rate=rate), shipped).tpot)
    assert (plain_step := outcome(base, shipped).tpot)
    assert slowed_step > plain_step


def test_a_dense_model_is_not_changed_by_a_rate(shipped: KnowledgeBase) -> None:
    dense = Scenario(
        model="models/llama-2-70b",
        hardware=H100,
        count=4,
        tp=4,
        batch=64,
        input_tokens=2048,
        output_tokens=128,
        engine="engines/tensorrt-llm",
        weight_precision="fp8",
    )
    a = outcome(dense, shipped)
    b = outcome(replace(dense, moe_expert_rate=Fraction(100)), shipped)
    assert a.ttft == b.ttft and a.tpot == b.tpot and a.ttft is not None


def _scope(kb: KnowledgeBase, receipt: str, label_part: str) -> Scenario:
    record = kb.get(receipt)
    assert record is not None, receipt
    for row in record.data["results"]:
        if label_part in str(row.get("label")):
            return conditions(kb, record, row)[0]
    raise AssertionError(f"{receipt}: no row with {label_part!r}")


def test_no_other_version_engine_or_model_gets_a_rate(shipped: KnowledgeBase) -> None:
    # 288 since session 21's refit (attention_rate changed p in the declared fit); 286 since
    # session 24's (hbm_streamed_rate changed p's reads and the borrowed t_o)
    assert _scope(shipped, FIRST_TOKEN, "Mixtral 8x7B, H100").moe_expert_rate == 286
    assert _scope(shipped, FIRST_TOKEN, "LLaMA 70B, H100").moe_expert_rate is None
    for receipt, label in (
        ("receipts/trtllm-v1.0-qwen3-235b-a22b-throughput-h100-h200-b200", ""),
        ("receipts/vllm-mixtral-8x7b-h100-tp8-latency-by-batch", "batch 1"),
        ("receipts/gpt-fast-mixtral-8x7b-a100-tp-sweep-batch1", "2 GPU"),
    ):
        assert _scope(shipped, receipt, label).moe_expert_rate is None, receipt


def test_a_rate_in_the_wrong_dimension_is_a_gap(shipped: KnowledgeBase) -> None:
    scenario = _scope(shipped, FIRST_TOKEN, "Mixtral 8x7B, H100, TP2, ISL 2048")
    record = scenario_record(scenario, shipped)
    data = dict(record.data)
    envelope = dict(data["envelope"])
    workload = dict(envelope["workload"])
    workload["moe_expert_rate"] = {**workload["moe_expert_rate"], "unit": "GB/s"}
    envelope["workload"] = workload
    data["envelope"] = envelope
    broken = Record(record.id, record.kind, record.path, data)
    spec = resolve_view(placement(broken), broken, shipped)
    gaps = spec.gaps if not isinstance(spec, Unresolved) else ()
    assert any("moe_expert_rate" in gap.pointer for gap in gaps), gaps
