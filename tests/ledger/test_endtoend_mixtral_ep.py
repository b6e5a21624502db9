"""The Mixtral PR 2542 'master' rows ran expert parallelism, as sources/vllm-pr-2090 says.

Main then sharded whole experts across the ranks; the receipt's rows say ep 8, so kb
never prices them as experts sharded by rank with routed tokens (the PR's fused layout, a
condition they did not run). Since session 25 (kb/data/end-to-end.json
`dense_expert_parallel`) they are priced as PR 2090's scheme ran: each rank's whole expert
on every token, every expert read every step, the attention and the MoE output all-reduced
over the 8 ranks (tp 8 with every expert active, `dense_experts`), never with the routed
read or matmuls. They stay too fast (a miss, shown as one). The fused rows of the same
receipt stay tensor parallel with routed experts and evaluated.
"""

from __future__ import annotations

from kb.ledger.endtoend import CONTRADICTED, VALIDATED, conditions_text, evaluate_row
from kb.model import KnowledgeBase

MIXTRAL = "receipts/vllm-mixtral-8x7b-h100-tp8-latency-by-batch"


def test_master_rows_state_expert_parallelism_and_are_priced_as_pr_2090_ran(
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
        assert result.conditions.get("dense_experts") is True, result.conditions
        assert result.conditions.get("tp") == 8, result.conditions
        assert "every expert on every token" in conditions_text(result.conditions)
        assert result.measured is not None and result.predicted < result.measured
    for i in fused:
        assert rows[i].get("ep", 1) == 1
        result = evaluate_row(shipped, record, i, rows[i], False)
        assert result.state in (VALIDATED, CONTRADICTED) and result.predicted is not None
        assert "dense_experts" not in result.conditions
