"""Why the TensorRT-LLM v1.0 MoE throughput rows stay misses (issue 35, session 25).

docs/ledger.md "The TensorRT-LLM v1.0 MoE rows, read against their sources". kb prices the
Qwen3-235B-A22B, Llama 4 Maverick and Llama 4 Scout rows of the v1.0 perf overview with
attention data-parallel and every routed expert tensor-parallel (`moe_tp`, the mapping's
default with no `--ep` value). Session 25 looked for a sourced mechanism that prices the
MoE layer differently and found none that can be priced; these tests hold the two findings
about kb's own composition that the account rests on, and fail if either changes:

- the layout question cannot raise kb's step: priced expert-parallel (`ep: N`, what
  `--ep N` would give) instead of `moe_tp: N`, every covered row holds the same weights and
  reads the same expert bytes a step, and its decode step is no longer (the gather and
  scatter give way to the dispatch and combine);
- the Llama 4 rows' decode attention is priced one read of each KV head's cache a step, as
  XQA runs it: every row's input plus output is under the model's attention chunk, the
  condition under which TensorRT-LLM pull request 6306 turns chunked attention off so that
  XQA runs (sources/github-trtllm-llama4-chunked-attention-xqa), and
  `kv_read_per_query_head` (the masked multi-head kernel's read, which a build without that
  change would run in the chunked layers) is not declared for the v1.0 line.
"""

from __future__ import annotations

from dataclasses import replace

from kb.ledger.endtoend import conditions, kv_read_per_query_head_versions
from kb.ledger.scenario import Outcome, Scenario, outcome
from kb.model import KnowledgeBase

QWEN3 = "receipts/trtllm-v1.0-qwen3-235b-a22b-throughput-h100-h200-b200"
MAVERICK = "receipts/trtllm-v1.0-llama-4-maverick-throughput-h100-h200-b200"
SCOUT = "receipts/trtllm-v1.0-llama-4-scout-throughput-h100-h200-b200"
ENGINE = "engines/tensorrt-llm"
SOURCE = "sources/github-trtllm-llama4-chunked-attention-xqa"


def _scenarios(kb: KnowledgeBase, receipt: str) -> list[tuple[int, Scenario]]:
    record = kb.get(receipt)
    assert record is not None
    return [
        (index, conditions(kb, record, row)[0]) for index, row in enumerate(record.data["results"])
    ]


def _weight_read(result: Outcome) -> object:
    useful = next(r for r in result.rows if r.name == "useful")
    return useful.inputs["t_w"]


def test_an_expert_parallel_layout_would_not_slow_any_covered_row(shipped: KnowledgeBase) -> None:
    covered = [
        (receipt, index, s)
        for receipt in (QWEN3, MAVERICK, SCOUT)
        for index, s in _scenarios(shipped, receipt)
        if s.moe_tp > 1
    ]
    assert len(covered) == 32  # 12 Qwen3, 12 Maverick, the 8 TP4 Scout rows
    for receipt, index, s in covered:
        assert (s.tp, s.ep, s.moe_tp) == (1, 1, s.dp), (receipt, index)
        split, spread = outcome(s, shipped), outcome(replace(s, moe_tp=1, ep=s.dp), shipped)
        assert split.fits and spread.fits, (receipt, index)
        assert split.need_per_device == spread.need_per_device, (receipt, index)
        assert _weight_read(split) == _weight_read(spread), (receipt, index)
        assert split.tpot is not None and spread.tpot is not None
        assert spread.tpot <= split.tpot, (receipt, index)


def test_the_llama_4_rows_are_priced_as_xqa_runs_them(shipped: KnowledgeBase) -> None:
    assert "1.0 release line (exact build not stated)" not in kv_read_per_query_head_versions().get(
        ENGINE, ()
    )
    source = shipped.get(SOURCE)
    assert source is not None
    notes = " ".join(str(source.data["notes"]).split())
    for words in (
        "XQA does not support chunked attention at the moment, while MMHA supports chunked "
        "attention but is slower",
        "max_seqlen < chunked_size",
        "kwargs_max_sql = max_seq_len or metadata.max_sequence_length",
    ):
        assert words in notes
    for receipt in (MAVERICK, SCOUT):
        record = shipped.get(receipt)
        assert record is not None
        model = shipped.get(str(record.data["model"]))
        assert model is not None
        chunk = model.data["geometry"]["local_attention_window"]
        for index, s in _scenarios(shipped, receipt):
            assert s.input_tokens is not None and s.output_tokens is not None
            assert s.input_tokens + s.output_tokens < chunk, (receipt, index)
            assert not s.kv_read_per_query_head, (receipt, index)
