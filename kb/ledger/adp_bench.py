"""trtllm-bench's limits under attention DP (end-to-end.json `trtllm_bench_attention_dp`).

TensorRT-LLM 1.0's trtllm-bench sizes a run it is given no max_batch_size and no
max_num_tokens for by calc_engine_setting (tensorrt_llm/bench/build/tuning.py), passed the
run's `--tp` and `--pp` and nothing of attention DP: it estimates the requests the KV cache
holds as for a tensor-parallel layout of those GPUs. Each attention-DP rank's executor then
applies the resulting max_batch_size and max_num_tokens as its own limits. So a row that
states `dp` > 1 is stepped per replica at the budget of the TP layout's estimate, not of kb's
attention-DP batch: this module gives that estimate, kb's max-load batch of the same row
with its `tp * dp` GPUs tensor-parallel (kb.ledger.capacity, the one capacity mechanism).
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kb.ledger.scenario import Scenario
    from kb.model import KnowledgeBase


@lru_cache(maxsize=1)
def versions() -> dict[str, tuple[str, ...]]:
    """kb/data/end-to-end.json `trtllm_bench_attention_dp`: engine -> the versions it names."""
    from kb.resources import end_to_end, engine_versions

    return end_to_end("trtllm_bench_attention_dp", engine_versions)


def applies(engine: object, version: object, scenario: Scenario) -> bool:
    """True for a trtllm-bench row of a declared engine version run with attention DP."""
    return scenario.dp > 1 and str(version) in versions().get(str(engine), ())


def tp_layout(scenario: Scenario) -> Scenario:
    """The row as trtllm-bench's estimate sees it: its tp * dp GPUs tensor-parallel."""
    return replace(scenario, tp=scenario.tp * scenario.dp, dp=1, ep=1, moe_tp=1, batch=1)


def estimated_batch(
    kb: KnowledgeBase, scenario: Scenario, sequence: int, fraction: Fraction, cap: int
) -> int:
    """The requests trtllm-bench estimates the cache holds (kb's max-load batch, TP layout)."""
    from kb.ledger.capacity import capacity

    return capacity(tp_layout(scenario), kb).max_load_batch(sequence, fraction, cap)
