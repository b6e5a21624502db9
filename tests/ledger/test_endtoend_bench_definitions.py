"""What the TensorRT-LLM first-token and gpt-fast benchmarks time, held on their rows.

Issue 35 part C (session 14), read in the engines' source:

- TensorRT-LLM's gptSessionBenchmark "1st Token Latency" (v0.5, v0.8, v0.9) is one context
  pass and the sampling of the first token; the generation loop checks the decoder before
  running the engine, so no decode step runs. kb prices it as the prefill pass, and no
  `first_token` entry names engines/tensorrt-llm.
- gpt-fast's rows are the generated tokens over one generate() call with the decode step
  under CUDA graphs (torch.compile mode="reduce-overhead"), Mixtral's too; its tensor-parallel
  rows ran PyTorch's intra-node all-reduce, and the NCCL-run table before commit c5d3454 is a
  receipt of its own, priced by the same composition.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from kb.ledger.endtoend import conditions, evaluate_row
from kb.ledger.scenario import outcome
from kb.ledger.unsharded import step_time
from kb.model import KnowledgeBase

TRTLLM_FIRST_TOKEN = (
    "receipts/trtllm-v0.5-llama-2-first-token-latency-batch1",
    "receipts/trtllm-v0.8-first-token-latency-batch1",
    "receipts/trtllm-v0.9-first-token-latency-batch1",
)
GPT_FAST = (
    "receipts/gpt-fast-llama-2-7b-a100-tp-sweep-batch1",
    "receipts/gpt-fast-llama-2-70b-a100-tp-sweep-batch1",
    "receipts/gpt-fast-mixtral-8x7b-a100-tp-sweep-batch1",
)
NCCL = "receipts/gpt-fast-llama-2-a100-tp-sweep-nccl-batch1"
INTRA_NODE = {
    "models/llama-2-7b": "receipts/gpt-fast-llama-2-7b-a100-tp-sweep-batch1",
    "models/llama-2-70b": "receipts/gpt-fast-llama-2-70b-a100-tp-sweep-batch1",
}


def test_no_first_token_rule_names_tensorrt_llm() -> None:
    data = json.loads(
        (Path(__file__).resolve().parents[2] / "kb" / "data" / "end-to-end.json").read_text()
    )
    assert "engines/tensorrt-llm" not in data["first_token"]


@pytest.mark.parametrize("receipt", TRTLLM_FIRST_TOKEN)
def test_trtllm_first_token_rows_are_the_prefill_pass(shipped: KnowledgeBase, receipt: str) -> None:
    record = shipped.get(receipt)
    assert record is not None
    rows = record.data["results"]
    assert rows
    for index, row in enumerate(rows):
        assert row["output_tokens"] == 1 and row["batch"] == 1
        scenario, measures, _ = conditions(shipped, record, row)
        assert measures == "ttft"
        result = evaluate_row(shipped, record, index, row, False)
        assert result.predicted == outcome(scenario, shipped).ttft, row["label"]
        assert not any(a.startswith("first token:") for a in result.assumed)


@pytest.mark.parametrize("receipt", GPT_FAST)
def test_gpt_fast_rows_run_under_cuda_graphs(shipped: KnowledgeBase, receipt: str) -> None:
    record = shipped.get(receipt)
    assert record is not None
    assert all(row["cuda_graphs"] is True for row in record.data["results"])
    assert "reduce-overhead" in record.data["notes"] + str(record.data["history"])


def test_the_nccl_rows_are_decode_rates_priced_by_the_same_composition(
    shipped: KnowledgeBase,
) -> None:
    record = shipped.get(NCCL)
    assert record is not None
    rows = record.data["results"]
    assert [(r["model"], r["tp"]) for r in rows] == [
        ("models/llama-2-7b", 2),
        ("models/llama-2-7b", 4),
        ("models/llama-2-7b", 8),
        ("models/llama-2-70b", 2),
        ("models/llama-2-70b", 4),
        ("models/llama-2-70b", 8),
    ]
    for index, row in enumerate(rows):
        scenario, measures, _ = conditions(shipped, record, row)
        assert measures == "decode_tokens_per_s"
        tpot = outcome(scenario, shipped).tpot
        assert tpot is not None
        result = evaluate_row(shipped, record, index, row, False)
        t_u = step_time(shipped, scenario)  # the embedding and head whole on every rank
        assert t_u is not None and t_u > 0
        assert result.predicted == Fraction(1) / (tpot + t_u)
        # the intra-node receipt's row at the same model and TP is priced identically:
        # kb holds no curve of PyTorch's intra-node all-reduce, so both are NCCL-priced
        later = shipped.get(INTRA_NODE[row["model"]])
        assert later is not None
        (twin,) = [
            (i, r)
            for i, r in enumerate(later.data["results"])
            if r["tp"] == row["tp"] and r.get("precision", "bf16") == "bf16"
        ]
        other = evaluate_row(shipped, later, twin[0], twin[1], False)
        assert other.predicted == result.predicted
        # and the measured rates show the all-reduce change the README's commit names
        assert twin[1]["value"]["value"] > row["value"]["value"]
