"""kb.ledger.scenario: one question priced by the same composed ledger as `kb ledger`.

A Scenario equal to an option of a shipped composed placement must give that option's
figures exactly (Fraction-equal), because it is priced by synthesizing the same
placement data, not by a second path. A malformed question raises ScenarioError in
kb's words, never anything else (the property test draws random questions).
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kb.cli import cli
from kb.ledger.scenario import Scenario, ScenarioError, evaluate, outcome, scenario_record
from kb.model import KnowledgeBase

ROOT = Path(__file__).resolve().parents[2] / "records"
TP4_TP8 = "placements/tp-llama-3.1-70b-h100-tp4-vs-tp8"
TWO_NODES = "placements/llama-3.1-70b-16x-h100-two-nodes"
GIB = 2**30
H100 = "hardware/nvidia-h100-sxm"
L70 = "models/llama-3.1-70b"
SGLANG_AR = "receipts/sglang-custom-all-reduce-h100-latency"
IB = "interconnects/infiniband-ndr"
TWO_NODE_CURVE = "receipts/jingchaozhang-nd-h100-v5-2node-torch-nccl-all-reduce"


def ledger_totals(placement: str, root: Path) -> dict[str, Fraction]:
    """T_total of each option as `kb ledger --format json` prints it (exact)."""
    result = CliRunner().invoke(cli, ["ledger", placement, "--format", "json", "--root", str(root)])
    assert result.exit_code == 0, result.output
    sides = json.loads(result.output)["ledgers"]
    return {s["option"]: Fraction(s["total"]["exact"]) for s in sides if s["computed"]}


def h100_70b(**kw: object) -> Scenario:
    """The envelope of the two composed 70B placements: batch 64 at a 2048-token context."""
    base: dict[str, object] = dict(
        model=L70,
        hardware=H100,
        count=8,
        tp=8,
        batch=64,
        context=2048,
        engine="engines/nemo",
        collective_algorithm="custom",
        cuda_graphs=False,
        collective_receipt=SGLANG_AR,
    )
    base.update(kw)
    return Scenario(**base)  # type: ignore[arg-type]


def test_tp8_scenario_is_the_placement_tpot_exactly(
    shipped: KnowledgeBase, shipped_tree: Path
) -> None:
    totals = ledger_totals(TP4_TP8, shipped_tree)
    (tp8,) = evaluate([h100_70b()], shipped)
    assert tp8.fits and tp8.problems == ()
    assert tp8.tpot == totals["tp8"]
    (tp4,) = evaluate([h100_70b(count=4, tp=4)], shipped)
    assert tp4.tpot == totals["tp4"]
    assert tp4.tpot is not None and tp8.tpot is not None and tp4.tpot > tp8.tpot
    # the rows are the ledger's, and they add up to the step
    assert sum((row.value for row in tp8.rows), Fraction(0)) == tp8.tpot
    assert tp8.tokens_per_s_system == Fraction(64) / tp8.tpot
    assert tp8.tokens_per_s_per_device == tp8.tokens_per_s_system / 8
    assert tp8.exposed_share is not None and 0 < tp8.exposed_share < 1


def test_three_two_node_mappings_price_as_the_placement(
    shipped: KnowledgeBase, shipped_tree: Path
) -> None:
    totals = ledger_totals(TWO_NODES, shipped_tree)
    two = dict(count=16, nodes=2, inter_link=IB)  # the link's own measured latency, as there
    pp2, tp16, dp2 = evaluate(
        [
            h100_70b(tp=8, pp=2, **two),
            h100_70b(tp=16, collective_algorithm=None, cuda_graphs=None, **two),
            h100_70b(tp=8, dp=2, **two),
        ],
        shipped,
    )
    for result in (pp2, tp16, dp2):
        assert result.fits and result.tpot is not None, result.problems
    assert pp2.tpot == totals["tp8-pp2"]
    assert tp16.tpot == totals["tp16"]
    assert dp2.tpot == totals["dp2-tp8"]
    # nothing unverified is left: the stage send is measured (the two-node send/recv
    # receipt), TP16's ring is the line rate with the link's measured latency (estimated)
    assert pp2.provenance == "estimated" and tp16.provenance == "estimated"
    assert dp2.provenance != "unverified"


def test_a_stated_inter_latency_is_the_scenarios_own_and_unverified(
    shipped: KnowledgeBase,
) -> None:
    # On H200 no curve prices a two-node all-reduce, so the line rate and the stated latency
    # do; on H100 the two-node curve (receipts/jingchaozhang-nd-h100-v5-2node-torch-nccl-
    # all-reduce) prices it and the stated latency is not used.
    stated = dict(
        tp=16,
        collective_algorithm=None,
        cuda_graphs=None,
        count=16,
        nodes=2,
        inter_link=IB,
        inter_latency="5 us",
    )
    (tp16,) = evaluate([h100_70b(**stated, hardware="hardware/nvidia-h200-sxm")], shipped)
    assert tp16.fits and tp16.provenance == "unverified"
    (measured,) = evaluate([h100_70b(**stated)], shipped)
    assert measured.fits and measured.provenance != "unverified"
    assert any(p.startswith("measured: " + TWO_NODE_CURVE) for p in measured.pricing)


def test_deepseek_v3_fp8_on_eight_l40s_does_not_fit(shipped: KnowledgeBase) -> None:
    question = Scenario(
        "models/deepseek-v3",
        "hardware/nvidia-l40s",
        8,
        tp=8,
        batch=1,
        context=4096,
        weight_precision="fp8",
    )
    (result,) = evaluate([question], shipped)
    assert not result.fits
    assert result.tpot is None and result.ttft is None and result.max_batch is None
    assert f"{float(result.need_per_device / GIB):.2f}" == "78.39"
    assert f"{float(result.have_per_device / GIB):.2f}" == "44.70"
    assert any(
        "does not fit: needs 78.39 GiB per device, has 44.70 GiB" in p for p in result.problems
    )
    # the same model on eight H200s fits
    (h200,) = evaluate(
        [
            Scenario(
                "models/deepseek-v3",
                "hardware/nvidia-h200-sxm",
                8,
                tp=8,
                context=4096,
                weight_precision="fp8",
            )
        ],
        shipped,
    )
    assert h200.fits and h200.max_batch is not None and h200.max_batch >= 1


def test_a_request_gives_ttft_and_latency(shipped: KnowledgeBase) -> None:
    (result,) = evaluate(
        [h100_70b(batch=1, context=None, input_tokens=128, output_tokens=20)], shipped
    )
    assert result.ttft is not None and result.tpot is not None and result.latency is not None
    assert result.latency == result.ttft + 19 * result.tpot
    assert result.tokens_per_s_system == Fraction(20) / result.latency


def test_the_synthetic_placement_is_never_a_file(shipped: KnowledgeBase, tmp_path: Path) -> None:
    record = scenario_record(h100_70b(), shipped)
    assert record.id.startswith("placements/scenario/")
    assert shipped.get(record.id) is None
    assert not (ROOT / record.path).exists()


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (dict(count=16), "tp*pp*dp = 8*1*1 = 8, but the scenario has 16 devices"),
        (dict(count=16, nodes=2, tp=16, collective_receipt=None), "name inter_link"),
        (dict(model="models/no-such-model"), "models/no-such-model: the record is not in the tree"),
        (dict(hardware=L70), "is a model record, not an accelerator"),
        (dict(batch=0), "batch = 0: expected a whole number, at least 1"),
        (dict(weight_precision="fp3"), "weight_precision = 'fp3'"),
        (dict(context=None), "no context"),
        (dict(batch=3, count=16, nodes=2, dp=2), "does not split evenly over dp = 2"),
        (dict(count=12, nodes=2, tp=4, dp=3, batch=66), "tp = 4 does not divide the 6 devices"),
        (
            dict(count=12, nodes=2, tp=2, pp=2, dp=3, batch=66),
            "tp*pp = 4 does not divide the 6 devices of a node",
        ),
        (dict(intra_latency="fast"), "expected a time such as '5 us'"),
        (dict(intra_latency="5 GB"), "a time is expected"),
    ],
)
def test_a_malformed_question_is_refused_in_words(
    shipped: KnowledgeBase, change: dict[str, object], words: str
) -> None:
    with pytest.raises(ScenarioError, match=None) as caught:
        outcome(h100_70b(**change), shipped)
    assert words in str(caught.value)


def test_expert_parallelism_is_priced_by_the_composed_ledger(shipped: KnowledgeBase) -> None:
    """EP's dispatch/combine are composed (kb.ledger.expert, tests/ledger/test_expert.py)."""
    (result,) = evaluate(
        [
            Scenario(
                "models/deepseek-v3",
                "hardware/nvidia-h200-sxm",
                8,
                tp=8,
                ep=8,
                context=4096,
                weight_precision="fp8",
            )
        ],
        shipped,
    )
    assert result.fits and result.tpot is not None, result.problems
    assert not result.problems


