"""What TurboMind keeps of a preempted sequence (end-to-end.json `turbomind_kept_prefix`).

The rule is declared from the engine's source at the tag the receipts name, and the
rows `turbomind_pool` prices say they use it. The schedule itself (a victim keeps the
head of its blocks, a sequence that cannot grow waits with its blocks, a waiting one's
blocks are taken from its tail) is held on runs worked by hand in
tests/ledger/test_turbomind_run.py. Held too, as docs/ledger.md states them (session 22): the
engine's sub-batches of one iteration's prompts price as kb's one pass, and LMDeploy's
first-token misses stay misses, each on its side.
"""

from __future__ import annotations

import json
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

from kb.ledger.endtoend import conditions, evaluate_row
from kb.ledger.scenario import outcome
from kb.model import KnowledgeBase

TAG = "9c46b27ce0358b8bc645633442b7810f715997d7"  # InternLM/lmdeploy v0.1.0a1
SEVEN = "receipts/lmdeploy-llama-2-7b-a100-tp1-static-shapes"


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


def test_the_engine_s_sub_batches_price_as_one_pass(shipped: KnowledgeBase) -> None:
    # max_context_token_num 4 x session_len 4104 = 16,416 tokens: 2,047-token contexts go
    # 8 to a sub-batch, so batch 16's 15 later prompts run as 8 + 7.
    record = shipped.get(SEVEN)
    assert record is not None
    scenario, _, _ = conditions(shipped, record, record.data["results"][11])  # b16 2048/128

    def prefill(sequences: int) -> Fraction:
        at = replace(scenario, batch=sequences, input_tokens=2047, context=2048)
        found = outcome(at, kb=shipped).ttft
        assert found is not None
        return found

    assert 8 * 2047 <= 4 * 4104 < 9 * 2047
    one, split = prefill(15), prefill(8) + prefill(7)
    assert abs(split / one - 1) < Fraction(3, 1000)


MISSES = {  # receipt suffix, result: the side kb misses on (docs/ledger.md, session 22)
    ("7b-a100-tp1-static-shapes", 11): "fast",  # b16 2048/128
    ("7b-a100-tp1-static-shapes", 13): "fast",  # b32 1/128
    ("7b-a100-tp1-static-shapes", 15): "slow",  # b32 128/2048 (the round rule)
    ("7b-a100-tp1-static-shapes", 19): "fast",  # b64 1/128
    ("7b-a100-tp1-static-shapes", 21): "slow",  # b64 128/2048 (past the pool)
    ("13b-a100-tp1-static", 25): "fast",  # b32 128/2048 (past the pool)
    ("70b-a100-tp4-static-shapes", 13): "fast",  # b32 1/128
    ("70b-a100-tp4-static-shapes", 19): "fast",  # b64 1/128
}


def test_the_session_25_kernels_bring_one_miss_into_the_band(shipped: KnowledgeBase) -> None:
    """b16 2048/2048 (a miss, too fast, until session 25): its prompt passes now add their
    non-matmul kernels (`prefill_kernels`) and it validates, still on the fast side."""
    record = shipped.get("receipts/lmdeploy-llama-2-7b-a100-tp1-static")
    assert record is not None
    result = evaluate_row(shipped, record, 7, record.data["results"][7], False)
    assert result.state == "validated" and result.error is not None and result.error < 0


def test_the_first_token_misses_stay_misses_each_on_its_side(shipped: KnowledgeBase) -> None:
    for (suffix, index), side in MISSES.items():
        record = shipped.get(f"receipts/lmdeploy-llama-2-{suffix}")
        assert record is not None
        result = evaluate_row(shipped, record, index, record.data["results"][index], False)
        assert result.state == "contradicted" and result.error is not None, (suffix, index)
        assert (result.error < 0) == (side == "fast"), (suffix, index, result.error)


def test_the_one_token_rows_are_not_monotone_in_the_batch(shipped: KnowledgeBase) -> None:
    record = shipped.get(SEVEN)
    assert record is not None
    rows = record.data["results"]
    ttft = {
        r["batch"]: r["value"]["value"]
        for r in rows
        if r["label"].endswith(", 1/128, average first-token latency")
    }
    assert ttft[16] < ttft[64] < ttft[32]
