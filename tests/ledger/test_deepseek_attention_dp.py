"""TensorRT-LLM's DeepSeek-R1 max-throughput rows with attention data parallelism (session 19).

Both commands of the source set `enable_attention_dp: true` with `--tp 8 --ep 8`: each rank
runs attention for its own requests, which kb writes tp 1, dp 8 (as the SGLang wide-EP
receipt writes DP attention). Read as TP8 attention, kb found neither run fits; read as the
source runs them, the H200 run is priced as a finite run and shown as the miss it is, and
the B200 run (49,152 requests) is too long for kb to simulate and says so.
"""

from __future__ import annotations

from kb.ledger.endtoend import CONTRADICTED, NOT_EVALUABLE, evaluate_row
from kb.model import KnowledgeBase

R1 = "receipts/trtllm-deepseek-r1-b200-h200-max-throughput"


def test_the_rows_state_attention_data_parallelism(shipped: KnowledgeBase) -> None:
    record = shipped.records[R1]
    assert "enable_attention_dp: true" in record.data["provenance"]["topology_direction"]
    for row in record.data["results"]:
        assert (row["tp"], row["dp"], row["ep"], row["gpus"]) == (1, 8, 8, 8)
        assert row["concurrency"] % row["dp"] == 0 and row["prompts"] % row["dp"] == 0


def test_the_h200_run_fits_and_is_priced_as_a_run(shipped: KnowledgeBase) -> None:
    record = shipped.records[R1]
    result = evaluate_row(shipped, record, 1, record.data["results"][1], False)
    assert result.predicted is not None and result.outcome is not None
    assert result.outcome.fits and "does not fit" not in result.reason
    assert any("finite_run" in note for note in result.assumed)
    assert result.state == CONTRADICTED  # a miss, shown as one (+146% when written)


def test_the_b200_run_is_too_long_to_simulate(shipped: KnowledgeBase) -> None:
    # Past finite_run's bound the row is priced at its steady state (finite_run_past_bound,
    # tests/ledger/test_finite_run_past_bound.py), and says the simulator refused it.
    record = shipped.records[R1]
    result = evaluate_row(shipped, record, 0, record.data["results"][0], False)
    assert result.state != NOT_EVALUABLE and result.predicted is not None
    assert any("past the simulator's bound" in a for a in result.assumed)
