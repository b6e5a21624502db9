"""vLLM's 2024 versions as their code ran them (issue 35, session 21; kb/ledger/engine_versions.py).

kb/data/end-to-end.json declares two rules by engine version, from the code of the days
PR 2542 (2024-01-22) and PR 3240 (2024-03-06) were timed:

- `stock_collective_versions`: their all-reduce was NCCL (the custom all-reduce not yet
  merged, then disabled by default), so the rows are priced by the stock curves;
- `ray_step_overhead`: every engine step started one Ray task per Ray worker, 2.0 ms a
  step at TP 2 as PR 3763 measured it (not fitted to any row), added to every priced step.

These tests hold the figure to its source's numbers, the rules' scope (exactly the two
receipts' rows), the arithmetic (each row is the composed request plus O x t_r), and that
the stock rule changes what the H100 rows are priced by.
"""

from __future__ import annotations

import re
from dataclasses import replace
from fractions import Fraction

import pytest

from kb.ledger.endtoend import conditions, end_to_end_receipts, evaluate_row
from kb.ledger.engine_versions import (
    ray_step_overhead,
    ray_step_overheads,
    runs_stock_collective,
    stock_collective_versions,
    with_step_overhead,
)
from kb.ledger.scenario import outcome
from kb.model import KnowledgeBase

H100 = "receipts/vllm-mixtral-8x7b-h100-tp8-latency-by-batch"
A100 = "receipts/vllm-mixtral-8x7b-a100-tp2-latency-by-batch"
VLLM = "engines/vllm"


def _quoted_seconds(notes: str, row: str) -> Fraction:
    """The seconds of one row of PR 3763's table as the source record quotes it."""
    found = re.search(rf'"{re.escape(row)} \| ([0-9.]+) \|', notes)
    assert found is not None, row
    return Fraction(found.group(1))


def test_the_figure_is_pr_3763s_difference_over_its_steps(shipped: KnowledgeBase) -> None:
    source = shipped.get("sources/vllm-pr-3763")
    assert source is not None
    notes = " ".join(str(source.data["notes"]).split())
    before = _quoted_seconds(notes, "TP=2")
    after = _quoted_seconds(notes, "TP=2 with this PR")
    steps = int(re.search(r"Single request with 5 input tokens, (\d+) generated", notes)[1])  # type: ignore[index]
    step = ray_step_overheads()[(VLLM, "PR 2542 branch vs main of 2024-01-22")]
    assert (before - after) / steps == step.seconds == Fraction(2, 1000)
    assert step.source == "sources/vllm-pr-3763"


def test_the_rules_cover_exactly_the_two_receipts(shipped: KnowledgeBase) -> None:
    """No other vLLM receipt names a declared version; both rules list the same two.

    The one other receipt of a declared stock-collective version is gpt-fast's NCCL-run
    README (session 24), which has no Ray step.
    """
    assert set(stock_collective_versions()[VLLM]) == {v for _, v in ray_step_overheads()}
    stock = [r for r in end_to_end_receipts(shipped) if runs_stock_collective(r)]
    covered = {r.id for r in stock if r.get("engine.record") == VLLM}
    assert covered == {H100, A100}
    gpt_fast = "receipts/gpt-fast-llama-2-a100-tp-sweep-nccl-batch1"
    assert {r.id for r in stock} - covered == {gpt_fast}
    for record in end_to_end_receipts(shipped):
        key = (str(record.get("engine.record")), str(record.get("engine.version")))
        assert (key in ray_step_overheads()) == (record.id in covered), record.id


@pytest.mark.parametrize("receipt", [H100, A100])
def test_each_row_is_the_composed_request_plus_one_t_r_per_step(
    shipped: KnowledgeBase, receipt: str
) -> None:
    """evaluate_row's prediction = the composed outcome's latency + O x 2 ms, on all 14 rows."""
    record = shipped.get(receipt)
    assert record is not None
    for index, row in enumerate(record.data["results"]):
        scenario, _, _ = conditions(shipped, record, row)
        composed = outcome(scenario, shipped)
        assert composed.latency is not None and scenario.output_tokens == 50
        result = evaluate_row(shipped, record, index, row, False)
        assert result.predicted == composed.latency + 50 * Fraction(2, 1000), row["label"]
        assert any("ray_step_overhead" in note for note in result.assumed), row["label"]
        lower = any("a lower bound at tp 8" in note for note in result.assumed)
        assert lower == (scenario.tp == 8)


