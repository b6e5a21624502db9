"""A model reads a profiled model's non-matmul kernel rows when their kernel shapes are equal.

kb/data/end-to-end.json `prefill_kernels.same_shapes` (session 26): Vidur profiled the two
RMSNorms, rotary, SiLU-and-mul and residual add of Llama-2-7B and Llama-2-70B only; a model
whose record states the same d_model, heads, KV heads, head_dim, d_ff, gating, activation and
norm (dense, GQA/MHA) runs the same kernels on the same tensors, so it reads those rows
(kb.ledger.kernel_shape). A passing and a failing fixture for each field, the shipped models
the rule covers and does not, and hand checks of a Llama 3.1 70B prompt and a Llama 3.3 70B
row on H100.
"""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from kb.ledger.endtoend import conditions, evaluate_row
from kb.ledger.kernel_shape import SHAPE_FIELDS, kernel_shape, same_shape_model
from kb.ledger.kernels import prefill_kernels_receipt
from kb.ledger.scenario import Scenario, outcome
from kb.model import KnowledgeBase, Record

KERNELS = "receipts/vidur-llama-2-non-matmul-kernel-time"
H100 = "hardware/nvidia-h100-sxm"
A100 = "hardware/nvidia-a100-80gb-sxm4"
L2_70B, L2_7B = "models/llama-2-70b", "models/llama-2-7b"
L31_70B, L31_8B = "models/llama-3.1-70b", "models/llama-3.1-8b"
NIM = "receipts/nim-1.8-llama-3.3-70b-h100-tp2-fp8-concurrency"
US = Fraction(1, 10**6)


class _Models:
    """The model records a fixture holds, by id: what same_shape_model asks of a kb."""

    def __init__(self, records: dict[str, Record | None]) -> None:
        self.records = records

    def get(self, record_id: str) -> Record | None:
        return self.records.get(record_id)


def _edited(shipped: KnowledgeBase, field: str, value: Any) -> Record:
    """models/llama-3.1-70b with one geometry field changed (None: removed)."""
    record = shipped.get(L31_70B)
    assert record is not None
    data = copy.deepcopy(dict(record.data))
    if value is None:
        data["geometry"].pop(field, None)
    else:
        data["geometry"][field] = value
    return Record("models/fixture", "model", "fixture.yaml", data, "")


def _match(shipped: KnowledgeBase, fixture: Record, tp: int = 4) -> str | None:
    """Which model's rows the fixture reads on H100 at `tp` (it has none of its own)."""
    receipt = shipped.get(KERNELS)
    assert receipt is not None
    kb = _Models(
        {"models/fixture": fixture, L2_70B: shipped.get(L2_70B), L2_7B: shipped.get(L2_7B)}
    )
    rows = receipt.get("results")

    def has_rows(model: str) -> bool:
        return any((r["model"], r["hardware"], r["tp"]) == (model, H100, tp) for r in rows)

    return same_shape_model(kb, receipt, "models/fixture", has_rows)  # type: ignore[arg-type]


def test_the_extension_was_declared_before_pricing() -> None:
    data = json.loads(
        (Path(__file__).resolve().parents[2] / "kb" / "data" / "end-to-end.json").read_text()
    )
    rule = data["prefill_kernels"]["same_shapes"]
    assert "before any row was priced" in rule["declared"]
    assert "+-25%" in rule["band"] and "only adds time" in rule["expected"]
    for field in SHAPE_FIELDS:
        assert field in rule["shape"], field
    assert rule["rows"] and rule["evidence"] and rule["sources"]


def test_the_llama_70b_records_share_one_kernel_shape(shipped: KnowledgeBase) -> None:
    shapes = {
        m: kernel_shape(shipped.get(m))
        for m in (L2_70B, "models/llama-3-70b", L31_70B, "models/llama-3.3-70b")
    }
    assert set(shapes.values()) == {(8192, 64, 8, 128, 28672, "gated", "silu", "rms_norm")}


def test_llama_3_1_8b_is_not_llama_2_7b(shipped: KnowledgeBase) -> None:
    """GQA with 8 KV heads and d_ff 14336 against 32 and 11008; and no activation or norm stated."""
    eight_b, seven_b = shipped.get(L31_8B), shipped.get(L2_7B)
    assert eight_b is not None and seven_b is not None
    assert (eight_b.get("geometry.kv_heads"), eight_b.get("geometry.d_ff")) == (8, 14336)
    assert (seven_b.get("geometry.kv_heads"), seven_b.get("geometry.d_ff")) == (32, 11008)
    assert kernel_shape(eight_b) is None
    assert prefill_kernels_receipt(shipped, L31_8B, H100, 1) is None


