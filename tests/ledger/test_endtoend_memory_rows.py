"""End-to-end rows that measure memory, or a request's own output rate, priced by kb.

`measures` of a receipt row may name what the composed feasibility computes at start-up
(kb.ledger.capacity): the weights per device, the KV-cache pool per device, the tokens
that pool holds, and the sequences of the row's input length it holds (vLLM's "maximum
concurrency"); or `output_tokens_per_s_per_user`, 1/TPOT. Each kind has a row that
validates and the same row with its measured value moved outside the band, which must be
contradicted (the prediction is computed, never copied from the row). The pool figures
are worked by hand below from the model and the engine's declared memory.
"""

from __future__ import annotations

import copy
import math
from fractions import Fraction

import pytest

from kb.ledger.endtoend import (
    CALIBRATION,
    CONTRADICTED,
    NOT_EVALUABLE,
    VALIDATED,
    calibration_receipts,
    evaluate_row,
    report_row,
)
from kb.model import KnowledgeBase

TP8 = "receipts/jingchaozhang-qwen2.5-72b-h100-vllm-kv-pool-tp8"
TP4 = "receipts/jingchaozhang-qwen2.5-72b-h100-vllm-kv-pool-tp4"
LMCACHE = "receipts/lmcache-llama-3.1-70b-h100-tp4-kv-capacity"
LMDEPLOY = "receipts/lmdeploy-llama-2-13b-a100-tp1-static"  # row 0: a TPOT that validates
GIB = 2**30


def _evaluate(kb: KnowledgeBase, receipt: str, index: int, scale: Fraction | None = None) -> object:
    record = kb.get(receipt)
    assert record is not None
    row = copy.deepcopy(dict(record.data["results"][index]))
    if scale is not None:  # the measured value moved: the prediction must not follow it
        row["value"] = {
            **row["value"],
            "value": float(Fraction(str(row["value"]["value"])) * scale),
        }
    return evaluate_row(kb, record, index, row, receipt in calibration_receipts(kb))


@pytest.mark.parametrize(
    ("receipt", "index", "measures"),
    [
        (TP8, 0, "kv_pool_per_device"),
        (TP8, 1, "kv_pool_tokens"),
        (LMCACHE, 2, "max_concurrency"),
    ],
)
def test_each_kind_is_priced_and_a_moved_value_is_a_miss(
    shipped: KnowledgeBase, receipt: str, index: int, measures: str
) -> None:
    result = _evaluate(shipped, receipt, index)
    assert result.measures == measures  # type: ignore[attr-defined]
    assert result.predicted is not None, result.reason  # type: ignore[attr-defined]
    moved = _evaluate(shipped, receipt, index, Fraction(3))
    assert moved.predicted == result.predicted  # type: ignore[attr-defined]
    assert moved.state == CONTRADICTED  # type: ignore[attr-defined]
    assert result.state == VALIDATED  # type: ignore[attr-defined]
    assert report_row(result)["predicted"]  # type: ignore[arg-type]


def test_the_tp8_pool_is_worked_by_hand(shipped: KnowledgeBase) -> None:
    # Qwen2.5-72B in fp16 at TP8 on an 80 GiB H100 under vLLM's defaults: the engine keeps
    # 0.9 of the device, minus the weights per device and its fitted workspace (5.12 GiB).
    from kb.ledger.capacity import capacity
    from kb.ledger.endtoend import conditions

    record = shipped.get(TP8)
    assert record is not None
    scenario, _, _ = conditions(shipped, record, record.data["results"][0])
    found = capacity(scenario, shipped)
    params = shipped.get("models/qwen2.5-72b")
    assert params is not None
    total = params.get("derived.params_total")
    assert total["value"] == 72_704_065_536
    weights = Fraction(2 * 72_704_065_536, 8)  # fp16 weights over eight ranks
    workspace = Fraction(137438953472, 25)  # engines/vllm memory.workspace (5.12 GiB)
    pool = Fraction(9, 10) * 80 * GIB - weights - workspace
    assert found.weights == weights
    assert found.pool == pool
    per_token = 2 * 80 * 1 * 128 * 2  # 80 layers, 8 KV heads over 8 ranks: one each, fp16
    assert found.cached_tokens == math.floor(pool / (per_token * 16)) * 16
    result = _evaluate(shipped, TP8, 0)
    assert result.predicted == pool  # type: ignore[attr-defined]


def test_the_fitted_receipt_is_calibration(shipped: KnowledgeBase) -> None:
    assert TP4 in calibration_receipts(shipped)
    for index in range(3):
        result = _evaluate(shipped, TP4, index)
        assert result.state == CALIBRATION  # type: ignore[attr-defined]
        assert result.predicted is not None  # type: ignore[attr-defined]


def test_max_concurrency_without_a_length_is_not_evaluable(shipped: KnowledgeBase) -> None:
    record = shipped.get(LMCACHE)
    assert record is not None
    row = copy.deepcopy(dict(record.data["results"][2]))
    del row["input_tokens"]
    result = evaluate_row(shipped, record, 2, row, False)
    assert result.state == NOT_EVALUABLE
    assert "input tokens" in result.reason


def _as_per_user_rate(row: dict[str, object]) -> dict[str, object]:
    """A TPOT row restated as what a per-user rate row measures: 1/TPOT tokens per second."""
    value = dict(row["value"])  # type: ignore[call-overload]
    seconds = Fraction(str(value["value"])) / (1000 if value["unit"] == "ms" else 1)
    assert value["unit"] in ("s", "ms")
    per_user = 1 / seconds  # tokens per second
    value.update(value=float(per_user), unit="1/s")
    return {**row, "measures": "output_tokens_per_s_per_user", "value": value}


@pytest.mark.parametrize("scale", [None, Fraction(3)])
def test_a_per_user_rate_is_one_over_the_rows_tpot(
    shipped: KnowledgeBase, scale: Fraction | None
) -> None:
    # The MTP rows that first carried this kind decode speculatively and are not evaluable
    # (one token per step is not their quantity): the kind is held on a TPOT row restated.
    record = shipped.get(LMDEPLOY)
    assert record is not None
    tpot_row = dict(record.data["results"][0])
    tpot = evaluate_row(shipped, record, 0, tpot_row, False)
    row = _as_per_user_rate(tpot_row)
    if scale is not None:
        row["value"] = {
            **row["value"],
            "value": float(Fraction(str(row["value"]["value"])) * scale),
        }  # type: ignore[dict-item]
    rate = evaluate_row(shipped, record, 0, row, False)
    assert tpot.measures == "tpot" and rate.measures == "output_tokens_per_s_per_user"
    assert tpot.predicted is not None and rate.predicted == 1 / tpot.predicted
    assert rate.state == (VALIDATED if scale is None else CONTRADICTED)
