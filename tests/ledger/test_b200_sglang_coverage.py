"""Session 24's B200 and SGLang receipts, held to what docs/ledger.md says of them.

docs/ledger.md ("Session 24: coverage of B200 and SGLang") reports how kb answers the five
receipts added that session, misses as misses. These tests hold that account, so it fails
when a change moves the rows it describes: the SGLang rows on H20 are not evaluable for want
of a sourced BF16 rate; the TensorRT-LLM v0.20 rows are not priced by `trtllm_bench_run`
(its versions list the 1.0 line only) while the v1.0 B200 rows are; every contradicted v0.20
row is kb too fast.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from kb.ledger import trtllm_bench
from kb.ledger.endtoend import CONTRADICTED, NOT_EVALUABLE, RowResult
from kb.model import KnowledgeBase
from tests.shipped_outputs import ONE_WORKER, end_to_end_results

SGLANG_H20 = (
    "receipts/qwen3-speed-benchmark-qwen3-32b-h20-sglang-batch1",
    "receipts/qwen3-speed-benchmark-qwen3-235b-a22b-h20-sglang-batch1",
)
V020 = (
    "receipts/trtllm-v0.20-llama-3.3-70b-throughput-b200-tp1-8",
    "receipts/trtllm-v0.20-llama-3.1-405b-throughput-b200-tp4-8",
)
V10_B200 = "receipts/trtllm-v1.0-llama-3.1-405b-throughput-b200"


def _rows(receipts: Sequence[str]) -> list[RowResult]:
    return [r for r in end_to_end_results() if r.receipt in receipts]


def test_the_h20_record_has_no_bf16_rate(shipped: KnowledgeBase) -> None:
    """Premise of the SGLang rows' reason: the H20 states no BF16 tensor rate."""
    compute = shipped.records["hardware/nvidia-h20"].data["compute"]
    assert "bf16" not in compute
    assert compute["fp16"]["basis"] == "unverified"


@ONE_WORKER
def test_the_sglang_h20_rows_are_not_evaluable_for_the_missing_rate() -> None:
    rows = _rows(SGLANG_H20)
    assert len(rows) == 36
    for row in rows:
        assert row.state == NOT_EVALUABLE, (row.receipt, row.index, row.state)
        assert "hardware/nvidia-h20#compute.bf16" in row.reason, row.reason


CASES = [(V10_B200, True), *((r, False) for r in V020)]


@pytest.mark.parametrize(("receipt", "priced_as_run"), CASES)
def test_only_the_v1_rows_are_priced_as_a_trtllm_bench_run(
    shipped: KnowledgeBase, receipt: str, priced_as_run: bool
) -> None:
    record = shipped.records[receipt]
    engine, version = record.get("engine.record"), record.get("engine.version")
    rows = record.data["results"]
    assert rows
    for row in rows:
        assert row["load"] == "maximum"
        assert trtllm_bench.applies(engine, version, row, row["measures"]) is priced_as_run


@ONE_WORKER
def test_every_contradicted_v020_row_is_kb_too_fast() -> None:
    rows = _rows(V020)
    assert len(rows) == 60
    missed = [r for r in rows if r.state == CONTRADICTED]
    assert missed  # the account describes misses
    for row in missed:
        assert row.error is not None and row.error > 0, (row.receipt, row.index, row.error)