def test_an_unchanged_copy_reads_llama_2_70b(shipped: KnowledgeBase) -> None:
    """The passing fixture: equal in every field, so Llama-2-70B's rows (at this tp)."""
    assert _match(shipped, _edited(shipped, "vocab", 151_000)) == L2_70B  # vocab is no input
    assert _match(shipped, _edited(shipped, "layers", 40)) == L2_70B  # kb multiplies by L


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("d_model", 8320),
        ("heads", 32),
        ("kv_heads", 16),
        ("head_dim", 64),
        ("d_ff", 29568),
        ("mlp", "plain"),
        ("activation", "gelu"),
        ("norm", "layer_norm"),
        ("activation", None),
        ("norm", None),
        ("experts", 8),
        ("attention", "mla"),
    ],
)
def test_a_model_differing_in_one_field_reads_no_rows(
    shipped: KnowledgeBase, field: str, value: Any
) -> None:
    """The failing fixture: one field changed (or not stated) and nothing matches."""
    assert _match(shipped, _edited(shipped, field, value)) is None


def test_the_tp_degree_is_the_rows_own(shipped: KnowledgeBase) -> None:
    """The profile stops at TP8: a TP16 case of the same shape has no rows."""
    assert prefill_kernels_receipt(shipped, L31_70B, H100, 8) == KERNELS
    assert prefill_kernels_receipt(shipped, L31_70B, H100, 16) is None
    assert prefill_kernels_receipt(shipped, L31_70B, "hardware/nvidia-h200-sxm", 8) is None
    assert prefill_kernels_receipt(shipped, L31_70B, A100, 4) == KERNELS


def _us(shipped: KnowledgeBase, tp: int, tokens: int) -> Fraction:
    """The receipt's Llama-2-70B H100 row of `tokens` at `tp`, in seconds, as written."""
    record = shipped.get(KERNELS)
    assert record is not None
    for row in record.get("results"):
        if (row["model"], row["hardware"], row["tp"], row["input_tokens"]) == (
            L2_70B,
            H100,
            tp,
            tokens,
        ):
            return Fraction(str(row["value"]["value"])) * US
    raise AssertionError(f"no row of {tokens} tokens at TP{tp}")


def test_a_llama_3_1_70b_h100_prompt_by_hand(shipped: KnowledgeBase) -> None:
    """TP4, one 2048-token prompt: 80 x (204.5 - 20.0) us = 14.76 ms of non-matmul kernels
    in the TTFT, read from Llama-2-70B's rows; the batch-one decode step adds nothing."""
    s = Scenario(
        model=L31_70B,
        hardware=H100,
        count=4,
        tp=4,
        batch=1,
        input_tokens=2048,
        output_tokens=128,
        engine="engines/nemo",
    )
    result = outcome(s, shipped)
    assert result.fits and result.request is not None, result.problems
    assert _us(shipped, 4, 2048) == Fraction(2045, 10**7) and _us(shipped, 4, 1) == 20 * US
    assert result.request.prefill_kernels == 80 * (Fraction(2045, 10**7) - 20 * US)
    overhead = next(r for r in result.rows if r.name == "overhead")
    assert overhead.inputs["kernels"] == 0


def test_a_llama_3_3_70b_h100_ttft_row_by_hand(shipped: KnowledgeBase) -> None:
    """NIM 1.8, TP2, one 5,000-token prompt (row 8): beyond the 4,096-token row its time per
    token, 80 x (537.0 x 5000/4096 - 25.0) us = 50.44 ms, in the row's prediction."""
    record = shipped.get(NIM)
    assert record is not None
    row = record.get("results")[8]
    scenario, measures, assumed = conditions(shipped, record, row)
    assert (scenario.model, scenario.tp, scenario.input_tokens) == ("models/llama-3.3-70b", 2, 5000)
    assert f"prefill non-matmul kernels at the per-layer times of {KERNELS}" in assumed
    result = outcome(scenario, shipped)
    assert result.request is not None
    by_hand = 80 * (_us(shipped, 2, 4096) * 5000 / 4096 - _us(shipped, 2, 1))
    assert by_hand == Fraction(12913, 256_000)  # 50.44 ms
    assert result.request.prefill_kernels == by_hand
    evaluated = evaluate_row(shipped, record, 8, row, False)
    assert measures == "ttft" and evaluated.predicted == result.ttft