IDS = st.sampled_from(
    [
        L70,
        "models/deepseek-v3",
        "models/llama-2-7b",
        H100,
        "hardware/nvidia-l40s",
        "engines/vllm",
        "engines/nemo",
        IB,
        "interconnects/nvlink-4",
        SGLANG_AR,
        "models/nope",
        "",
        "x",
    ]
)
SMALL = st.integers(min_value=-1, max_value=20)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    model=IDS,
    hardware=IDS,
    count=SMALL,
    nodes=st.integers(min_value=0, max_value=4),
    tp=SMALL,
    pp=st.integers(min_value=0, max_value=4),
    ep=st.integers(min_value=0, max_value=4),
    dp=st.integers(min_value=0, max_value=4),
    batch=st.integers(min_value=-1, max_value=300),
    lengths=st.tuples(*(st.none() | st.integers(min_value=-1, max_value=9000) for _ in range(3))),
    engine=st.none() | IDS,
    precisions=st.tuples(
        *(st.sampled_from(["bf16", "fp8", "int4", "fp4", "q3"]) for _ in range(2))
    ),
    links=st.tuples(st.none() | IDS, st.none() | IDS),
    extra=st.tuples(
        st.none() | st.sampled_from(["custom", "nvls", "ring"]),
        st.none() | st.booleans(),
        st.none() | IDS,
        st.none() | st.sampled_from(["5 us", "0 s", "3.5 ns", "x", "2 GB"]),
    ),
)
def test_random_questions_raise_nothing_but_scenario_error(  # noqa: PLR0913
    shipped: KnowledgeBase,
    model: str,
    hardware: str,
    count: int,
    nodes: int,
    tp: int,
    pp: int,
    ep: int,
    dp: int,
    batch: int,
    lengths: tuple[int | None, int | None, int | None],
    engine: str | None,
    precisions: tuple[str, str],
    links: tuple[str | None, str | None],
    extra: tuple[str | None, bool | None, str | None, str | None],
) -> None:
    question = Scenario(
        model,
        hardware,
        count,
        nodes,
        tp,
        pp,
        ep,
        dp,
        batch,
        *lengths,
        engine,
        *precisions,
        *links,
        collective_algorithm=extra[0],
        cuda_graphs=extra[1],
        collective_receipt=extra[2],
        inter_latency=extra[3],
    )
    try:
        result = outcome(question, shipped)
    except ScenarioError as exc:
        assert str(exc)
        return
    assert result.scenario == question
    if result.tpot is not None:
        assert result.tpot > 0 and result.fits
    if not result.fits:
        assert result.tpot is None and result.problems


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    model=st.sampled_from([L70, "models/deepseek-v3", "models/llama-2-7b", "models/llama-3.1-8b"]),
    hardware=st.sampled_from([H100, "hardware/nvidia-h200-sxm", "hardware/nvidia-l40s"]),
    tp=st.sampled_from([1, 2, 4, 8]),
    pp=st.sampled_from([1, 2]),
    dp=st.sampled_from([1, 2]),
    per_replica=st.integers(min_value=1, max_value=128),
    context=st.integers(min_value=1, max_value=8192),
    prompt=st.none() | st.integers(min_value=1, max_value=4096),
    precision=st.sampled_from(["bf16", "fp8", "int4"]),
    engine=st.none() | st.sampled_from(["engines/nemo", "engines/sglang", "engines/vllm"]),
)
def test_well_formed_questions_are_answered(  # noqa: PLR0913
    shipped: KnowledgeBase,
    model: str,
    hardware: str,
    tp: int,
    pp: int,
    dp: int,
    per_replica: int,
    context: int,
    prompt: int | None,
    precision: str,
    engine: str | None,
) -> None:
    """A question with consistent degrees is answered: a time, or a problem saying why not."""
    question = Scenario(
        model,
        hardware,
        tp * pp * dp,
        tp=tp,
        pp=pp,
        dp=dp,
        batch=per_replica * dp,
        context=context,
        input_tokens=prompt,
        output_tokens=None if prompt is None else 16,
        engine=engine,
        weight_precision=precision,
        intra_latency="3 us",
    )
    result = outcome(question, shipped)
    if result.fits and not result.problems:
        assert result.tpot is not None and result.tpot > 0
        assert (result.ttft is not None) == (prompt is not None)
    else:
        assert result.problems
    if result.fits:
        assert result.need_per_device <= result.have_per_device
    elif result.need_per_device:
        assert result.need_per_device > result.have_per_device


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    nodes=st.sampled_from([1, 2, 4]),
    per_node=st.sampled_from([2, 4, 8]),
    tp_log=st.integers(min_value=0, max_value=5),
    pp_log=st.integers(min_value=0, max_value=2),
)
def test_node_shapes_raise_only_scenario_error(
    shipped: KnowledgeBase, nodes: int, per_node: int, tp_log: int, pp_log: int
) -> None:
    """Any split of nodes x devices into tp x pp x dp: priced, or refused in words."""
    count = nodes * per_node
    tp, pp = 2**tp_log, 2**pp_log
    if count % (tp * pp):
        return
    dp = count // (tp * pp)
    question = h100_70b(
        count=count,
        nodes=nodes,
        tp=tp,
        pp=pp,
        dp=dp,
        batch=64 * dp,
        inter_link=IB,
        inter_latency="5 us",
        collective_receipt=None,
    )
    try:
        result = outcome(question, shipped)
    except ScenarioError as exc:
        assert str(exc)
        return
    assert result.tpot is None or (result.fits and result.tpot > 0)
    if result.fits and not result.problems:
        assert result.tpot is not None
