"""TensorRT-LLM v1.0 perf-overview rows: a KV-cache format is stated only from its checkpoint.

trtllm-bench sets no KV dtype on the page, so each run used its checkpoint's
`kv_cache_quant_algo` (sources/github-trtllm-bench-kv-cache-dtype). Session 22 settled the
Llama 3.1 8B FP8 checkpoint from a log of it; session 23 searched the others and settled none.
These tests hold that: a row states `kv_precision` only where the receipt's history cites a
source record naming the checkpoint the row ran; the rows left unsettled are priced at kb's
declared unstated default and say so; and the one hf_quant_config.json read (the 405B's, an
undated copy) is quoted as its tree lists it.
"""

from __future__ import annotations

import json
import re

from kb.ledger.endtoend import conditions
from kb.model import KnowledgeBase

PREFIX = "receipts/trtllm-v1.0-"
RECEIPTS = (
    "receipts/trtllm-v1.0-llama-3.1-8b-throughput-h100-h200",
    "receipts/trtllm-v1.0-llama-3.1-405b-throughput-h100-h200",
    "receipts/trtllm-v1.0-llama-3.3-70b-throughput-h100-h200-b200",
    "receipts/trtllm-v1.0-llama-4-scout-throughput-h100-h200-b200",
    "receipts/trtllm-v1.0-qwen3-235b-a22b-throughput-h100-h200-b200",
    "receipts/trtllm-v1.0-llama-4-maverick-throughput-h100-h200-b200",
    "receipts/trtllm-v1.0-llama-3.1-405b-throughput-b200",  # session 24: the 405B B200 column
    # session 24: the page's RTX 6000 Pro pipeline rows (no KV format stated; not priced)
    "receipts/trtllm-v1.0-rtx-pro-6000-pipeline-parallel-throughput",
)
UNSETTLED = RECEIPTS[1:5]
B200_405B = RECEIPTS[6]  # encoded unsettled in session 24 (its notes say what was searched)
HF_405B = "sources/hf-nvidia-llama-3.1-405b-instruct-fp8"
RECIPE_70B = "sources/trtllm-quick-start-llama3.3-70b"
CHECKPOINT = re.compile(r"nvidia/[A-Za-z0-9.\-]+-FP8")
SOURCE_ID = re.compile(r"sources/[a-z0-9.\-]+")


def _record_data(kb: KnowledgeBase, record_id: str) -> dict[str, object]:
    record = kb.get(record_id)
    assert record is not None, record_id
    return dict(record.data)


def test_every_receipt_of_the_page_is_listed(shipped: KnowledgeBase) -> None:
    found = sorted(r for r in shipped.records if r.startswith(PREFIX))
    assert found == sorted(RECEIPTS)


def test_a_stated_kv_format_cites_a_source_naming_the_checkpoint(shipped: KnowledgeBase) -> None:
    stated = 0
    for receipt_id in RECEIPTS:
        data = _record_data(shipped, receipt_id)
        rows = [dict(r) for r in data["results"]]  # type: ignore[attr-defined]
        if not any("kv_precision" in r for r in rows):
            continue
        provenance = dict(data["provenance"])  # type: ignore[call-overload]
        checkpoints = set(CHECKPOINT.findall(str(provenance["model_precision"])))
        assert checkpoints, receipt_id
        history = " ".join(str(h["change"]) for h in data["history"])  # type: ignore[attr-defined]
        cited = set(SOURCE_ID.findall(history))
        naming = [
            s
            for s in cited
            if shipped.get(s) is not None
            and checkpoints & set(CHECKPOINT.findall(str(_record_data(shipped, s).get("notes"))))
        ]
        assert naming, f"{receipt_id}: no cited source names {sorted(checkpoints)}"
        for row in rows:
            if "kv_precision" in row:
                stated += 1
                assert row["precision"] == "fp8" and row["kv_precision"] == "fp8", row["label"]
    assert stated == 16  # the 8 Llama 3.1 8B rows (session 22), the 8 Maverick H100/H200 rows


def test_the_unsettled_rows_keep_the_declared_default_and_say_why(shipped: KnowledgeBase) -> None:
    for receipt_id in UNSETTLED:
        record = shipped.get(receipt_id)
        assert record is not None
        rows = [dict(r) for r in record.data["results"]]
        assert rows and all("kv_precision" not in r for r in rows), receipt_id
        scenario, _, assumed = conditions(shipped, record, rows[0])
        assert scenario.kv_precision == "bf16"
        assert any("KV cache bf16 (not stated)" in a for a in assumed)
        changes = [str(entry["change"]) for entry in record.data["history"]]
        assert any("session 23" in c and "no row changed" in c for c in changes), receipt_id
    for receipt_id in UNSETTLED[:3]:  # the Qwen3 receipt's notes are another session's to edit
        notes = str(_record_data(shipped, receipt_id)["notes"])
        assert "KV cache:" in notes and "kv_precision" in notes
    record = shipped.get(B200_405B)
    assert record is not None
    rows = [dict(r) for r in record.data["results"]]
    assert rows and all("kv_precision" not in r for r in rows)
    scenario, _, assumed = conditions(shipped, record, rows[0])
    assert scenario.kv_precision == "bf16"
    assert any("KV cache bf16 (not stated)" in a for a in assumed)
    notes = str(record.data["notes"])
    assert "KV cache:" in notes and "kv_precision" in notes


def test_the_405b_config_is_quoted_and_matches_its_tree(shipped: KnowledgeBase) -> None:
    notes = str(_record_data(shipped, HF_405B)["notes"])
    span = re.search(r"`(\{\"producer\".*?\}\})`", notes, re.S)
    assert span is not None
    config = json.loads(span.group(1))
    assert config["quantization"] == {"quant_algo": "FP8", "kv_cache_quant_algo": None}
    assert config["producer"] == {"name": "modelopt", "version": "0.17.0"}
    assert '"178 Bytes"' in notes
    size = len(json.dumps(config, indent=4)) + 1  # a four-space indent and a final newline
    assert size == 178
    fp8 = {**config, "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}}
    assert len(json.dumps(fp8, indent=4)) + 1 == size + 1  # an FP8 cache would not be that size
    # why it settles nothing: an unread later commit, and a sibling re-export that carries FP8
    assert "`539ac9ac`" in notes and "sources/trtllm-issue-6294" in notes


def test_the_70b_recipe_sets_fp8_itself_and_names_no_checkpoint_format(
    shipped: KnowledgeBase,
) -> None:
    notes = str(_record_data(shipped, RECIPE_70B)["notes"])
    assert "`dtype: fp8`" in notes
    assert "auto (uses the data type specified in the model checkpoint)" in notes
    assert "https://huggingface.co/nvidia/Llama-3.3-70B-Instruct-FP8" in notes
