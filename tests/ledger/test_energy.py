"""Energy per output token in the composed ledger (issue 35 item 4), at TDP, beside a measurement.

A composed placement whose workload names flops/serving-energy-cost-per-token gets, per
feasible option, the energy per output token of its decode step: that class's
e_tok = N*P_dev*t_step/B with N the option's devices, P_dev each accelerator's `power`
figure (board power: an upper bound on what it draws, so the row says "at TDP"), t_step
the ledger's T_total and B the batch. The request gets the same equation over its whole
latency and batch x output tokens. Without the class, the row says "none entered" and why.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kb.cli import cli

EIGHT_B = "placements/llama-3.1-8b-h100-vllm-energy"
H100_POWER = Fraction(700)  # hardware/nvidia-h100-sxm#power, vendor-spec (configurable TDP)


def run(root: Path, *args: str) -> tuple[int, str]:
    """`kb ARGS --root root` in-process: `root` is `shipped_tree`, the shipped records copied."""
    result = CliRunner().invoke(cli, [*args, "--root", str(root)])
    return result.exit_code, result.output


def ledger_json(root: Path, placement: str, *extra: str) -> dict[str, Any]:
    code, out = run(root, "ledger", placement, "--format", "json", *extra)
    assert code == 0, out
    return dict(json.loads(out))


@pytest.mark.parametrize(("option", "devices"), [("one-gpu", 1), ("tp2", 2)])
def test_energy_per_token_is_n_times_tdp_times_the_step_over_the_batch(
    option: str, devices: int, shipped_tree: Path
) -> None:
    doc = ledger_json(shipped_tree, EIGHT_B)
    side = next(s for s in doc["ledgers"] if s["option"] == option)
    step = Fraction(side["total"]["exact"])
    energy = side["energy_per_token"]
    assert energy["value"]["unit"] == "J"
    assert Fraction(energy["value"]["exact"]) == devices * H100_POWER * step / 64
    assert energy["provenance"] == "estimated at TDP"
    assert "flops/serving-energy-cost-per-token energy_step" in energy["formula"]
    assert "hardware/nvidia-h100-sxm#power = 700 W (vendor-spec)" in energy["inputs"]["P_dev_from"]


def test_the_one_gpu_step_is_worked_by_hand(shipped_tree: Path) -> None:
    """Llama 3.1 8B, bf16, batch 64 at 1024 cached tokens, one H100, vLLM's own t_o: 9.42 ms."""
    doc = ledger_json(shipped_tree, EIGHT_B)
    side = next(s for s in doc["ledgers"] if s["option"] == "one-gpu")
    params = 8_029_995_008  # models/llama-3.1-8b#derived.params_total
    kv_tok = 2 * 32 * 8 * 128 * 2  # 2*L*n_kv*h_d*b
    # t_o = 35.00 us: engines/vllm's fit (flops/serving-tp-vs-dp claim overhead-vllm-h100-qwen-tp4),
    # the reads at the H100's measured 2.97 TB/s (hbm_streamed_rate)
    step = Fraction(2 * params + 64 * 1024 * kv_tok, 2_970 * 10**9) + 32 * Fraction(3500, 10**8)
    assert Fraction(side["total"]["exact"]) == step
    assert Fraction(side["energy_per_token"]["value"]["exact"]) == 700 * step / 64


def test_text_shows_the_energy_line_and_the_comparison_per_token(shipped_tree: Path) -> None:
    code, out = run(shipped_tree, "ledger", EIGHT_B)
    assert code == 0, out
    assert "E_per_output_token                 0.103 J  estimated at TDP;" in out
    assert "energy      0.103 J/token  0.1401 J/token" in out


def test_the_measured_receipt_is_what_the_estimate_is_set_against(shipped_tree: Path) -> None:
    """The receipt's row, read from kb, against the estimate: said as a ratio, not a match."""
    code, out = run(
        shipped_tree,
        "show",
        "receipts/mlenergy-v3-llama-3.1-8b-h100-energy-per-token",
        "--format",
        "json",
    )
    assert code == 0, out
    doc = json.loads(out)
    record = doc.get("record", doc)
    measured = Fraction(str(record["results"][0]["value"]["value"]))
    assert measured == Fraction(12, 100)
    side = next(
        s for s in ledger_json(shipped_tree, EIGHT_B)["ledgers"] if s["option"] == "one-gpu"
    )
    estimate = Fraction(side["energy_per_token"]["value"]["exact"])
    assert round(float(estimate / measured), 2) == 0.86  # docs/ledger.md states this ratio


def test_a_workload_without_the_energy_class_says_none_entered(shipped_tree: Path) -> None:
    doc = ledger_json(shipped_tree, "placements/llama-3.1-70b-16x-h100-two-nodes")
    for side in doc["ledgers"]:
        if side["computed"]:
            energy = side["energy_per_token"]
            assert energy["value"] is None and energy["provenance"] == "none"
            assert "name flops/serving-energy-cost-per-token in composed_from" in energy["formula"]
    code, out = run(shipped_tree, "ledger", "placements/llama-3.1-70b-16x-h100-two-nodes")
    assert "E_per_output_token            none entered  name flops/serving" in out


def test_the_request_spends_the_same_equation_over_its_latency(shipped_tree: Path) -> None:
    """NeMo's Llama-2-7B request at TP8: 8 x 700 W x the request latency / (1 x 20 tokens)."""
    doc = ledger_json(shipped_tree, "placements/llama-2-7b-h100-nemo-tp2-tp4-tp8")
    for request in doc["requests"]:
        devices = {"tp2": 2, "tp4": 4, "tp8": 8}[request["option"]]
        latency = Fraction(request["latency"]["exact"])
        assert Fraction(request["energy_per_token"]["exact"]) == devices * 700 * latency / 20
        assert request["energy_provenance"] == "estimated at TDP"
