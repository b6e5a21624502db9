"""`kb calc` says what it assumed and refuses what it cannot know (issue 35, item 7).

A symbol takes a value only from --set, one named --claim, or a default its class
declares; an unset symbol is a finding naming it and the records that carry it
(exit 1), never a value borrowed from another claim. A result where the equation
gives no value, or outside the class's declared validity, is refused with the reason.
"""

from __future__ import annotations

import os
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kb.equations.evaluate import (
    EvaluationError,
    OutsideValidity,
    Product,
    Unset,
    binding_spec,
    evaluate,
)
from tests.conftest import SHIPPED_RECORDS
from tests.equations.helpers import HARDWARE, flop, knowledge_base
from tests.inprocess import kb_in_process

# Fixed examples (tests/conftest.py's profile derandomizes); `KB_FUZZ_EXAMPLES` sets the count.
EXAMPLES = int(os.environ.get("KB_FUZZ_EXAMPLES", "0"))

TP = "flops/tp-decode-allreduce-time"
SEED = "flops/sched-tensor-parallel-crossover"
ROOT = ["--root", str(SHIPPED_RECORDS)]
SEVEN_B = [
    "--set", "P=models/llama-2-7b#derived.params_total",
    "--set", "b_w=2 B",
    "--set", "N=2",
    "--set", "BW_hbm=hardware/nvidia-h100-sxm#memory.bandwidth",
    "--set", "c=2",
    "--set", "t_ar=receipts/sglang-custom-all-reduce-h100-latency#results.0.latency",
    "--set", "t_o=70.8 us",
    "--set", "B=1",
    "--set", "S=128",
    "--set", "n_kv=models/llama-2-7b#geometry.kv_heads",
    "--set", "h_d=128",
    "--set", "b_kv=2 B",
]  # fmt: skip


