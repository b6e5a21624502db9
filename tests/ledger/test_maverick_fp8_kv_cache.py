"""TensorRT-LLM v1.0 Llama 4 Maverick FP8 rows: the checkpoint's FP8 KV cache is priced.

NVIDIA's accuracy test loads nvidia/Llama-4-Maverick-17B-128E-Instruct-FP8 with no KV dtype
and asserts an FP8 KV cache (sources/github-trtllm-accuracy-test-llm-api-pytorch); the perf
page's trtllm-bench run sets no KV dtype, so the H100/H200 rows state `kv_precision: fp8`.
These tests hold the rows to that, and show what the stated format changes: at maximum load
the KV bytes per token halve, so the batch kb admits is about twice the bf16 one.
"""

from __future__ import annotations

from kb.model import KnowledgeBase
from tests.ledger.kv_format import stated_and_default

MAVERICK = "receipts/trtllm-v1.0-llama-4-maverick-throughput-h100-h200-b200"
SOURCE = "sources/github-trtllm-accuracy-test-llm-api-pytorch"


def _rows(kb: KnowledgeBase) -> list[dict[str, object]]:
    record = kb.get(MAVERICK)
    assert record is not None
    return [dict(r) for r in record.data["results"]]


def test_the_fp8_rows_state_an_fp8_kv_cache_and_the_fp4_rows_do_not(shipped: KnowledgeBase) -> None:
    rows = _rows(shipped)
    fp8 = [r for r in rows if r["precision"] == "fp8"]
    fp4 = [r for r in rows if r["precision"] == "fp4"]
    assert len(fp8) == 8 and len(fp4) == 4
    assert all(r["kv_precision"] == "fp8" for r in fp8)
    assert all("kv_precision" not in r for r in fp4)  # no FP4 checkpoint is named


def test_the_source_quotes_the_assertion(shipped: KnowledgeBase) -> None:
    source = shipped.get(SOURCE)
    assert source is not None
    notes = str(source.data["notes"])
    assert "Llama-4-Maverick-17B-128E-Instruct-FP8" in notes
    assert "kv_cache_quant_algo == QuantAlgo.FP8" in notes
    record = shipped.get(MAVERICK)
    assert record is not None and record.data["version"] >= 4
    assert any(SOURCE in str(h["change"]) for h in record.data["history"])


def test_the_stated_format_is_priced_and_halves_the_bytes_per_token(shipped: KnowledgeBase) -> None:
    record = shipped.get(MAVERICK)
    assert record is not None
    row = _rows(shipped)[0]  # H100, TP8, 128/2048
    scenario, bf16 = stated_and_default(shipped, record, 0, row)
    # the memory after the weights is the same; the KV bytes per token halve (whole
    # sequences per replica: each of the dp replicas rounds down on its own)
    assert abs(scenario.batch - 2 * bf16.batch) <= scenario.dp
