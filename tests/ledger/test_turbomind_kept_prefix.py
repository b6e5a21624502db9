"""What TurboMind keeps of a preempted sequence (end-to-end.json `turbomind_kept_prefix`).

The rule is declared from the engine's source at the tag the receipts name, and the
rows `turbomind_pool` prices say they use it. The schedule itself (a victim keeps the
head of its blocks, a sequence that cannot grow waits with its blocks, a waiting one's
blocks are taken from its tail) is held on runs worked by hand in
tests/ledger/test_turbomind_run.py.
"""

from __future__ import annotations

import json
from pathlib import Path

from kb.ledger.endtoend import evaluate_row
from kb.model import KnowledgeBase

TAG = "9c46b27ce0358b8bc645633442b7810f715997d7"  # InternLM/lmdeploy v0.1.0a1


def _declared() -> dict[str, object]:
    path = Path(__file__).resolve().parents[2] / "kb" / "data" / "end-to-end.json"
    data: dict[str, object] = json.loads(path.read_text(encoding="utf-8"))
    return data


def test_the_rule_is_declared_from_the_engine_at_the_receipts_tag() -> None:
    data = _declared()
    entry = data["turbomind_kept_prefix"]
    assert isinstance(entry, dict)
    assert entry["engines/lmdeploy"] == {"versions": ["v0.1.0a1"]}
    assert "before any row was priced with it" in entry["reason"]
    sources = " ".join(entry["sources"])
    for path in ("SequenceManager.cc", "BlockManager.cc", "LlamaBatch.cc"):
        assert f"{TAG}/src/turbomind/models/llama/{path}" in sources
    assert "bs.crbegin()" in sources  # the last block stamped first
    assert "missing > 1" in sources  # only the missing tokens prefilled again
    pool = data["turbomind_pool"]
    assert isinstance(pool, dict)
    assert "turbomind_kept_prefix" in pool["blocks"]
    assert "Assumed: a preempted sequence's blocks are lost" not in pool["blocks"]


def test_a_row_past_the_pool_says_it_keeps_the_head(shipped: KnowledgeBase) -> None:
    record = shipped.get("receipts/lmdeploy-llama-2-13b-a100-tp1-static")
    assert record is not None
    row = record.data["results"][35]  # batch 64, 128/2048, average first-token latency
    result = evaluate_row(shipped, record, 35, row, False)
    assert result.predicted is not None
    note = next(a for a in result.assumed if a.startswith("turbomind_pool:"))
    assert "keeping the head of its blocks (turbomind_kept_prefix)" in note


def test_a_row_the_pool_holds_does_not_name_it(shipped: KnowledgeBase) -> None:
    record = shipped.get("receipts/lmdeploy-llama-2-13b-a100-tp1-static")
    assert record is not None
    row = record.data["results"][33]  # batch 64, 128/128: 64 x 2 blocks <= 500
    result = evaluate_row(shipped, record, 33, row, False)
    assert not any("turbomind_kept_prefix" in a for a in result.assumed)
