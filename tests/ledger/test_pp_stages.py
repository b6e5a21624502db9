"""Pipeline stages of unequal layers (end-to-end.json `pipeline_stage_split`, kb.ledger.pp_stages).

The split is held to the engines' code as the declaration quotes it (TensorRT-LLM's
`torch.tensor_split`, vLLM's `get_pp_indices`), for random L and pp; where pp divides L the
composition is the old one exactly (every engine, or none, gives the same derived state),
and the 405B PP8 placement is priced: worst-stage memory, one pass over all L layers, and
the slowest stage setting a micro-batch's turn on the RTX PRO 6000 receipt's rows.
"""

from __future__ import annotations

import json
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kb.ledger import pp_stages
from kb.ledger.endtoend import NOT_EVALUABLE, RowResult, evaluate_row, unpriced_reasons
from kb.ledger.scenario import Outcome, Scenario, outcome
from kb.model import KnowledgeBase
from kb.plan.enumerate import Space, enumerate_placements

DATA = Path(__file__).resolve().parents[2] / "kb" / "data" / "end-to-end.json"
RTX = "receipts/trtllm-v1.0-rtx-pro-6000-pipeline-parallel-throughput"
CARD = "hardware/nvidia-rtx-pro-6000-blackwell-server-edition"
TRTLLM, VLLM = "engines/tensorrt-llm", "engines/vllm"
LLAMA_405B_ROWS = range(40, 46)


