"""`kb list --end-to-end` on the shipped records: the rows issue 35 session 13 made evaluable.

A maximum-load TensorRT-LLM row shows its prediction, the batch kb chose and why; a row
that measures memory at start-up shows its prediction with the feasibility provenance; the
NIM rows name their engine; every number printed under `exact` reads back as a fraction.
"""

from __future__ import annotations

from fractions import Fraction

from tests.shipped_outputs import ONE_WORKER, end_to_end_json

pytestmark = ONE_WORKER


def test_the_new_rows_are_listed_with_their_provenance() -> None:
    """What `kb list --end-to-end --format json` prints at the project folder (run once per
    worker, in-process: tests/shipped_outputs.py)."""
    rows = end_to_end_json()["rows"]
    by = {(r["receipt"], r["row"]): r for r in rows}
    max_load = by[("receipts/trtllm-v1.0-llama-3.3-70b-throughput-h100-h200-b200", 1)]
    assert max_load["predicted"] and max_load["state"] in ("validated", "contradicted")
    assert any("maximum-load run" in a for a in max_load["assumed"])
    assert "batch 107" in max_load["conditions"]
    pool = by[("receipts/jingchaozhang-qwen2.5-72b-h100-vllm-kv-pool-tp8", 0)]
    assert pool["measures"] == "kv_pool_per_device" and pool["predicted"]
    assert pool["provenance"].startswith("estimated (feasibility")
    assert pool["exact"]["unit"] == "B"
    assert not any(r["reason"].startswith("the receipt names no engine record") for r in rows)
    for row in rows:
        for name in ("predicted", "measured", "error"):
            if row["exact"][name] is not None:
                Fraction(row["exact"][name])  # every exact value prints and reads back
