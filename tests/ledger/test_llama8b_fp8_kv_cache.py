"""TensorRT-LLM v1.0 Llama 3.1 8B rows: the checkpoint's FP8 KV cache is priced (session 22).

trtllm-bench keeps the KV dtype "auto" unless its options set one, and "auto" runs the
checkpoint's `kv_cache_quant_algo` (sources/github-trtllm-bench-kv-cache-dtype); a TensorRT-LLM
0.20.0 log of nvidia/Llama-3.1-8B-Instruct-FP8 allocates one byte per cached element under "auto"
(sources/trtllm-issue-6294). These tests hold the rows to that, check the source's arithmetic
against kb's own model and accelerator records, and show what the stated format changes.
"""

from __future__ import annotations

from fractions import Fraction

from kb.model import KnowledgeBase
from tests.ledger.kv_format import stated_and_default

RECEIPT = "receipts/trtllm-v1.0-llama-3.1-8b-throughput-h100-h200"
LOG = "sources/trtllm-issue-6294"
CODE = "sources/github-trtllm-bench-kv-cache-dtype"
GIB = 2**30
# The log's line, verbatim in the source record: "Allocated 52.51 GiB for max tokens in paged
# KV cache (860320)."
ALLOCATED_GIB = Fraction("52.51")
TOKENS = 860320


def _rows(kb: KnowledgeBase) -> list[dict[str, object]]:
    record = kb.get(RECEIPT)
    assert record is not None
    return [dict(r) for r in record.data["results"]]


def _bytes_per_token(kb: KnowledgeBase, element_bytes: int) -> int:
    model = kb.get("models/llama-3.1-8b")
    assert model is not None
    g = model.data["geometry"]
    return 2 * int(g["layers"]) * int(g["kv_heads"]) * int(g["head_dim"]) * element_bytes


def test_every_row_states_an_fp8_kv_cache_citing_both_sources(shipped: KnowledgeBase) -> None:
    rows = _rows(shipped)
    assert len(rows) == 8
    assert all(r["precision"] == "fp8" and r["kv_precision"] == "fp8" for r in rows)
    record = shipped.get(RECEIPT)
    assert record is not None and record.data["version"] >= 5
    change = " ".join(str(h["change"]) for h in record.data["history"])
    assert LOG in change and CODE in change


def test_the_log_is_quoted_and_its_allocation_is_one_byte_per_element(
    shipped: KnowledgeBase,
) -> None:
    source = shipped.get(LOG)
    assert source is not None
    notes = str(source.data["notes"])
    assert "Allocated 52.51 GiB for max tokens in" in notes and "(860320)" in notes
    assert "Using checkpoint KV" in notes and "models--nvidia--Llama-3.1-8B-Instruct-FP8" in notes
    per_token = ALLOCATED_GIB * GIB / TOKENS
    fp8, bf16 = _bytes_per_token(shipped, 1), _bytes_per_token(shipped, 2)
    # the log prints GiB to two decimals: half a unit of the last digit, over the tokens
    assert abs(per_token - fp8) <= Fraction("0.005") * GIB / TOKENS
    assert abs(per_token - bf16) > bf16 // 4
    h100 = shipped.get("hardware/nvidia-h100-sxm")
    assert h100 is not None
    capacity = h100.data["memory"]["capacity"]
    assert capacity["unit"] == "GiB"
    assert TOKENS * bf16 > int(capacity["value"]) * GIB  # a 16-bit cache of them would not fit


def test_the_code_source_names_the_branch_that_never_runs(shipped: KnowledgeBase) -> None:
    source = shipped.get(CODE)
    assert source is not None
    notes = str(source.data["notes"])
    assert 'kv_cache_dtype = "auto"' in notes
    assert "kv_cache_dtype is None" in notes
    assert "Using checkpoint KV quantization" in notes
    assert "default=.90" in notes and "min(kv_cache_max_requests, 4096)" in notes


def test_the_stated_format_is_priced_and_doubles_the_batch(shipped: KnowledgeBase) -> None:
    record = shipped.get(RECEIPT)
    assert record is not None
    rows = _rows(shipped)
    index = next(i for i, r in enumerate(rows) if r["label"] == "H100, TP1, 2048/2048")
    row = rows[index]
    scenario, bf16 = stated_and_default(shipped, record, index, row)
    assert bf16.batch < 4096 and 2 * bf16.batch - 2 <= scenario.batch <= 2 * bf16.batch + 2
