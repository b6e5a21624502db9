"""A trtllm-bench run at pp > 1 is pp micro-batch streams (end-to-end.json `pipeline_microbatches`).

TensorRT-LLM's PyTorch executor keeps pp_size micro-batches in flight (`_executor_loop_pp`);
kb prices such a run as pp streams of floor(C/pp) clients, each stepping the composed
pipeline step at its own micro-batch. These tests hold the rule to its declaration, its
arithmetic, the RTX PRO 6000 receipt's rows to it (its Llama 3.1 405B rows, 126 layers over
8 stages, are priced since pipeline_stage_split: tests/ledger/test_pp_stages.py), and the run's
time resolution to the exact run on two pipeline rows per push and on every row under
KB_FULL=1.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

import pytest

from kb.ledger import pp_microbatch, trtllm_bench
from kb.ledger.endtoend import RowResult, evaluate_row, unpriced_reasons
from kb.model import KnowledgeBase

DATA = Path(__file__).resolve().parents[2] / "kb" / "data" / "end-to-end.json"
RTX = "receipts/trtllm-v1.0-rtx-pro-6000-pipeline-parallel-throughput"
CARD = "hardware/nvidia-rtx-pro-6000-blackwell-server-edition"


def _row(shipped: KnowledgeBase, index: int) -> RowResult:
    record = shipped.get(RTX)
    assert record is not None
    return evaluate_row(shipped, record, index, record.data["results"][index], False)


def test_the_rule_is_declared_from_the_engines_code() -> None:
    entry = json.loads(DATA.read_text())["pipeline_microbatches"]
    assert "before any row was priced" in entry["reason"]
    assert "trtllm_bench_run" in entry["applies_to"] and "pp" in entry["applies_to"]
    assert "_executor_loop_pp" in entry["run"] and "num_micro_batches" in entry["run"]
    sources = " ".join(entry["sources"])
    for cited in ("py_executor.py", "tuning.py", "trtllm-perf-overview-v1.0"):
        assert cited in sources
    assert pp_microbatch.declared()


@pytest.mark.parametrize(
    ("pp", "stepped", "lanes"), [(1, True, 1), (2, True, 2), (8, True, 8), (4, False, 1)]
)
def test_only_a_trtllm_bench_run_at_pp_above_one_gets_streams(
    pp: int, stepped: bool, lanes: int
) -> None:
    assert pp_microbatch.lanes(pp, stepped) == lanes


def test_a_replicas_clients_split_over_its_streams_rounded_down() -> None:
    assert pp_microbatch.stream_clients(4096, 1, 8) == 512
    assert pp_microbatch.stream_clients(1001, 1, 2) == 500
    assert pp_microbatch.stream_clients(1000, 2, 1) == 500
    assert "1 of the 1001 sequences" in pp_microbatch.note(1001, 1, 2)
    assert "left out" not in pp_microbatch.note(4096, 1, 8)
    with pytest.raises(ValueError):
        pp_microbatch.stream_clients(8, 0, 2)


def test_the_receipt_names_the_card_and_prices_its_llama_3_3_rows(
    shipped: KnowledgeBase,
) -> None:
    record = shipped.get(RTX)
    assert record is not None
    assert record.get("hardware") == [CARD]
    assert RTX not in unpriced_reasons()  # the whole-receipt declaration is gone
    rows = record.data["results"]
    assert [row["pp"] for row in rows[:4]] == [1, 2, 4, 8]
    for index in (0, 1, 3):  # PP1, PP2 and PP8 at 128/128
        result = _row(shipped, index)
        assert result.predicted is not None and result.error is not None
        streams = [a for a in result.assumed if "pipeline_microbatches" in a]
        if rows[index]["pp"] == 1:
            assert not streams
        else:
            assert streams and f"pp = {rows[index]['pp']} micro-batches" in streams[0]


def test_streams_are_faster_than_one_batch_through_the_stages(
    shipped: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rule moves a PP row from kb's one-batch pipeline: at pp = 2 the streams' rate is
    above it (each micro-batch reads the weights once per turn, but the stages work at once)."""
    streams = _row(shipped, 1)
    monkeypatch.setattr(pp_microbatch, "lanes", lambda pp, stepped: 1)
    one_batch = _row(shipped, 1)
    assert streams.predicted is not None and one_batch.predicted is not None
    assert streams.predicted > one_batch.predicted
    assert not any("pipeline_microbatches" in a for a in one_batch.assumed)


def _verdicts(shipped: KnowledgeBase, rows: list[int]) -> list[tuple[str, float]]:
    out = []
    for index in rows:
        result = _row(shipped, index)
        assert result.error is not None
        out.append((result.state, float(result.error)))
    return out


def _same_verdicts(
    shipped: KnowledgeBase, monkeypatch: pytest.MonkeyPatch, rows: list[int]
) -> None:
    rounded = _verdicts(shipped, rows)
    exact = functools.partial(trtllm_bench.stepped_run, resolution=False)
    monkeypatch.setattr(trtllm_bench, "stepped_run", exact)
    for (state, error), (full_state, full_error) in zip(
        rounded, _verdicts(shipped, rows), strict=True
    ):
        assert state == full_state
        assert abs(error - full_error) < 1e-9


def test_the_resolution_gives_the_exact_runs_verdict_on_pipeline_rows(
    shipped: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    # premise: PP2 at 2048/2048 (1500 requests) and PP8 at 20000/2000 (1000 requests)
    _same_verdicts(shipped, monkeypatch, [29, 39])


@pytest.mark.skipif(not os.environ.get("KB_FULL"), reason="KB_FULL=1 compares every row")
def test_the_resolution_gives_the_exact_runs_verdict_on_every_priced_row(
    shipped: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    _same_verdicts(shipped, monkeypatch, list(range(46)))  # the 405B rows too (pp_stages)
