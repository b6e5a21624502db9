"""Session 24's B200 and SGLang receipts, held to what docs/ledger.md says of them.

docs/ledger.md ("Session 24: coverage of B200 and SGLang") reports how kb answers the five
receipts added that session, misses as misses. These tests hold that account, so it fails
when a change moves the rows it describes: the SGLang rows on H20 are not evaluable for want
of a sourced BF16 rate; the v1.0 B200 rows are priced by `trtllm_bench_run`, and since
session 25 (w25-v020c, "trtllm-bench at v0.20, priced as its code reads") so are the v0.20 rows
that state a request count, at v0.20.0's budget floor; every contradicted v0.20 row is kb too
fast. The two TP8 128/128 rows, too slow in session 25 (-57.8%, -61.1%), are within the band
since session 26 (`step_prompt_pass`: a step's 64 prompts as one pass, not 64).
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from kb.ledger import trtllm_bench
from kb.ledger.endtoend import CONTRADICTED, NOT_EVALUABLE, VALIDATED, RowResult
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


CASES = [(V10_B200, 10), *((r, n) for r, n in zip(V020, (36, 18), strict=True))]


@pytest.mark.parametrize(("receipt", "runs"), CASES)
def test_the_rows_with_a_request_count_are_priced_as_a_trtllm_bench_run(
    shipped: KnowledgeBase, receipt: str, runs: int
) -> None:
    record = shipped.records[receipt]
    engine, version = record.get("engine.record"), record.get("engine.version")
    rows = record.data["results"]
    assert rows
    for row in rows:
        assert row["load"] == "maximum"
        priced = trtllm_bench.applies(engine, version, row, row["measures"])
        assert priced is ("prompts" in row)  # v0.20's 1024/2048 rows state none
    assert sum("prompts" in row for row in rows) == runs


@ONE_WORKER
def test_every_contradicted_v020_row_is_kb_too_fast() -> None:
    rows = _rows(V020)
    assert len(rows) == 60
    missed = [r for r in rows if r.state == CONTRADICTED]
    assert missed  # the account describes misses
    for row in missed:
        assert row.error is not None, (row.receipt, row.index)
        assert row.error > 0, (row.receipt, row.index, row.error)
    tp8 = {(V020[1], 10), (V020[0], 30)}  # TP8 128/128: -57.8%, -61.1% until session 26
    assert {(r.receipt, r.index) for r in rows if r.state == VALIDATED} >= tp8
