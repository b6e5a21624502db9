"""The Mixtral PR 2542 'master' rows ran expert parallelism, as sources/vllm-pr-2090 says.

Main then sharded whole experts across the ranks; the receipt's rows say ep 8, so kb
never prices them as experts sharded by rank (a condition they did not run). Expert
parallelism is composed now (kb.ledger.expert: routed dispatch and combine), so they are
priced with ep 8; PR 2090's scheme multiplied the whole batch by each rank's expert, more
work than routing, so the routed model prices them too fast (a miss, shown as one). The
fused rows of the same receipt stay tensor parallel and evaluated.
"""

from __future__ import annotations

from kb.ledger.endtoend import CONTRADICTED, VALIDATED, evaluate_row
from kb.model import KnowledgeBase

MIXTRAL = "receipts/vllm-mixtral-8x7b-h100-tp8-latency-by-batch"


def test_master_rows_state_expert_parallelism_and_are_not_priced_as_tp(
    shipped: KnowledgeBase,
) -> None:
    record = shipped.get(MIXTRAL)
    assert record is not None
    rows = record.data["results"]
    master = [i for i, r in enumerate(rows) if "master" in r["label"] or "main" in r["label"]]
    fused = [i for i in range(len(rows)) if i not in master]
    assert len(master) == 7 and len(fused) == 7
    for i in master:
        assert rows[i]["ep"] == 8 and "sources/vllm-pr-2090" in rows[i]["note"]
        result = evaluate_row(shipped, record, i, rows[i], False)
        assert result.state in (VALIDATED, CONTRADICTED) and result.predicted is not None
        assert result.conditions.get("ep") == 8, result.conditions
        assert result.measured is not None and result.predicted < result.measured
    for i in fused:
        assert rows[i].get("ep", 1) == 1
        result = evaluate_row(shipped, record, i, rows[i], False)
        assert result.state in (VALIDATED, CONTRADICTED) and result.predicted is not None
