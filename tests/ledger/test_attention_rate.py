"""A prompt's attention runs at its own operands' rate (end-to-end.json `attention_rate`).

With a 16-bit KV cache, Q, K and V are 16-bit and the attention kernel runs 16-bit matmuls,
whatever the weights' format: flops/prefill-gemm-ridge's T_attn takes the bf16 counterpart of
the option's compute rate from the same kind of figure (a datasheet peak stays a peak, a
measured matmul row becomes the measured bf16 row). These tests work each case by hand from
the model's geometry and the figure the rule names, and hold kb's composed part to it
exactly; a missing bf16 figure is a gap, never a fallback; an FP8 KV cache is not covered
(the option's rate, as before, and the text says so); a 16-bit run is unchanged.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Any

from kb.kinds.placement import placement
from kb.ledger.endtoend import conditions
from kb.ledger.inputs import Unresolved, resolve_view
from kb.ledger.scenario import Scenario, scenario_record
from kb.model import KnowledgeBase

H100 = "hardware/nvidia-h100-sxm"
H200 = "hardware/nvidia-h200-sxm"
MODEL = "models/llama-2-7b"
MAMF = "receipts/stas00-mamf-matmul"
NIM = "receipts/nim-1.8-llama-3.3-70b-h100-tp2-fp8-concurrency"
PROMPT = 2048


def _scenario(**changes: Any) -> Scenario:
    base = Scenario(
        model=MODEL,
        hardware=H100,
        count=1,
        tp=1,
        batch=1,
        input_tokens=PROMPT,
        output_tokens=1,
        weight_precision="fp8",
        kv_precision="bf16",
        cuda_graphs=False,
    )
    return replace(base, **changes)


def _attention(kb: KnowledgeBase, scenario: Scenario) -> Any:
    """The composed option's prompt-attention part (kb.ledger.workload._attention_time)."""
    record = scenario_record(scenario, kb)
    spec = resolve_view(placement(record), record, kb)
    assert not isinstance(spec, Unresolved) and not spec.gaps, getattr(spec, "gaps", spec)
    part = spec.options[0].derived.prefill_attention
    assert part is not None
    return part


def _flop(kb: KnowledgeBase, model: str, prompt: int, tp: int) -> Fraction:
    """f_mac*L*n_h*h_d*s^2 per rank, from the model record's geometry."""
    record = kb.get(model)
    assert record is not None
    g = record.data["geometry"]
    head = g.get("head_dim") or Fraction(g["d_model"], g["heads"])
    return Fraction(2 * g["layers"] * g["heads"] * head * prompt**2, tp)


def _tflops(kb: KnowledgeBase, pointer: str) -> Fraction:
    record_id, field = pointer.split("#")
    record = kb.get(record_id)
    assert record is not None
    node = record.get(field)
    assert node["unit"] == "TFLOP/s", pointer
    return Fraction(str(node["value"])) * 10**12


def _mamf_row(kb: KnowledgeBase, hardware: str, precision: str) -> str:
    record = kb.get(MAMF)
    assert record is not None
    for index, row in enumerate(record.data["results"]):
        if row["hardware"] == hardware and row["precision"] == precision:
            return f"{MAMF}#results.{index}.value"
    raise AssertionError((hardware, precision))


def test_an_fp8_run_at_the_peak_prices_its_attention_at_the_bf16_peak(
    shipped: KnowledgeBase,
) -> None:
    part = _attention(shipped, _scenario(peak_compute=True))
    bf16, fp8 = _tflops(shipped, f"{H100}#compute.bf16"), _tflops(shipped, f"{H100}#compute.fp8")
    assert bf16 < fp8
    assert part.value == _flop(shipped, MODEL, PROMPT, 1) / bf16
    assert f"{H100}#compute.bf16" in part.formula and "attention_rate" in part.formula


def test_a_measured_fp8_rate_gives_the_measured_bf16_row(shipped: KnowledgeBase) -> None:
    part = _attention(shipped, _scenario())
    row = _mamf_row(shipped, H100, "bf16")
    assert part.value == _flop(shipped, MODEL, PROMPT, 1) / _tflops(shipped, row)
    assert row in part.formula and "measured" in part.formula


def test_without_a_measured_bf16_row_the_bf16_peak_is_used_and_said(
    shipped: KnowledgeBase,
) -> None:
    # H200: kb holds a measured FP8 matmul row but no bf16 one: the datasheet figure, named
    _mamf_row(shipped, H200, "fp8")
    part = _attention(shipped, _scenario(hardware=H200))
    assert part.value == _flop(shipped, MODEL, PROMPT, 1) / _tflops(shipped, f"{H200}#compute.bf16")
    assert "the datasheet figure" in part.formula and f"{H200}#compute.bf16" in part.formula


def test_a_16_bit_run_and_an_fp8_cache_keep_the_options_rate(shipped: KnowledgeBase) -> None:
    flop = _flop(shipped, MODEL, PROMPT, 1)
    bf16 = _attention(shipped, _scenario(weight_precision="bf16"))
    assert bf16.value == flop / _tflops(shipped, _mamf_row(shipped, H100, "bf16"))
    assert "attention_rate" not in bf16.formula
    fp8_cache = _attention(shipped, _scenario(kv_precision="fp8"))
    assert fp8_cache.value == flop / _tflops(shipped, _mamf_row(shipped, H100, "fp8"))
    assert "does not cover" in fp8_cache.formula


def test_the_nim_row_that_found_it_worked_by_hand(shipped: KnowledgeBase) -> None:
    """NIM 1.8's 5000-token prompt on H100 TP2, FP8 weights: 20.6 ms at 794.5 TFLOP/s."""
    record = shipped.get(NIM)
    assert record is not None
    row = record.data["results"][8]
    assert row["measures"] == "ttft" and row["input_tokens"] == 5000 and row["tp"] == 2
    scenario, _, _ = conditions(shipped, record, row)
    assert scenario.weight_precision == "fp8" and scenario.kv_precision == "bf16"
    part = _attention(shipped, scenario)
    flop = _flop(shipped, "models/llama-3.3-70b", 5000, 2)
    assert flop == 2 * 80 * 64 * 128 * 5000**2 / 2  # 1.64e16 FLOP a GPU
    assert part.value == flop / (Fraction("794.5") * 10**12)
    assert Fraction(206, 10000) < part.value < Fraction(207, 10000)  # s, against 11.7 ms at FP8


def test_a_missing_bf16_figure_is_a_gap_not_a_fallback(shipped_copy: Path) -> None:
    from kb.api import open_kb
    from kb.checker import schema_stage

    path = shipped_copy / "hardware" / "nvidia-h100-sxm.yaml"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    at = lines.index("compute:\n") + 1  # compute.bf16 only: compute_sparse keeps its own
    assert lines[at].startswith("  bf16:")
    path.write_text("".join(lines[:at] + lines[at + 1 :]), encoding="utf-8")
    kb = open_kb(shipped_copy, with_references=False)
    schema_stage(kb)
    record = scenario_record(_scenario(peak_compute=True), kb)
    spec = resolve_view(placement(record), record, kb)
    gaps = spec.gaps if not isinstance(spec, Unresolved) else ()
    assert any("compute.bf16" in gap.message for gap in gaps), gaps
