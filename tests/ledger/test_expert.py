"""kb.ledger.expert: expert parallelism priced in the composed ledger, from the flop classes.

The weights per device are the non-expert weights over tp*pp and the routed experts
over ep*pp, computed here from the model record's geometry; the dispatch and the
combine of every MoE layer are flops/moe-ep-nvlink-rdma-decode's time, which the test
evaluates again through `kb calc`'s evaluator at the same inputs; a group that spans
nodes is priced with the network path, and one that spans nodes with no link between
them is a problem in words, never a guessed time.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from kb.equations.evaluate import evaluate
from kb.kinds.placement import Degrees
from kb.ledger.expert import COMBINE, DISPATCH, EP_CLASS, PREFILL_DISPATCH, group_layout
from kb.ledger.scenario import Scenario, outcome
from kb.model import KnowledgeBase

MIXTRAL = "models/mixtral-8x7b"
DEEPSEEK = "models/deepseek-v3"
H100 = "hardware/nvidia-h100-sxm"
H200 = "hardware/nvidia-h200-sxm"
IB = "interconnects/infiniband-ndr"


@pytest.mark.parametrize(
    ("degrees", "per_node", "expected"),
    [
        (Degrees(tp=1, pp=1, dp=8, ep=8), 8, (8, 1)),
        (Degrees(tp=1, pp=1, dp=16, ep=16), 8, (8, 2)),
        (Degrees(tp=4, pp=1, dp=4, ep=16), 8, (8, 2)),
        (Degrees(tp=4, pp=2, dp=2, ep=8), 8, (4, 2)),  # a stage's ranks: 0-3 and 8-11
        (Degrees(tp=8, pp=2, dp=1, ep=8), 8, (8, 1)),  # stage 0 is node 0
        (Degrees(tp=2, pp=1, dp=4, ep=2), 8, (2, 1)),
    ],
)
def test_the_group_layout_follows_the_rank_order(
    degrees: Degrees, per_node: int, expected: tuple[int, int]
) -> None:
    assert group_layout(degrees, per_node) == expected


def test_dp8_ep8_holds_an_eighth_of_the_experts_and_is_priced(shipped: KnowledgeBase) -> None:
    s = Scenario(MIXTRAL, H100, 8, dp=8, ep=8, batch=64, input_tokens=2048, output_tokens=256)
    result = outcome(s, shipped)
    assert result.fits and result.tpot is not None and result.ttft is not None, result.problems
    assert not result.problems
    model = shipped.get(MIXTRAL)
    assert model is not None
    g = model.data["geometry"]
    experts = 3 * g["layers"] * g["experts"] * g["d_model"] * g["d_ff"]
    rest = model.data["derived"]["params_total"]["value"] - experts
    weights = Fraction(rest * 2) + Fraction(experts * 2, 8)  # bf16
    without = outcome(Scenario(MIXTRAL, H100, 8, dp=8, batch=64, context=2304), shipped)
    assert not without.fits  # every device holding every expert does not fit an H100
    kv = result.need_per_device - weights
    assert 0 < kv < weights / 4  # the rest of the state is the replica's KV cache
    assert result.exposed_share is not None and result.exposed_share > 0


def test_ep_below_tp_splits_each_expert_inside_the_tp_group(shipped: KnowledgeBase) -> None:
    """TensorRT-LLM's TP8 EP4: the experts over all eight ranks, as TP8 alone holds them."""
    tp8 = outcome(Scenario(MIXTRAL, H100, 8, tp=8, batch=8, context=2304), shipped)
    tp8_ep4 = outcome(Scenario(MIXTRAL, H100, 8, tp=8, ep=4, batch=8, context=2304), shipped)
    assert tp8.fits and tp8_ep4.fits
    assert tp8_ep4.need_per_device == tp8.need_per_device


