"""TensorRT-LLM v1.0's MoE tables ran attention DP with tensor-parallel experts (sessions 22, 23).

Issue 35. Session 21 found the page's MoE options nest `enable_attention_dp` under
`cuda_graph_config`, where the LLM API rejects it, and kept the rows at tp 8. The pull request
that published the tables corrected that block in review (sources/github-trtllm-pr-7848), so
the runs are taken to have used attention data parallelism. The page gives no value of
`--ep $ep_size`, and TensorRT-LLM's mapping runs the experts tensor-parallel over the `--tp`
ranks when no `--ep` is given (sources/github-trtllm-moe-mapping-default). Session 22 kept
tp 8, as kb wrote attention DP only with the experts expert-parallel; session 23 added the
degree `moe_tp` (kb.ledger.expert, tests/ledger/test_moe_tensor_parallel.py) and the rows
state `tp: 1, dp: 8, moe_tp: 8`.

These tests hold the sources' words, the receipts' record of them, the layout written, and
the premise that `dp` with neither `ep` nor `moe_tp` replicates every expert.
"""

from __future__ import annotations

import copy

from kb.ledger.endtoend import evaluate_row
from kb.model import KnowledgeBase

MAVERICK = "receipts/trtllm-v1.0-llama-4-maverick-throughput-h100-h200-b200"
QWEN3 = "receipts/trtllm-v1.0-qwen3-235b-a22b-throughput-h100-h200-b200"
PR = "sources/github-trtllm-pr-7848"
MAPPING = "sources/github-trtllm-moe-mapping-default"
LAYOUT = "sources/github-trtllm-attention-dp-moe-tp"


def _flat(text: object) -> str:
    return " ".join(str(text).split())


def test_the_review_moved_the_key_and_gave_no_ep(shipped: KnowledgeBase) -> None:
    source = shipped.get(PR)
    assert source is not None
    notes = _flat(source.data["notes"])
    assert source.data["url"] == "https://github.com/NVIDIA/TensorRT-LLM/pull/7848"
    assert "enable_attention_dp should be at the same indent as the cuda_graph_config" in notes
    assert '"should be fixed now"' in notes
    # what it does not settle is said, not left out
    assert "no value of `$ep_size` is given for any column" in notes
    assert "no comment says the runs were re-measured" in notes


def test_the_engine_default_is_experts_tensor_parallel(shipped: KnowledgeBase) -> None:
    source = shipped.get(MAPPING)
    assert source is not None
    notes = _flat(source.data["notes"])
    assert "moe_tp_size = moe_world_size // moe_cluster_size; moe_ep_size = 1" in notes
    assert "self.moe_expert_parallel_size = -1" in notes
    assert '"--ep", type=int, default=None' in notes
    assert "return self.tp_size if self.enable_attention_dp else 1" in notes


def test_the_receipts_record_the_reading_and_write_moe_tp(shipped: KnowledgeBase) -> None:
    for receipt, version in ((QWEN3, 6), (MAVERICK, 7)):
        record = shipped.get(receipt)
        assert record is not None
        assert record.data["version"] >= version + 1
        read = _flat(record.data["history"][version - 1]["change"])
        assert PR in read and MAPPING in read and "no prediction changed" in read
        # the history quotes what was encoded and what the source says
        assert "nests `enable_attention_dp: true` under `cuda_graph_config`" in read
        assert "should be at the same indent as the cuda_graph_config" in read
        written = next(
            _flat(entry["change"])
            for entry in record.data["history"][version:]
            if "What was encoded: every row `tp: 8" in _flat(entry["change"])
        )
        assert "What was encoded: every row `tp: 8, pp: 1` with no dp and no ep" in written
        assert "`tp: 1, dp: 8, moe_tp: 8`" in written and LAYOUT in written
        notes = _flat(record.data["notes"])
        assert PR in notes and MAPPING in notes and LAYOUT in notes
        assert "taken to have used attention data parallelism" in notes
        assert '"for most cases the defaults will work for people"' in notes
        topology = str(record.data["provenance"]["topology_direction"])
        assert "attention data parallelism" in topology and "moe_tp: 8" in topology
        for row in record.data["results"]:
            degrees = (row["tp"], row["dp"], row["moe_tp"])
            assert degrees == (1, 8, 8) and "ep" not in row, row["label"]


def test_kb_dp_without_ep_replicates_every_expert(shipped: KnowledgeBase) -> None:
    """The premise: `dp: 8` with neither `ep` nor `moe_tp` is eight whole copies; the 235B
    FP8 weights alone exceed an H100. Written with moe_tp 8 the row fits and is priced."""
    record = shipped.get(QWEN3)
    assert record is not None
    row = copy.deepcopy(dict(record.data["results"][0]))  # H100, TP8, 128/2048, FP8
    assert row["hardware"] == "hardware/nvidia-h100-sxm" and row["precision"] == "fp8"
    stated = evaluate_row(shipped, record, 0, row, False)
    assert stated.predicted is not None  # moe_tp 8 fits and is priced
    del row["moe_tp"]
    replicated = evaluate_row(shipped, record, 0, row, False)
    assert replicated.predicted is None
    assert "does not fit" in replicated.reason
