"""Experts tensor-parallel under attention data parallelism (`moe_tp`, issue 35, session 23).

TensorRT-LLM with `enable_attention_dp` and no `--ep` runs attention, the embedding, the dense
layers and the shared experts whole on every rank for its own sequences, and splits every
routed expert over the ranks; each MoE layer all-gathers the ranks' tokens and
reduce-scatters the outputs (sources/github-trtllm-attention-dp-moe-tp; declared in
kb/data/end-to-end.json `moe_tensor_parallel`). kb.ledger.expert composes it from the flop
classes. These tests hold one option's ledger equal to a hand composition from the model
record (so the test fails if either changes alone), the feasibility per device, the refusal
of a bad degree in kb's words, and a placement that states the degree.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from kb.kinds.placement import placement
from kb.ledger.expert import GATHER, PREFILL_GATHER, PREFILL_SCATTER, SCATTER
from kb.ledger.inputs import OptionSpec, resolve_view
from kb.ledger.scenario import Scenario, ScenarioError, outcome, scenario_record
from kb.model import KnowledgeBase

QWEN3 = "models/qwen3-235b-a22b"
MIXTRAL = "models/mixtral-8x7b"
LLAMA_70B = "models/llama-3.1-70b"
H200 = "hardware/nvidia-h200-sxm"
H100 = "hardware/nvidia-h100-sxm"


def _option(kb: KnowledgeBase, s: Scenario) -> OptionSpec:
    record = scenario_record(s, kb)
    spec = resolve_view(placement(record), record, kb)
    assert not getattr(spec, "gaps", ()), getattr(spec, "gaps", ())
    option = spec.reference  # type: ignore[union-attr]
    assert isinstance(option, OptionSpec) and option.derived is not None
    return option


def _geometry(kb: KnowledgeBase, model: str) -> tuple[dict[str, Any], int]:
    record = kb.get(model)
    assert record is not None
    return record.data["geometry"], int(record.data["derived"]["params_total"]["value"])


def test_the_option_is_the_hand_composition_of_the_flop_classes(shipped: KnowledgeBase) -> None:
    """Qwen3-235B-A22B FP8 on 8 x H200, tp 1, dp 8, moe_tp 8, batch 512, a 1000-token prompt."""
    s = Scenario(
        QWEN3, H200, 8, dp=8, moe_tp=8, batch=512, input_tokens=1000, output_tokens=1000,
        weight_precision="fp8",
    )  # fmt: skip
    option = _option(shipped, s)
    derived = option.derived
    assert derived is not None
    g, total = _geometry(shipped, QWEN3)
    d, k, experts = g["d_model"], g["experts_active"], g["experts"]
    p_exp = 3 * g["layers"] * experts * d * g["d_ff_expert"]  # every layer is MoE in Qwen3
    p_rest = total - p_exp
    # the non-expert weights whole on every GPU, each routed expert's eighth (FP8: 1 B)
    assert derived.weights.value == p_rest + Fraction(p_exp, 8)
    # the read: the group's 512 sequences touch f of the experts, each GPU reads its slice
    f = 1 - (1 - Fraction(k, experts)) ** 512
    bandwidth = Fraction(4150 * 10**9)  # nvidia-h200-sxm#memory.bandwidth_achieved, 4.15 TB/s
    assert derived.weight_read.value == (p_rest + f * Fraction(p_exp, 8)) / bandwidth
    # each rank's KV cache: every KV head of its own sequences (tp 1), 16-bit
    assert derived.kv_per_token.value == 2 * g["layers"] * g["kv_heads"] * g["head_dim"] * 2
    assert derived.all_reduces_per_layer == 0  # no all-reduce: attention is not split
    by_name = {t.name: t for t in option.transfers}
    assert set(by_name) == {GATHER, SCATTER}
    gather, scatter = by_name[GATHER], by_name[SCATTER]
    assert (gather.pattern, gather.ranks, gather.count) == ("all-gather", 8, g["layers"])
    assert (scatter.pattern, scatter.ranks, scatter.count) == ("reduce-scatter", 8, g["layers"])
    # per sequence of the batch: the group's tokens (moe_tp/dp = 1) in FP8 with k ids and
    # weights, gathered; their 16-bit outputs, scattered
    assert gather.message_size.value == d * 1 + 8 * k and gather.scales_with_batch
    assert scatter.message_size.value == d * 2 and scatter.scales_with_batch
    prefill = {t.name: t for t in option.prefill}
    assert prefill[PREFILL_GATHER].message_size.value == 1000 * (d + 8 * k)
    assert prefill[PREFILL_SCATTER].message_size.value == 1000 * d * 2


def test_the_degree_changes_the_weights_and_collectives_not_the_work(
    shipped: KnowledgeBase,
) -> None:
    """Against TP8 on the same GPUs: more weights per GPU, no all-reduce, the same matmuls."""
    common = dict(batch=512, context=2000, weight_precision="fp8")
    adp = _option(shipped, Scenario(QWEN3, H200, 8, dp=8, moe_tp=8, **common))  # type: ignore[arg-type]
    tp8 = _option(shipped, Scenario(QWEN3, H200, 8, tp=8, **common))  # type: ignore[arg-type]
    assert adp.derived is not None and tp8.derived is not None
    assert adp.derived.weights.value > tp8.derived.weights.value
    assert {t.pattern for t in tp8.transfers} == {"all-reduce"}
    assert "all-reduce" not in {t.pattern for t in adp.transfers}
    assert adp.derived.math is not None and tp8.derived.math is not None


def test_feasibility_counts_the_replicated_weights(shipped: KnowledgeBase) -> None:
    """Mixtral 8x7B bf16: whole on every H100 it does not fit; its experts split 8 ways, it does."""
    whole = outcome(Scenario(MIXTRAL, H100, 8, dp=8, batch=64, context=2304), shipped)
    split = outcome(Scenario(MIXTRAL, H100, 8, dp=8, moe_tp=8, batch=64, context=2304), shipped)
    assert not whole.fits and split.fits, split.problems
    g, total = _geometry(shipped, MIXTRAL)
    p_exp = 3 * g["layers"] * g["experts"] * g["d_model"] * g["d_ff"]
    weights = 2 * (total - p_exp) + Fraction(2 * p_exp, 8)
    kv = 2 * g["layers"] * g["kv_heads"] * g["head_dim"] * 2 * 2304 * 8  # 8 sequences a GPU
    assert split.need_per_device == weights + kv


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        (dict(tp=8, dp=1), "it needs tp 1, no ep, and dp a multiple of it"),
        (dict(dp=8, ep=8), "it needs tp 1, no ep, and dp a multiple of it"),
        (dict(dp=8, moe_tp=3), "it needs tp 1, no ep, and dp a multiple of it"),
        (dict(dp=8, moe_tp=0), "moe_tp = 0: expected a whole number, at least 1"),
        (dict(dp=8, moe_tp=16, count=16, nodes=2), "spans nodes of 8 devices"),
    ],
)
def test_a_bad_degree_is_refused_in_words(
    shipped: KnowledgeBase, changes: dict[str, int], words: str
) -> None:
    fields: dict[str, Any] = dict(model=QWEN3, hardware=H200, count=8, moe_tp=8, batch=64)
    fields.update(changes)
    if fields["count"] == 16:
        fields["dp"] = 16
    with pytest.raises(ScenarioError, match=words.replace("(", r"\(")):
        outcome(Scenario(context=2048, weight_precision="fp8", **fields), shipped)


def test_a_dense_model_has_no_experts_to_split(shipped: KnowledgeBase) -> None:
    with pytest.raises(ScenarioError, match="is not a mixture-of-experts model"):
        outcome(Scenario(LLAMA_70B, H200, 8, dp=8, moe_tp=8, batch=64, context=2048), shipped)


def test_a_placement_states_the_degree_and_a_bad_one_is_a_finding(
    shipped: KnowledgeBase,
) -> None:
    """A placement option may state `degrees.moe_tp` (the scenario writes one); with tp 2 the
    option is a gap at /reference/degrees/moe_tp (rule LG001's input), not a traceback."""
    from kb.ledger.inputs import Unresolved
    from kb.model import Record

    s = Scenario(QWEN3, H200, 8, dp=8, moe_tp=8, batch=64, context=2048, weight_precision="fp8")
    record = scenario_record(s, shipped)
    assert record.data["reference"]["degrees"] == {"tp": 1, "pp": 1, "dp": 8, "moe_tp": 8}
    assert record.data["reference"]["moe_collective"] == {"link": "interconnects/nvlink-4"}
    bad = dict(record.data["reference"])
    bad["degrees"] = {"tp": 2, "pp": 1, "dp": 4, "moe_tp": 4}
    broken = Record(record.id, record.kind, record.path, {**record.data, "reference": bad})
    spec = resolve_view(placement(broken), broken, shipped)
    assert isinstance(spec, Unresolved)
    gaps = [(g.pointer, g.message) for g in spec.gaps]
    assert any(
        p.endswith("/reference/degrees/moe_tp") and "needs tp 1, no ep" in m for p, m in gaps
    ), gaps