def _tensor_split(layers: int, pp: int) -> tuple[int, ...]:
    """torch.tensor_split's section sizes (TensorRT-LLM's Mapping.pp_layers), as documented:
    the first L mod pp sections get L // pp + 1 elements."""
    return tuple(layers // pp + (1 if i < layers % pp else 0) for i in range(pp))


def _get_pp_indices(layers: int, pp: int) -> tuple[int, ...]:
    """vLLM's get_pp_indices partitions, its loop as quoted in the declaration."""
    partitions = [layers // pp for _ in range(pp)]
    if remaining := layers % pp:
        for i in range(2, remaining + 2):
            partitions[-i] += 1
    return tuple(partitions)


def test_the_rule_is_declared_from_the_engines_code() -> None:
    entry = json.loads(DATA.read_text())[pp_stages.SECTION]
    assert "before any row was priced" in entry["reason"]
    assert entry["band"].startswith("the declared band")
    sources = " ".join(entry["sources"])
    for cited in ("tensorrt_llm/mapping.py", "vllm/distributed/utils.py", "get_num_layers"):
        assert cited in sources
    assert pp_stages.engines() == {TRTLLM: "first", VLLM: "before_last"}
    for index in LLAMA_405B_ROWS:  # the rows it covers are no longer declared unpriced
        assert f"{RTX}#results.{index}" not in unpriced_reasons()


@settings(deadline=None, max_examples=300)
@given(st.integers(1, 400), st.integers(1, 64))
def test_the_split_is_each_engines_own(layers: int, pp: int) -> None:
    if pp > layers:
        return
    trt, vllm = pp_stages.split(layers, pp, TRTLLM), pp_stages.split(layers, pp, VLLM)
    assert trt == _tensor_split(layers, pp)
    assert vllm == _get_pp_indices(layers, pp)
    for counts in (trt, vllm):
        assert counts is not None and sum(counts) == layers and len(counts) == pp
        assert max(counts) - min(counts) <= 1 and max(counts) == -(-layers // pp)
    undeclared = pp_stages.split(layers, pp, "engines/nemo"), pp_stages.split(layers, pp, None)
    if layers % pp:
        assert undeclared == (None, None)  # Megatron asserts divisibility; no engine: no guess
        assert pp_stages.share(layers, trt) > Fraction(1, pp)
    else:  # every engine, and none, splits L/pp a stage
        assert undeclared == (trt, trt) == ((layers // pp,) * pp, (layers // pp,) * pp)
        assert pp_stages.share(layers, trt) == Fraction(1, pp)


@settings(deadline=None, max_examples=100)
@given(
    st.fractions(Fraction(1, 10**6), Fraction(10)),
    st.fractions(Fraction(0), Fraction(1)),
    st.integers(1, 200),
    st.integers(1, 16),
)
def test_equal_stages_leave_the_turn_the_pass(
    per_layer: Fraction, share_of_send: Fraction, per_stage: int, pp: int
) -> None:
    layers = per_stage * pp
    compute = per_layer * layers
    sends = compute * share_of_send * (pp - 1)
    counts = (per_stage,) * pp
    assert pp_stages.stage_bound(compute + sends, sends, layers, counts) == compute + sends


def test_the_slowest_stage_sets_the_turn_when_sends_are_small() -> None:
    counts = pp_stages.split(126, 8, TRTLLM)
    assert counts == (16,) * 6 + (15,) * 2
    pass_time = Fraction(126) + Fraction(7, 100)  # a unit per layer, small sends
    turn = pp_stages.stage_bound(pass_time, Fraction(7, 100), 126, counts)
    assert turn == 8 * 16  # pp x the slowest stage's 16 layers
    assert pp_stages.stage_bound(Fraction(140), Fraction(14), 126, counts) == 140  # sends cover


def _scenario(**changes: object) -> Scenario:
    base = Scenario(
        model="models/llama-3.1-405b",
        hardware="hardware/nvidia-b200",
        count=8,
        pp=8,
        batch=64,
        context=256,
        engine=TRTLLM,
        weight_precision="fp4",
        cuda_graphs=True,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def _useful(found: Outcome) -> Fraction:
    return Fraction(next(r.value for r in found.rows if r.name == "useful"))


def test_a_405b_pp8_placement_is_priced_on_its_largest_stage(shipped: KnowledgeBase) -> None:
    from kb.ledger.capacity import capacity

    pp8, pp2 = outcome(_scenario(), shipped), outcome(_scenario(count=2, pp=2), shipped)
    assert pp8.fits and pp2.fits and not pp8.problems and pp8.tpot is not None
    eight, two = capacity(pp8.scenario, shipped), capacity(pp2.scenario, shipped)
    # the device of a 16-layer stage, against 63 layers a stage at pp = 2
    assert eight.weights == two.weights * Fraction(16, 63)
    assert eight.kv_per_token == two.kv_per_token * Fraction(16, 63)
    # one micro-batch passes all 126 layers, however they are split: the same reads
    assert _useful(pp8) == _useful(pp2)
    assert pp8.tpot > pp2.tpot  # and 7 stage sends, not 1
    # where pp divides L the engine's split does not enter: the old state exactly
    plain = capacity(replace(pp2.scenario, engine=None), shipped)
    assert (plain.weights, plain.kv_per_token) == (two.weights, two.kv_per_token)


@pytest.mark.parametrize(
    ("engine", "words"), [(None, "no engine is named"), ("engines/nemo", "not declared")]
)
def test_an_undeclared_split_is_a_gap_naming_the_declaration(
    shipped: KnowledgeBase, engine: str | None, words: str
) -> None:
    found = outcome(_scenario(engine=engine), shipped)
    assert found.tpot is None and not found.fits
    assert any(words in p and pp_stages.SECTION in p for p in found.problems)


def test_kb_plan_admits_405b_pp8_with_an_engine_that_splits_unevenly() -> None:
    admitted, excluded = enumerate_placements(Space(8, 1, 126, 16, engine=TRTLLM))
    assert {"pp8", "tp2-pp4", "pp4"} <= {p.name for p in admitted}
    _, refused = enumerate_placements(Space(8, 1, 126, 16))
    reasons = {e.placement.name: e.reason for e in refused}
    assert "no engine is named" in reasons["pp8"] and pp_stages.SECTION in reasons["pp8"]
    assert not any(e.placement.name == "pp8" for e in excluded)
    # experts split over unequal stages: the composition's gap, said by the enumeration
    _, moe = enumerate_placements(Space(8, 1, 61, 8, experts=256, engine=VLLM))
    said = {e.placement.name: e.reason for e in moe}
    assert "not composed" in said["tp2-pp2-ep2"] and pp_stages.SECTION in said["tp2-pp2-ep2"]


def _row(shipped: KnowledgeBase, index: int) -> RowResult:
    record = shipped.get(RTX)
    assert record is not None
    return evaluate_row(shipped, record, index, record.data["results"][index], False)


def test_the_405b_pp8_rows_are_priced_with_the_slowest_stage(shipped: KnowledgeBase) -> None:
    for index in (40, 44):  # 128/128 and 2048/128 (one within the band, one a miss)
        result = _row(shipped, index)
        assert result.state != NOT_EVALUABLE and result.predicted is not None
        notes = [a for a in result.assumed if pp_stages.SECTION in a]
        assert notes and "16 x 6 and 15 x 2 layers" in notes[0]


def test_equal_stages_keep_the_old_turn(shipped: KnowledgeBase) -> None:
    """A PP8 row of 80 layers (Llama 3.3 70B): no stage note, the turn the pass."""
    result = _row(shipped, 3)
    assert result.predicted is not None
    assert not any(pp_stages.SECTION in a for a in result.assumed)
