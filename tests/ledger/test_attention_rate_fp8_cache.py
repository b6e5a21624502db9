"""An engine version without FP8 context attention prices its prompt's attention at 16 bits.

kb/data/end-to-end.json `attention_rate.sixteen_bit_context_versions` lists the TensorRT-LLM
versions before its FP8 FMHA (release notes: first under 0.9.0, experimental). A row of such
a version with an FP8 KV cache gets `attention_sixteen_bit` (kb.ledger.engine_versions, the
engine-version reader the other version rules use), and T_attn takes the bf16 counterpart of
the option's rate, as for a 16-bit cache. A version not listed (vLLM's ROCm 0.6.6) keeps the
weights' rate and says the rule does not cover it. Worked by hand from the model's geometry.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from kb.ledger.endtoend import conditions
from kb.ledger.engine_versions import runs_sixteen_bit_context, sixteen_bit_context_versions
from kb.model import KnowledgeBase, Record
from tests.ledger.test_attention_rate import H100, MODEL, _attention, _flop, _mamf_row, _tflops

V08 = "receipts/trtllm-v0.8-h100-peak-throughput"
ROCM = "receipts/rocm-vllm-0.6.6-llama-3.1-70b-mi300x-tp8-latency-by-batch"


def _row(kb: KnowledgeBase, receipt: str, index: int) -> tuple[Record, dict[str, Any]]:
    record = kb.get(receipt)
    assert record is not None
    return record, record.data["results"][index]


def test_the_declaration_lists_the_versions_before_fp8_fmha() -> None:
    versions = sixteen_bit_context_versions()["engines/tensorrt-llm"]
    assert {"0.5", "0.6.1", "v0.8.0", "v0.9.0"} <= set(versions)
    assert "1.0 release line (exact build not stated)" not in versions  # not settled
    assert "engines/vllm" not in sixteen_bit_context_versions()  # ROCm builds: not settled


def test_a_v0_8_fp8_cache_row_prices_its_attention_at_the_bf16_rate(
    shipped: KnowledgeBase,
) -> None:
    """LLaMA 7B, batch 64, TP1, 2048/128 on H100: 64 x 1.10e12 FLOP at 794.5, not 1402.6."""
    record, row = _row(shipped, V08, 2)
    assert row["input_tokens"] == 2048 and row["batch"] == 64 and row["kv_precision"] == "fp8"
    assert runs_sixteen_bit_context(record)
    scenario, _, assumed = conditions(shipped, record, row)
    assert scenario.kv_precision == "fp8" and scenario.attention_sixteen_bit
    assert any("16-bit rate although the KV cache is 8-bit" in a for a in assumed)
    part = _attention(shipped, scenario)
    flop = 64 * _flop(shipped, MODEL, 2048, 1)
    assert flop == 64 * 2 * 32 * 32 * 128 * 2048**2
    bf16 = _mamf_row(shipped, H100, "bf16")
    assert part.value == flop / _tflops(shipped, bf16)
    assert Fraction(88, 1000) < part.value < Fraction(89, 1000)  # s, against 50.2 ms at FP8
    assert bf16 in part.formula and "sixteen_bit_context_versions" in part.formula


def test_an_unlisted_versions_fp8_cache_row_is_not_covered(shipped: KnowledgeBase) -> None:
    record, row = _row(shipped, ROCM, 0)
    assert row["kv_precision"] == "fp8"
    assert not runs_sixteen_bit_context(record)
    scenario, _, assumed = conditions(shipped, record, row)
    assert not scenario.attention_sixteen_bit
    assert not any("16-bit rate although" in a for a in assumed)
    assert "does not cover" in _attention(shipped, scenario).formula
