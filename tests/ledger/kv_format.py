"""One row priced with its stated FP8 KV cache and with that statement removed.

The receipts whose rows state `kv_precision: fp8` (tests/ledger/test_llama8b_fp8_kv_cache.py,
test_maverick_fp8_kv_cache.py) hold the same pair: the stated row is priced in FP8 with no
"not stated" note; without the field, kb's declared bf16 default, named in what it assumed;
and the FP8 row predicts more tokens per second (a larger batch at maximum load).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping

from kb.ledger.endtoend import conditions, evaluate_row
from kb.ledger.scenario import Scenario
from kb.model import KnowledgeBase, Record


def stated_and_default(
    kb: KnowledgeBase, record: Record, index: int, row: Mapping[str, object]
) -> tuple[Scenario, Scenario]:
    """The row's scenario as stated (FP8 KV) and with `kv_precision` removed (bf16)."""
    scenario, _, assumed = conditions(kb, record, row)
    assert scenario.kv_precision == "fp8"
    assert not any("KV cache bf16" in a for a in assumed)
    bf16_row = dict(copy.deepcopy(row))
    del bf16_row["kv_precision"]
    bf16, _, bf16_assumed = conditions(kb, record, bf16_row)
    assert bf16.kv_precision == "bf16"
    assert any("KV cache bf16 (not stated)" in a for a in bf16_assumed)
    result = evaluate_row(kb, record, index, row, False)
    slower = evaluate_row(kb, record, index, bf16_row, False)
    assert result.predicted is not None and slower.predicted is not None
    assert result.predicted > slower.predicted  # a larger batch: more tokens per second
    return scenario, bf16
