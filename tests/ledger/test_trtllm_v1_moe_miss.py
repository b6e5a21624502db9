"""TensorRT-LLM v1.0's two large MoE tables: the misses, before and after session 23.

Session 21 (docs/ledger.md, "Checked in session 21"): priced tensor-parallel over tp 8, kb was
too fast for Llama 4 Maverick on H100 and H200 and too slow for Qwen3-235B-A22B and Maverick on
B200, split by the KV format kb priced; no sourced mechanism was found then. Session 23 prices
the layout the runs used (attention data-parallel, experts tensor-parallel: `moe_tp`,
kb/data/end-to-end.json `moe_tensor_parallel`, declared before the rows were priced). Under it
kb is too fast for every contradicted row of both tables: the misses are shown as misses.
These tests hold that, and fail if the composition or the receipts change:

- the rows state the layout the sources give (tp 1, dp 8, moe_tp 8; no ep), and the notes
  keep the session-21 reading of the page's options file;
- every contradicted row is too fast, on every accelerator (22 of the 24 rows; the Maverick
  B200 rows at 128/2048 and 2048/2048 are within the band);
- the two model records' geometry is the configs' (Qwen3's checked again against a copy of the
  Hugging Face config in the code index), so the miss is not a mis-encoded model.
"""

from __future__ import annotations

from kb.ledger.endtoend import RowResult, evaluate_row
from kb.model import KnowledgeBase

MAVERICK = "receipts/trtllm-v1.0-llama-4-maverick-throughput-h100-h200-b200"
QWEN3 = "receipts/trtllm-v1.0-qwen3-235b-a22b-throughput-h100-h200-b200"


def _results(kb: KnowledgeBase, receipt: str) -> list[tuple[dict[str, object], RowResult]]:
    record = kb.get(receipt)
    assert record is not None
    rows = [dict(r) for r in record.data["results"]]
    return [(row, evaluate_row(kb, record, i, row, False)) for i, row in enumerate(rows)]


def test_the_rows_state_the_run_layout_and_keep_the_reading(shipped: KnowledgeBase) -> None:
    for receipt in (MAVERICK, QWEN3):
        record = shipped.get(receipt)
        assert record is not None
        rows = record.data["results"]
        assert all((r["tp"], r["dp"], r["moe_tp"]) == (1, 8, 8) and "ep" not in r for r in rows)
        notes = " ".join(str(record.data["notes"]).split())
        assert "nests `enable_attention_dp: true` under `cuda_graph_config`" in notes
        assert "StrictBaseModel" in notes and "no ep is written" in notes


def test_every_contradicted_row_is_too_fast(shipped: KnowledgeBase) -> None:
    too_fast, within = 0, []
    for receipt in (MAVERICK, QWEN3):
        for row, result in _results(shipped, receipt):
            assert result.error is not None, (receipt, row["label"], result.reason)
            if result.state == "contradicted":
                assert result.error > 0.25, (receipt, row["label"], result.error)
                too_fast += 1
            else:
                assert result.state == "validated" and abs(result.error) <= 0.25
                within.append((receipt, row["label"]))
    assert too_fast == 22
    assert within == [(MAVERICK, "B200, TP8, 128/2048"), (MAVERICK, "B200, TP8, 2048/2048")]


def test_the_h100_rows_are_too_fast_for_both_models(shipped: KnowledgeBase) -> None:
    shapes = {(128, 2048), (1000, 1000), (2048, 2048)}

    def h100(receipt: str) -> dict[tuple[object, object], float]:
        return {
            (row["input_tokens"], row["output_tokens"]): float(result.error or 0)
            for row, result in _results(shipped, receipt)
            if row["hardware"] == "hardware/nvidia-h100-sxm"
        }

    maverick, qwen3 = h100(MAVERICK), h100(QWEN3)
    assert shapes <= set(maverick) and shapes <= set(qwen3)
    for shape in shapes:
        assert maverick[shape] > 0.9 and qwen3[shape] > 0.25, shape


def test_the_model_records_are_the_configs(shipped: KnowledgeBase) -> None:
    qwen3 = shipped.get("models/qwen3-235b-a22b")
    maverick = shipped.get("models/llama-4-maverick")
    assert qwen3 is not None and maverick is not None
    q, m = qwen3.data["geometry"], maverick.data["geometry"]
    # Qwen/Qwen3-235B-A22B config.json: num_hidden_layers, num_attention_heads,
    # num_key_value_heads, hidden_size, moe_intermediate_size, vocab_size, num_experts,
    # num_experts_per_tok
    assert (q["layers"], q["heads"], q["kv_heads"], q["d_model"]) == (94, 64, 4, 4096)
    assert (q["d_ff_expert"], q["vocab"], q["experts"], q["experts_active"]) == (
        1536,
        151936,
        128,
        8,
    )
    # Llama 4 Maverick text_config: 48 layers, MoE every second layer, 128 routed experts,
    # top-1, one shared expert, expert width 8192, dense width 16384
    assert (m["layers"], m["moe_layer_step"], m["experts"], m["experts_active"]) == (48, 2, 128, 1)
    assert (m["shared_experts"], m["d_ff_expert"], m["d_ff"], m["kv_heads"]) == (1, 8192, 16384, 8)