def test_an_unset_symbol_is_named_with_the_records_that_carry_it(tmp_path: Path) -> None:
    done = kb_in_process(["calc", TP, "step_time", *SEVEN_B, *ROOT], cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "not set: L, kv_tok " in done.stderr  # kv_tok = 2*L*n_kv*h_d*b_kv needs L too
    assert "models/llama-2-7b#geometry.layers" in done.stderr  # where L can be read
    assert done.stdout == ""  # no number: L = 80 was once taken from a 70B claim
    assert "internal error" not in done.stderr


def test_setting_the_missing_symbol_answers_and_names_every_origin(tmp_path: Path) -> None:
    args = ["calc", TP, "step_time", *SEVEN_B, "--set", "L=models/llama-2-7b#geometry.layers"]
    done = kb_in_process([*args, *ROOT], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "default from claim" not in done.stdout and "input of claim" not in done.stdout
    assert done.stdout.count("(--set") == 13


def test_a_claim_named_supplies_its_own_inputs_only(tmp_path: Path) -> None:
    done = kb_in_process(["calc", TP, "--claim", "tp8-custom-70b-b64", *ROOT], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "(input of claim tp8-custom-70b-b64" in done.stdout
    assert done.stdout.splitlines()[-1].startswith("t_step = 21.03 ms")  # v6 KV read, v8 HBM
    unknown = kb_in_process(["calc", TP, "--claim", "tp8-custom-70b-b46", *ROOT], cwd=tmp_path)
    assert unknown.returncode == 2 and "did you mean 'tp8-custom-70b-b64'" in unknown.stderr


def test_n_equal_one_on_the_crossover_is_a_finding_not_an_internal_error(tmp_path: Path) -> None:
    args = ["calc", SEED, "--claim", "b-star-tp8-alpha0", "--set", "N=1", *ROOT]
    done = kb_in_process(args, cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "outside validity tp-degree" in done.stderr
    assert "division by zero (N - 1 = 0)" in done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr


RIDGE = [
    "--set", "C=hardware/nvidia-h200-sxm#compute.bf16",
    "--set", "f_mac=2 FLOP",
    "--set", "s_elem=2 B",
    "--set", "BW_hbm=hardware/nvidia-h200-sxm#memory.bandwidth",
]  # fmt: skip


def test_a_crossover_above_the_ridge_batch_is_refused_with_the_reason(tmp_path: Path) -> None:
    seventy_b = [
        "--set", "P_layer=models/llama-3.1-70b#derived.params_per_layer",
        "--set", "d=models/llama-3.1-70b#geometry.d_model",
    ]  # fmt: skip
    args = ["calc", SEED, "--claim", "b-star-tp8-alpha0", *seventy_b, *RIDGE, *ROOT]
    done = kb_in_process(args, cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "B_tp = 349.7" in done.stderr  # the number the audit found printed without a word
    assert "outside validity below-ridge" in done.stderr and "B_ridge = 206" in done.stderr
    below = kb_in_process(
        ["calc", SEED, "--claim", "b-star-tp8-alpha0", *RIDGE, *ROOT], cwd=tmp_path
    )
    assert below.returncode == 0, below.stderr
    assert "validity below-ridge holds" in below.stdout


DEFAULTED = """
symbols:
  B: {meaning: batch, unit: "1"}
  d: {meaning: hidden width, unit: "1"}
  P_layer: {meaning: parameters per layer, unit: "1"}
  BW_link:
    meaning: link bandwidth
    unit: GB/s
    default: {value: 450, unit: GB/s, basis: vendor-spec, source: sources/x}
  BW_hbm: {meaning: HBM bandwidth, unit: GB/s}
  B_star: {meaning: crossover batch, unit: "1"}
equations:
  b_star: {expr: "B_star = P_layer*BW_link/(2*d*BW_hbm)"}
validity:
  - {id: small, expr: B_star, max: "10000", reason: the fixture says so}
"""


def _defaulted_kb():  # type: ignore[no-untyped-def]
    return knowledge_base("/x", ("flops/x", flop(base=DEFAULTED)), ("hardware/gpu", HARDWARE))


def test_a_class_default_is_used_and_said() -> None:
    kb = _defaulted_kb()
    given = {
        "P_layer": binding_spec("202375168"),
        "d": binding_spec("4096"),
        "BW_hbm": binding_spec("hardware/gpu#memory.bandwidth"),
    }
    result = evaluate(kb, kb.get("flops/x"), "b_star", given)
    assert result.value == Fraction(202375168 * 450, 2 * 4096 * 3350)
    assert any("assumed: default of this class" in line for line in result.trail)
    assert any("validity small holds" in line for line in result.trail)
    with pytest.raises(OutsideValidity, match="outside validity small.*the fixture says so"):
        evaluate(kb, kb.get("flops/x"), "b_star", {**given, "BW_link": binding_spec("20 TB/s")})
    with pytest.raises(Unset, match="not set: d"):
        evaluate(kb, kb.get("flops/x"), "b_star", {k: v for k, v in given.items() if k != "d"})


def test_products_and_quotients_of_quantities_and_bindings() -> None:
    kb = _defaulted_kb()
    spec = binding_spec("hardware/gpu#memory.bandwidth / 2")
    assert isinstance(spec, Product)
    assert binding_spec("63 GB/s") == {"value": 63, "unit": "GB/s"}  # a unit's slash stays
    base = {"P_layer": binding_spec("202375168"), "d": binding_spec("4096")}
    halved = evaluate(kb, kb.get("flops/x"), "b_star", {**base, "BW_hbm": spec})
    whole = evaluate(
        kb, kb.get("flops/x"), "b_star", {**base, "BW_hbm": binding_spec("1.675 TB/s")}
    )
    assert halved.value == whole.value
    doubled = evaluate(
        kb,
        kb.get("flops/x"),
        "b_star",
        {
            **base,
            "BW_hbm": binding_spec("hardware/gpu#memory.bandwidth"),
            "d": binding_spec("2 * 2048"),
        },
    )
    assert doubled.value == Fraction(202375168 * 450, 2 * 4096 * 3350)
    with pytest.raises(EvaluationError, match="zero"):
        evaluate(kb, kb.get("flops/x"), "b_star", {**base, "BW_hbm": binding_spec("3 TB/s / 0")})


SET_TEXT = st.text(
    alphabet=st.sampled_from(list("0123456789.eE+-*/ #GBTMks_ahrdwe/xy")), max_size=24
)


@settings(max_examples=EXAMPLES or 60, deadline=None)
@given(SET_TEXT)
def test_any_set_value_is_an_answer_or_an_evaluation_error(text: str) -> None:
    kb = _defaulted_kb()
    base = {"P_layer": binding_spec("202375168"), "d": binding_spec("4096")}
    try:
        evaluate(kb, kb.get("flops/x"), "b_star", {**base, "BW_hbm": binding_spec(text)})
    except EvaluationError:
        pass  # a usage error or a finding, each in kb's words


def test_a_negative_input_is_refused_as_the_page_refuses_it(tmp_path: Path) -> None:
    args = ["calc", SEED, "--claim", "b-star-tp8-alpha0", "--set", "W=-450 GB/s", *ROOT]
    done = kb_in_process(args, cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "W = -450 GB/s: negative; kb declares every symbol a positive quantity" in done.stderr