def test_the_h100_rows_are_priced_by_nccl_not_the_custom_curve(shipped: KnowledgeBase) -> None:
    """The premise: as priced before (no declaration, no graphs state) they read the custom
    curve vLLM's record holds for H100."""
    record = shipped.get(H100)
    assert record is not None
    row = record.data["results"][0]
    scenario, _, assumed = conditions(shipped, record, row)
    assert scenario.stock_collective and scenario.cuda_graphs is None
    assert any("stock_collective_versions" in note for note in assumed)
    stock = " ".join(outcome(scenario, shipped).pricing)
    custom = " ".join(outcome(replace(scenario, stock_collective=False), shipped).pricing)
    assert "receipts/torch-nccl-all-reduce-h100-latency-by-size" in stock
    assert "custom-all-reduce" not in stock
    assert "custom-all-reduce" in custom


def test_tp_one_and_undeclared_versions_get_no_step_time(shipped: KnowledgeBase) -> None:
    record = shipped.get(A100)
    ci = shipped.get("receipts/vllm-ci-mixtral-8x7b-h200-tp2-latency-batch8")
    assert record is not None and ci is not None
    scenario, _, _ = conditions(shipped, record, record.data["results"][0])
    assert ray_step_overhead(record, scenario) is not None
    assert ray_step_overhead(record, replace(scenario, tp=1, count=1)) is None
    ci_scenario, _, _ = conditions(shipped, ci, ci.data["results"][0])
    assert ray_step_overhead(ci, ci_scenario) is None and not runs_stock_collective(ci)


def test_with_step_overhead_keeps_the_request_whole(shipped: KnowledgeBase) -> None:
    record = shipped.get(A100)
    assert record is not None
    scenario, _, _ = conditions(shipped, record, record.data["results"][3])  # batch 8
    base = outcome(scenario, shipped)
    assert base.ttft is not None and base.tpot is not None and base.latency is not None
    t = Fraction(3, 1000)
    found = with_step_overhead(base, t)
    assert found.ttft == base.ttft + t and found.tpot == base.tpot + t
    assert found.latency == found.ttft + 49 * found.tpot == base.latency + 50 * t
    assert found.tokens_per_s_system == Fraction(8 * 50) / found.latency
    assert found.tokens_per_s_per_device == found.tokens_per_s_system / 2
    assert base.exposed_share is not None and found.exposed_share is not None
    assert found.exposed_share * found.tpot == base.exposed_share * base.tpot
    assert with_step_overhead(replace(base, tpot=None), t) == replace(base, tpot=None)


def _whole_expert_read_gap(kb: KnowledgeBase, batch: int) -> Fraction:
    """PR 2090's extra decode read over a request: every rank reads its whole expert each step.

    main of 2024-01-22 (sources/vllm-main-2024-01-22) ran each rank's expert on every token;
    the fused kernel reads only the experts the batch touches, f = 1 - (1 - k/E)^B of them.
    Per rank, the routed experts are P_exp / tp; the difference over the request's 49 decode
    steps at the HBM rate (the 1000-token prompt touches every expert either way).
    """
    model, gpu = kb.get("models/mixtral-8x7b"), kb.get("hardware/nvidia-h100-sxm")
    assert model is not None and gpu is not None
    g = model.data["geometry"]
    experts = 3 * g["d_model"] * g["d_ff"] * g["experts"] * g["layers"]
    bandwidth = Fraction(gpu.data["memory"]["bandwidth"]["value"]) * 10**9  # GB/s
    touched = 1 - (1 - Fraction(g["experts_active"], g["experts"])) ** batch
    return (1 - touched) * Fraction(experts * 2, 8) / bandwidth * 49


def test_main_minus_the_pr_at_small_batches_is_mostly_the_whole_expert_read(
    shipped: KnowledgeBase,
) -> None:
    """The measured gap between main's rows (PR 2090's scheme) and the PR's at batch 1-8 is
    53-94% the read of the experts no token was routed to; kb prices both schemes' steps as
    reading only touched experts (the ep 8 rows as expert parallelism with dispatch and
    combine, which main did not run), so it cannot show this difference."""
    record = shipped.get(H100)
    assert record is not None
    value = {row["label"]: Fraction(str(row["value"]["value"])) for row in record.data["results"]}
    shares = []
    for batch in (1, 2, 4, 8):
        gap = value[f"unfused MoE (main), batch {batch}"] - value[f"fused MoE (PR), batch {batch}"]
        shares.append(_whole_expert_read_gap(shipped, batch) / gap)
    assert all(Fraction(1, 2) < s < 1 for s in shares), [float(s) for s in shares]
    assert shares[0] > Fraction(9, 10)  # batch 1: 124 of 131 ms
