"""MI355X's measured FP8 and MXFP4 matmul rates price its scenarios (issue 35, sessions 14, 24).

receipts/rocm-blog-mi355x-fp8-gemm holds AMD's ROCm-blog timings of FP8 GEMMs on one MI355X
(hipBLASLt and the blog's own kernel at two square shapes). hipBLASLt's better row carries
the metric the composed ledger reads as a measured matmul rate (kb/data/end-to-end.json
`compute_rate`), so an FP8 scenario on MI355X runs its matmuls at it, below the datasheet's
dense FP8 peak. receipts/aiter-mi355x-mxfp4-gemm holds AITER's tuned MXFP4 GEMM table on
gfx950 (the kernels vLLM's MXFP4 layers call there, sources/vllm-quark-ocp-mx-rocm); its best
row is FP4's measured rate (session 24), and each row says which rate it ran at. The MXFP4
prompt's pass is worked by hand from the model's geometry and that rate.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

from kb.ledger.endtoend import conditions, evaluate_row
from kb.ledger.scenario import Scenario, compute_rate, compute_rate_peak, outcome
from kb.model import KnowledgeBase
from tests.ledger.ledger_fixtures import figure as _value

MI355X = "hardware/amd-instinct-mi355x"
GEMM = "receipts/rocm-blog-mi355x-fp8-gemm"
AITER = "receipts/aiter-mi355x-mxfp4-gemm"
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


def test_fp4_on_mi355x_is_priced_at_aiters_best_row(shipped: KnowledgeBase) -> None:
    s = Scenario(model="models/llama-3.3-70b", hardware=MI355X, count=1, weight_precision="fp4")
    pointer = compute_rate(s, shipped)
    assert pointer == f"{AITER}#results.0.value"
    assert not compute_rate_peak(s, shipped)
    record = shipped.get(AITER)
    assert record is not None
    rows = [Fraction(str(r["value"]["value"])) for r in record.data["results"]]
    assert _value(shipped, pointer) == max(rows)
    peak = _value(shipped, f"{MI355X}#compute.fp4")
    assert Fraction(1, 2) < _value(shipped, pointer) / peak < Fraction(3, 5)


def test_each_recipe_row_names_the_rate_it_ran_at(shipped: KnowledgeBase) -> None:
    record = shipped.get(RECIPE)
    assert record is not None
    rate = {"fp8": f"{GEMM}#results.1.value", "mxfp4": f"{AITER}#results.0.value"}
    for index, row in enumerate(record.data["results"]):
        result = evaluate_row(shipped, record, index, row, calibration=False)
        assert result.predicted is not None, result.reason
        assert not any("datasheet peak" in a for a in result.assumed), result.assumed
        said = [a for a in result.assumed if a.startswith("matmuls at the measured rate")]
        assert len(said) == 1, result.assumed
        assert said[0].startswith(f"matmuls at the measured rate {rate[row['precision']]} (")


def test_the_mxfp4_prompts_pass_by_hand(shipped: KnowledgeBase) -> None:
    # One 8192-token prompt of the MXFP4 row, as finite_run prices a prompt's pass: the
    # weights' matmuls f_mac*s*P/C plus the causal attention f_mac*L*n_h*h_d*s^2/C, both at
    # AITER's best row (the KV cache is FP8, so attention_rate keeps the option's rate).
    record = shipped.get(RECIPE)
    assert record is not None
    row = record.data["results"][4]
    assert row["precision"] == "mxfp4" and row["input_tokens"] == 8192
    scenario, _, _ = conditions(shipped, record, row)
    model = shipped.get("models/llama-3.3-70b")
    assert model is not None
    g = model.data["geometry"]
    params = Fraction(str(model.get("derived.params_total.value")))
    c = _value(shipped, f"{AITER}#results.0.value") * 10**12  # FLOP/s
    s = 8192
    hand = 2 * s * params / c + 2 * g["layers"] * g["heads"] * g["head_dim"] * s**2 / c
    request = outcome(replace(scenario, batch=1), shipped).request
    assert request is not None
    assert request.prefill_read == hand
    result = evaluate_row(shipped, record, 4, row, calibration=False)
    assert f"a prompt's pass {float(hand) * 1000:.4g} ms" in " ".join(result.assumed)
