"""An MoE prefill reads the experts every prompt token routes to, not one step's batch.

The router picks experts per token, so a prefill of S tokens at batch B reads the
shared weights and the fraction f = 1 - (1 - k/E)^(B*S) of the routed experts
(flops/moe-decode-expert-read at B*S tokens), over the tp ranks. Hand-worked for
Mixtral 8x7B (k = 2, E = 8, L = 32, d = 4096, d_ff = 14336): routed weights
L*E*3*d*d_ff = 45,097,156,608 parameters; one token reads (1 - (3/4)^1) = 1/4 of them,
a 128-token prompt 1 - (3/4)^128, i.e. all but ~1e-16 of them.
"""

from __future__ import annotations

from fractions import Fraction

from kb.ledger.endtoend import conditions
from kb.model import KnowledgeBase

TRTLLM = "receipts/trtllm-v0.9-first-token-latency-batch1"
MIXTRAL_H100_128 = 6  # "Mixtral 8x7B, H100, TP2, ISL 128"
ROUTED = 32 * 8 * 3 * 4096 * 14336


def _derived(kb: KnowledgeBase, **patch: object) -> object:
    from dataclasses import replace

    from kb.kinds.placement import placement
    from kb.ledger.inputs import resolve_view
    from kb.ledger.scenario import scenario_record

    record = kb.get(TRTLLM)
    assert record is not None
    row = record.data["results"][MIXTRAL_H100_128]
    assert row["label"] == "Mixtral 8x7B, H100, TP2, ISL 128"
    scenario, _, _ = conditions(kb, record, row)
    scenario = replace(scenario, **patch)  # type: ignore[arg-type]
    synthetic = scenario_record(scenario, kb)
    spec = resolve_view(placement(synthetic), synthetic, kb)
    assert not spec.gaps  # type: ignore[union-attr]
    return spec.options[0].derived  # type: ignore[union-attr]


def test_the_prompt_reads_every_expert_its_tokens_touch(shipped: KnowledgeBase) -> None:
    derived = _derived(shipped)
    model = shipped.get("models/mixtral-8x7b")
    assert model is not None
    total = Fraction(str(model.data["derived"]["params_total"]["value"]))
    decode = derived.weight_read.value  # type: ignore[attr-defined]
    prefill = derived.prefill_weight_read.value  # type: ignore[attr-defined]
    # one token: shared + 1/4 of the routed; 128 tokens: shared + (1 - (3/4)^128) of them
    expected = (total - ROUTED * Fraction(3, 4) ** 128) / (total - ROUTED * Fraction(3, 4))
    assert abs(prefill / decode - expected) < Fraction(1, 10**9)
    assert prefill / decode > 3  # ~3.5: the decode-step read alone was 3.5x too small


def test_a_prompt_of_s_tokens_reads_what_s_one_token_sequences_read(
    shipped: KnowledgeBase,
) -> None:
    prompt = _derived(shipped)
    wide = _derived(shipped, batch=128)  # 128 sequences, one decode token each
    assert prompt.prefill_weight_read.value == wide.weight_read.value  # type: ignore[attr-defined]


def test_a_dense_model_has_no_separate_prefill_read(shipped: KnowledgeBase) -> None:
    dense = _derived(shipped, model="models/llama-2-7b")
    assert dense.prefill_weight_read is None  # type: ignore[attr-defined]
