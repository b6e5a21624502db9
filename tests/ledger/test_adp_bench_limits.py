"""trtllm-bench 1.0's limits under attention DP (issue 35, session 23; `trtllm_bench_attention_dp`).

The TensorRT-LLM v1.0 perf-overview MoE rows run attention data-parallel (`tp: 1, dp: N,
moe_tp: N`). TensorRT-LLM's code (sources/github-trtllm-bench-attention-dp-limits) settles
how trtllm-bench's limits apply there: it computes max_batch_size and max_num_tokens as for a
tensor-parallel layout of the run's `--tp` GPUs (calc_engine_setting takes no attention-DP
argument), and each rank's executor applies both as its own; rank 0 balances the requests
over the ranks. kb steps each replica at the budget of that TP-layout estimate
(kb.ledger.adp_bench), not of its own attention-DP batch. These tests hold the sources'
words, the declaration, the budget each covered row is stepped at, and the premise that
neither batch cap binds on any covered row (so kb's batch is unchanged).
"""

from __future__ import annotations

from dataclasses import replace

from kb.ledger import adp_bench, trtllm_bench
from kb.ledger.endtoend import conditions, declaration, evaluate_row
from kb.ledger.scenario import Scenario
from kb.model import KnowledgeBase
from kb.resources import end_to_end

SOURCE = "sources/github-trtllm-bench-attention-dp-limits"
RECEIPTS = {
    "receipts/trtllm-v1.0-qwen3-235b-a22b-throughput-h100-h200-b200": 12,
    "receipts/trtllm-v1.0-llama-4-maverick-throughput-h100-h200-b200": 12,
    "receipts/trtllm-v1.0-llama-4-scout-throughput-h100-h200-b200": 8,
}
QWEN3 = "receipts/trtllm-v1.0-qwen3-235b-a22b-throughput-h100-h200-b200"
SCOUT = "receipts/trtllm-v1.0-llama-4-scout-throughput-h100-h200-b200"


def _flat(text: object) -> str:
    return " ".join(str(text).split())


def _covered(kb: KnowledgeBase) -> list[tuple[str, int, Scenario]]:
    found = []
    for receipt in RECEIPTS:
        record = kb.get(receipt)
        assert record is not None
        for index, row in enumerate(record.data["results"]):
            scenario = conditions(kb, record, dict(row))[0]
            if scenario.dp > 1:
                found.append((receipt, index, scenario))
    return found


def test_the_code_sizes_a_tp_layout_and_each_rank_applies_it(shipped: KnowledgeBase) -> None:
    source = shipped.get(SOURCE)
    assert source is not None
    notes = _flat(source.data["notes"])
    # (a) the estimate: passed --tp, nothing of attention DP
    assert 'params.get("tp"), params.get("pp"), dataset_metadata.avg_isl' in notes
    assert "adjusted_num_kv_heads = max(tp_size, model_config.num_key_value_heads)" in notes
    assert "total_gpu_memory = get_device_memory() * n_gpus" in notes
    # each rank applies it
    assert "executor_config.max_num_tokens, ctx_chunk_config)" in notes
    # (b) the batch cap per rank
    assert "self.dist.tp_size * self.max_num_active_requests" in notes
    # (c) balanced by rank 0
    assert "// self.dist.tp_size, max(self.all_ranks_num_active_requests))" in notes
    # the later fix the v1.0 runs predate
    assert "max_batch_size is computed per-rank" in notes
    assert "pull/13498" in notes


def test_the_rule_is_declared_for_the_engine_version() -> None:
    entry = end_to_end("trtllm_bench_attention_dp", lambda e: e)
    engine = entry["engines/tensorrt-llm"]
    assert engine["sources"] == [SOURCE]
    assert adp_bench.versions() == {"engines/tensorrt-llm": tuple(engine["versions"])}
    assert "before any row was priced with it" in entry["reason"]
    assert "+-25%" in entry["band"] and "lower or unchanged" in entry["expected"]


def test_the_estimate_is_the_tp_layout_of_the_rows_gpus() -> None:
    adp = Scenario("models/m", "hardware/h", 8, tp=1, dp=8, moe_tp=8, batch=896)
    assert adp_bench.tp_layout(adp) == replace(adp, tp=8, dp=1, moe_tp=1, batch=1)
    ep = Scenario("models/m", "hardware/h", 8, tp=1, dp=8, ep=8, batch=64)
    assert adp_bench.tp_layout(ep) == replace(ep, tp=8, dp=1, ep=1, batch=1)
    engine, version = "engines/tensorrt-llm", "1.0 release line (exact build not stated)"
    assert adp_bench.applies(engine, version, adp)
    assert not adp_bench.applies(engine, version, replace(adp, tp=8, dp=1, moe_tp=1))
    assert not adp_bench.applies(engine, "0.9.0", adp)


def test_every_covered_row_and_neither_batch_cap_binds(shipped: KnowledgeBase) -> None:
    """The premise that leaves kb's batch unchanged, on every covered row (conditions only).

    The replica's batch from its own KV memory is below kb's cap (4096/dp a replica) and at
    most trtllm-bench's TP-layout estimate, which its max_batch_size is at least.
    """
    decl = declaration()
    covered = _covered(shipped)
    assert len(covered) == sum(RECEIPTS.values())
    for receipt, index, s in covered:
        sequence = (s.input_tokens or 0) + (s.output_tokens or 0)
        estimate = adp_bench.estimated_batch(
            shipped, s, sequence, decl.max_load_fraction, decl.max_load_cap
        )
        per_replica = s.batch // s.dp
        assert per_replica < decl.max_load_cap // s.dp, (receipt, index)
        assert 1 <= per_replica <= estimate, (receipt, index, per_replica, estimate)


def test_a_covered_row_is_stepped_at_the_tp_estimates_budget(shipped: KnowledgeBase) -> None:
    record = shipped.get(QWEN3)
    assert record is not None
    row = dict(record.data["results"][10])  # H200 5000/500: kb's batch 824, budget 9216 before
    s = conditions(shipped, record, row)[0]
    assert (s.dp, s.batch) == (8, 824)
    decl = declaration()
    estimate = adp_bench.estimated_batch(
        shipped, s, 5500, decl.max_load_fraction, decl.max_load_cap
    )
    heuristic = trtllm_bench.max_num_tokens(estimate, 5000, 500)
    assert heuristic == 5120 != trtllm_bench.max_num_tokens(s.batch, 5000, 500)
    # session 24: get_settings floors it at the prompt + the estimate's max batch size
    budget = trtllm_bench.budget(estimate, 5000, 500)
    assert (
        budget
        == 5000 + trtllm_bench.max_batch_size(estimate)
        != trtllm_bench.budget(s.batch, 5000, 500)
    )
    assumed = " ".join(evaluate_row(shipped, record, 10, row, False).assumed)
    assert f"steps of at most {budget} tokens" in assumed
    assert f"estimate of {estimate} requests for the 8 GPUs tensor-parallel" in assumed


def test_a_row_on_one_gpu_keeps_its_own_batch(shipped: KnowledgeBase) -> None:
    record = shipped.get(SCOUT)
    assert record is not None
    row = dict(record.data["results"][11])  # B200 TP1 5000/500: no other rank
    s = conditions(shipped, record, row)[0]
    assert s.dp == 1
    assumed = " ".join(evaluate_row(shipped, record, 11, row, False).assumed)
    assert "trtllm_bench_attention_dp" not in assumed
    budget = trtllm_bench.budget(s.batch, 5000, 500)  # its own batch's (floored, session 24)
    assert f"steps of at most {budget} tokens" in assumed
