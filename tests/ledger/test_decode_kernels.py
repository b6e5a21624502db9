"""The decode step's non-matmul kernels at a measured per-layer time (kernels.py).

kb/data/end-to-end.json `decode_kernels` declares the rule: where the workload names a
`memory-stream` receipt with rows of the model, accelerator and tp, every composed decode
step adds L * max(0, t_k(batch/dp) - t_k(1)), read as the prefill's kernel curve is read.
It is the composition's term beside flops/tp-decode-allreduce-time's equation (as the
engine's t_s is), shown in the overhead row. A hand check of one step per reading, of the
batch-one step it leaves alone, of a case without a profile, and of the symbolic reading
the break-even solves with against the exact one.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import sympy

from kb.ledger.kernels import KernelCurve, decode_kernel_time
from kb.ledger.scenario import Scenario, outcome
from kb.model import KnowledgeBase

KERNELS = "receipts/vidur-llama-2-non-matmul-kernel-time"
A100 = "hardware/nvidia-a100-80gb-sxm4"
H200 = "hardware/nvidia-h200-sxm"
LLAMA_2_7B = "models/llama-2-7b"
US = Fraction(1, 10**6)


def _us(shipped: KnowledgeBase, tokens: int, tp: int = 1) -> Fraction:
    """The receipt's A100 Llama-2-7B row of `tokens` at `tp`, in seconds, as written."""
    record = shipped.get(KERNELS)
    assert record is not None
    for row in record.get("results"):
        if (row["model"], row["hardware"], row["tp"]) == (LLAMA_2_7B, A100, tp):
            if row["input_tokens"] == tokens:
                return Fraction(str(row["value"]["value"])) * US
    raise AssertionError(f"no row of {tokens} tokens")


def _step(batch: int, hardware: str = A100, count: int = 1, dp: int = 1) -> Any:
    """The overhead row and the outcome of a bf16 Llama-2-7B decode step at `batch`."""
    s = Scenario(
        model=LLAMA_2_7B,
        hardware=hardware,
        count=count,
        dp=dp,
        batch=batch,
        input_tokens=128,
        output_tokens=128,
        engine="engines/tensorrt-llm",
        overhead_fallback="engines/nemo",
    )
    return s


def _overhead(shipped: KnowledgeBase, s: Scenario) -> tuple[Any, Any]:
    result = outcome(s, shipped)
    assert result.fits and result.tpot is not None, result.problems
    row = next(r for r in result.rows if r.name == "overhead")
    return row, result


def test_the_rule_is_declared_before_pricing() -> None:
    data = json.loads(
        (Path(__file__).resolve().parents[2] / "kb" / "data" / "end-to-end.json").read_text()
    )
    rule = data["decode_kernels"]
    assert "t_k(B/dp) - t_k(1)" in rule["what"]
    assert rule["applies_to"] and rule["reason"] and rule["not_covered"] and rule["sources"]
    assert "+-25%" in rule["band"] and "only adds time" in rule["expected"]


def test_a_step_of_256_sequences_by_hand(shipped: KnowledgeBase) -> None:
    """TensorRT-LLM v0.8's A100 row shape: 256 sequences on one A100, an exact row.

    32 layers x (54.0 - 24.0) us = 0.96 ms, in the overhead row beside L*t_o, and the
    step (TPOT) is the rows' sum, so the ledger's total carries it."""
    row, result = _overhead(shipped, _step(256))
    kernels = 32 * (_us(shipped, 256) - _us(shipped, 1))
    assert kernels == Fraction(96, 100_000)
    assert row.inputs["kernels"] == kernels
    assert row.value == 32 * row.inputs["t_o"] + kernels
    assert KERNELS in row.formula
    assert result.tpot == sum((r.value for r in result.rows), Fraction(0))


def test_between_rows_and_at_batch_one(shipped: KnowledgeBase) -> None:
    """Batch one adds nothing (t_o holds the one-token kernels); batch 64 is linear between
    the 1- and 128-token rows."""
    one, _ = _overhead(shipped, _step(1))
    assert one.inputs["kernels"] == 0
    at_64, _ = _overhead(shipped, _step(64))
    low, high = _us(shipped, 1), _us(shipped, 128)
    assert at_64.inputs["kernels"] == 32 * (high - low) * 63 / 127


def test_data_parallel_replicas_read_their_own_tokens(shipped: KnowledgeBase) -> None:
    """Two replicas of 256 sequences each: each step runs 256 tokens per GPU, as one of 256."""
    two, _ = _overhead(shipped, _step(512, count=2, dp=2))
    assert two.inputs["kernels"] == 32 * (_us(shipped, 256) - _us(shipped, 1))


def test_a_case_without_rows_is_unchanged(shipped: KnowledgeBase) -> None:
    """The H200 has no profile: no term in the row."""
    row, _ = _overhead(shipped, _step(256, hardware=H200))
    assert "kernels" not in row.inputs


def test_the_symbolic_reading_is_the_exact_one() -> None:
    """The break-even solves for the batch with a Piecewise of the same segments: at every
    batch (below one, on a row, between rows, beyond the last, with dp) it equals the exact."""
    rows = ((1, 24 * US, 0), (128, 31 * US, 1), (256, 54 * US, 2), (512, 89 * US, 3))
    for dp in (1, 2):
        curve = KernelCurve(rows, 32, dp, KERNELS, A100, 1)
        x = sympy.Symbol("x", positive=True)
        symbolic = decode_kernel_time(curve, x)
        for batch in (Fraction(1, 2), 1, 2, 64, 128, 200, 256, 300, 512, 1000, 4096):
            exact = decode_kernel_time(curve, Fraction(batch))
            assert sympy.Rational(exact) == sympy.nsimplify(symbolic.subs(x, batch)), (dp, batch)
            assert exact >= 0
