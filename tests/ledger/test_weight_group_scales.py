"""gpt-fast's int4 weights are read with a bf16 scale and zero per group of G.

kb/data/end-to-end.json `weight_group_scales` (issue 35, session 21): gpt-fast's
WeightOnlyInt4Linear keeps scales_and_zeros (K/G, N, 2) in bf16 beside the packed weights
and passes both to _weight_int4pack_mm, so at G = 32 a weight costs 1/2 + 4/32 = 0.625 B.
These tests hold the reading of the declaration, which rows get it, and that the step's
weight read and the weights' memory grow by exactly the scales' share.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

from kb.ledger.endtoend import conditions, evaluate_row
from kb.ledger.group_scales import declared, extra_bytes, group_size
from kb.ledger.scenario import Scenario, outcome
from kb.model import KnowledgeBase

GPT_FAST = "engines/gpt-fast"
R7B = "receipts/gpt-fast-llama-2-7b-a100-tp-sweep-batch1"
R70B = "receipts/gpt-fast-llama-2-70b-a100-tp-sweep-batch1"
NOTE = "weights read with their per-group scales"


def test_the_declaration_is_gpt_fast_int4_four_bytes_a_group() -> None:
    assert declared() == {(GPT_FAST, "int4"): Fraction(4)}


def test_the_group_size_is_read_from_the_precision_text() -> None:
    assert group_size("int4 weight-only (group 32)") == 32
    assert group_size("4-bit (G=32)") == 32
    assert group_size("int4 weight-only") is None
    assert group_size(None) is None
    assert extra_bytes(GPT_FAST, "int4", "int4 weight-only (group 32)") == (Fraction(1, 8), 32)
    assert extra_bytes(GPT_FAST, "int8", "int8 weight-only (group 32)") is None
    assert extra_bytes("engines/vllm", "int4", "int4 (group 32)") is None


def test_exactly_the_int4_rows_of_gpt_fast_carry_the_scales(shipped: KnowledgeBase) -> None:
    carried = set()
    for receipt in (R7B, R70B):
        record = shipped.get(receipt)
        assert record is not None
        for index, row in enumerate(record.get("results") or []):
            result = evaluate_row(shipped, record, index, row, calibration=False)
            if any(NOTE in a for a in result.assumed):
                carried.add(f"{receipt}#{index}")
    assert carried == {f"{R7B}#5", f"{R70B}#4", f"{R70B}#6"}


def _priced(shipped: KnowledgeBase, receipt: str, index: int) -> Scenario:
    record = shipped.get(receipt)
    assert record is not None
    scenario, _, _ = conditions(shipped, record, record.get("results")[index])
    return scenario


def test_the_weight_read_and_memory_grow_by_a_quarter(shipped: KnowledgeBase) -> None:
    for receipt, index in ((R7B, 5), (R70B, 4), (R70B, 6)):
        scenario = _priced(shipped, receipt, index)
        assert scenario.weight_scale_bytes == Fraction(1, 8)
        with_scales = outcome(scenario, shipped)
        without = outcome(replace(scenario, weight_scale_bytes=None), shipped)
        t_w = dict(without.rows[0].inputs)["t_w"]  # the rank's weight read at 1/2 B a weight
        assert with_scales.tpot is not None and without.tpot is not None
        # batch 1 is below the ridge: the step is the weight read plus the rest, unchanged
        assert with_scales.tpot - without.tpot == t_w * Fraction(1, 8) / Fraction(1, 2)
        assert with_scales.need_per_device > without.need_per_device
