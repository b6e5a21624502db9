"""The prefill pass pays the causal attention over the prompt (flops/prefill-gemm-ridge).

A composed request's TTFT above the ridge is the prompt's weight matmuls plus its causal
attention matmuls, T_attn = f_mac*L*n_seq*n_h*h_d*s^2/C (the class's attention_time), at
the same compute rate. These tests work the figure by hand from the model's geometry and
the accelerator's peak, and hold the composed TTFT to it exactly: a ledger that dropped
the term, or counted it without the causal half, or over the wrong number of ranks,
fails.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from kb.ledger.scenario import Scenario, outcome
from kb.model import KnowledgeBase

H100 = "hardware/nvidia-h100-sxm"
MODEL = "models/llama-2-7b"


def _peak(kb: KnowledgeBase) -> Fraction:
    record = kb.get(H100)
    assert record is not None
    node = record.get("compute.bf16")
    assert node["unit"] == "TFLOP/s"
    return Fraction(str(node["value"])) * 10**12


def _params(kb: KnowledgeBase) -> Fraction:
    from kb.ledger.quantities import figure

    record = kb.get(MODEL)
    assert record is not None
    return figure(record.get("derived.params_total"), "").value


def _ttft(kb: KnowledgeBase, prompt: int, batch: int = 1, tp: int = 1) -> Fraction:
    result = outcome(
        Scenario(
            model=MODEL,
            hardware=H100,
            count=tp,
            tp=tp,
            batch=batch,
            input_tokens=prompt,
            output_tokens=1,
            peak_compute=True,
            collective_algorithm="custom",
            cuda_graphs=False,
            collective_receipt="receipts/sglang-custom-all-reduce-h100-latency" if tp > 1 else None,
        ),
        kb,
    )
    assert result.ttft is not None, result.problems
    return result.ttft


@pytest.mark.parametrize(("prompt", "batch"), [(2048, 1), (4096, 1), (2048, 4)])
def test_ttft_is_the_weight_matmuls_plus_causal_attention(
    shipped: KnowledgeBase, prompt: int, batch: int
) -> None:
    peak, params = _peak(shipped), _params(shipped)
    layers, heads, head_dim = 32, 32, 128  # models/llama-2-7b: d_model 4096 over 32 heads
    weights = 2 * params * prompt * batch / peak  # f_mac*B*P/C, B = the prompts' tokens
    attention = Fraction(2 * layers * batch * heads * head_dim * prompt**2) / peak
    # no engine and tp = 1: no per-layer overhead and no all-reduce
    assert _ttft(shipped, prompt, batch) == weights + attention


def test_attention_is_quadratic_in_the_prompt(shipped: KnowledgeBase) -> None:
    peak, params = _peak(shipped), _params(shipped)
    linear = {s: 2 * params * s / peak for s in (2048, 8192)}
    extra = {s: _ttft(shipped, s) - linear[s] for s in (2048, 8192)}
    assert extra[8192] == 16 * extra[2048]


def test_the_heads_split_over_the_tp_ranks(shipped: KnowledgeBase) -> None:
    """Over tp = 2 the attention, like the matmuls, runs at twice the compute."""
    from kb.kinds.placement import placement
    from kb.ledger.analysis import analyze_spec
    from kb.ledger.inputs import resolve_view
    from kb.ledger.scenario import scenario_record

    scenario = Scenario(
        model=MODEL,
        hardware=H100,
        count=2,
        tp=2,
        batch=1,
        input_tokens=2048,
        output_tokens=1,
        peak_compute=True,
        collective_algorithm="custom",
        cuda_graphs=False,
        collective_receipt="receipts/sglang-custom-all-reduce-h100-latency",
    )
    record = scenario_record(scenario, shipped)
    spec = resolve_view(placement(record), record, shipped)
    request = analyze_spec(spec).requests[0]  # type: ignore[arg-type]
    peak, params = _peak(shipped), _params(shipped)
    attention = Fraction(2 * 32 * 32 * 128 * 2048**2) / (2 * peak)
    assert request.prefill_read == 2 * params * 2048 / (2 * peak) + attention


def test_latent_attention_uses_the_mean_of_its_qk_and_v_widths(shipped: KnowledgeBase) -> None:
    """DeepSeek-V3 (MLA): QK^T over qk_nope + qk_rope = 192, PV over v_head_dim = 128."""
    from kb.kinds.placement import placement
    from kb.ledger.analysis import analyze_spec
    from kb.ledger.inputs import resolve_view
    from kb.ledger.quantities import figure
    from kb.ledger.scenario import scenario_record

    model, h200 = "models/deepseek-v3", "hardware/nvidia-h200-sxm"
    scenario = Scenario(
        model=model,
        hardware=h200,
        count=8,
        tp=8,
        batch=1,
        input_tokens=8192,
        output_tokens=1,
        weight_precision="fp8",
        kv_precision="fp8",
        peak_compute=True,
    )
    record = scenario_record(scenario, shipped)
    spec = resolve_view(placement(record), record, shipped)
    request = analyze_spec(spec).requests[0]  # type: ignore[arg-type]
    hw, mdl = shipped.get(h200), shipped.get(model)
    assert hw is not None and mdl is not None
    peak = figure(hw.get("compute.fp8"), "").value
    active = figure(mdl.get("derived.params_active"), "").value
    s = 8192
    weights = 2 * active * s / (8 * peak)
    attention = Fraction(2 * 61 * 128 * 160 * s**2) / (8 * peak)  # 160 = (128 + 64 + 128) / 2
    assert request.prefill_read == weights + attention