def test_the_dispatch_is_the_class_time_at_the_same_inputs(shipped: KnowledgeBase) -> None:
    from kb.kinds.placement import placement
    from kb.ledger.analysis import analyze_spec
    from kb.ledger.inputs import resolve_view
    from kb.ledger.scenario import scenario_record

    s = Scenario(MIXTRAL, H100, 8, dp=8, ep=8, batch=64, context=2304)
    record = scenario_record(s, shipped)
    spec = resolve_view(placement(record), record, shipped)
    assert not getattr(spec, "gaps", ())
    option = spec.reference  # type: ignore[union-attr]
    by_name = {t.name: t for t in option.transfers}
    assert set(by_name) == {DISPATCH, COMBINE}
    dispatch = by_name[DISPATCH]
    assert dispatch.count == 32 and dispatch.ranks == 8  # every MoE layer; all eight ranks
    # one dispatch as the ledger prices it: V bytes at the bandwidth V/t gives
    one = dispatch.message_size.value / dispatch.bandwidth.value
    tokens = Fraction(64, 8)
    m_d = 4096 * (1 + Fraction(4, 128)) + 16  # DeepEP's fp8 copy (claim copy-bytes-fp8)
    volume = tokens * 2 * m_d  # T*k*m_d
    assert dispatch.message_size.value == volume and volume.denominator == 1
    nvlink = 450 * 10**9  # interconnects/nvlink-4#bandwidth.per_device
    again = evaluate(
        shipped,
        shipped.get(EP_CLASS),  # type: ignore[arg-type]
        "nvlink_bound",
        {
            "N": {"value": 8, "unit": "1"},
            "G": {"value": 8, "unit": "1"},
            "T": {"value": 8, "unit": "1"},
            "k": {"value": 2, "unit": "1"},
            "V": {"value": volume.numerator, "unit": "B"},
            "BW_nvl": {"value": nvlink, "unit": "B/s"},
        },
    )
    assert one == again.value * Fraction(1, 10**6)  # the class states t_ll in us
    ledger = analyze_spec(spec).sides[0].ledger  # type: ignore[arg-type]
    assert ledger is not None
    cost = next(c for c in ledger.transfers if c.name == DISPATCH)
    assert cost.raw == dispatch.count * one and cost.exposed == cost.raw  # nothing hides it


def test_a_group_across_nodes_takes_the_network_path(shipped: KnowledgeBase) -> None:
    s = Scenario(
        DEEPSEEK,
        H200,
        16,
        nodes=2,
        dp=16,
        ep=16,
        batch=64,
        input_tokens=2048,
        output_tokens=256,
        weight_precision="fp8",
        kv_precision="fp8",
        inter_link=IB,
    )
    result = outcome(s, shipped)
    assert result.fits and result.tpot is not None and result.ttft is not None, result.problems
    one_node = outcome(
        Scenario(
            DEEPSEEK,
            H200,
            8,
            dp=8,
            ep=8,
            batch=32,
            input_tokens=2048,
            output_tokens=256,
            weight_precision="fp8",
            kv_precision="fp8",
        ),
        shipped,
    )
    assert one_node.fits and one_node.tpot is not None

    def exposed(o: object) -> Fraction:
        return Fraction(next(r for r in o.rows if r.name == "exposed").value)  # type: ignore[attr-defined]

    # the same tokens per rank (4): the copies to the other node cross one NDR port, not NVLink
    assert exposed(result) > exposed(one_node)


def test_a_group_across_nodes_with_no_link_is_a_problem(shipped: KnowledgeBase) -> None:
    s = Scenario(
        DEEPSEEK, H200, 16, nodes=2, dp=16, ep=16, batch=64, context=2304, weight_precision="fp8"
    )
    result = outcome(s, shipped)
    assert result.tpot is None
    assert any("ep_collective.inter_link" in p for p in result.problems), result.problems


def test_the_prefill_pass_dispatches_the_prompt(shipped: KnowledgeBase) -> None:
    from kb.kinds.placement import placement
    from kb.ledger.inputs import resolve_view
    from kb.ledger.scenario import scenario_record

    s = Scenario(MIXTRAL, H100, 8, dp=8, ep=8, batch=64, input_tokens=2048, output_tokens=256)
    record = scenario_record(s, shipped)
    spec = resolve_view(placement(record), record, shipped)
    option = spec.reference  # type: ignore[union-attr]
    prefill = {t.name: t for t in option.prefill}
    decode = {t.name: t for t in option.transfers}
    assert (
        prefill[PREFILL_DISPATCH].message_size.value == 2048 * decode[DISPATCH].message_size.value
    )


def test_a_dense_model_has_no_expert_parallelism(shipped: KnowledgeBase) -> None:
    from kb.ledger.scenario import ScenarioError

    with pytest.raises(ScenarioError, match="dense"):
        outcome(Scenario("models/llama-3.1-70b", H100, 8, dp=8, ep=8, batch=8, context=8), shipped)


def test_a_remembered_evaluation_gives_the_fresh_outcome(shipped: KnowledgeBase) -> None:
    from kb.ledger.expert import EVALUATED

    scenarios = [
        Scenario(MIXTRAL, H100, 8, dp=8, ep=8, batch=64, input_tokens=2048, output_tokens=256),
        Scenario(MIXTRAL, H100, 8, dp=4, tp=2, ep=8, batch=64, context=2304),
        Scenario(MIXTRAL, H100, 8, dp=8, ep=4, batch=64, context=2304),
    ]
    fresh = []
    for s in scenarios:
        shipped.run.drop(EVALUATED)  # nothing remembered: every evaluation done again
        fresh.append(outcome(s, shipped))
    for s in scenarios:  # remember every evaluation of all three
        outcome(s, shipped)
    memo = shipped.run.kept(EVALUATED)
    assert memo is not None
    remembered = len(memo)
    warm = [outcome(s, shipped) for s in scenarios]
    assert len(memo) == remembered  # nothing evaluated anew: every value was remembered
    assert warm == fresh
