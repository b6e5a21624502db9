"""Rows measured at a fixed concurrency: the serving steady state (kb/ledger/serving.py).

kb/data/end-to-end.json `serving_steady_state` declares the rule: a closed loop of C
clients, each request's O - 1 decode steps carrying the other C - 1 prefills,

    TPOT = t_dec(C) + (C - 1) * d_s / (O - 1)
    TTFT = d_1 + t_dec/2 + rho * d_s/2,  rho = (TPOT - t_dec)/TPOT

with d_s = d_1 (stalled scheduler) or d_1 - L*t_o (mixed). The arithmetic is worked by
hand below; the end-to-end rows check that the composed figures go through it (a passing
row, NIM's TPOT at concurrency 50, and a failing one, the MI355X recipe's MXFP4 TPOT, which
misses with matmuls at AITER's measured MXFP4 rate), that concurrency one is unchanged, and that
an engine whose scheduler is not declared is not evaluable.
"""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kb.ledger.endtoend import (
    CONTRADICTED,
    NOT_EVALUABLE,
    VALIDATED,
    conditions,
    evaluate_row,
)
from kb.ledger.scenario import outcome
from kb.ledger.serving import (
    MIXED,
    SERVING_CLASS,
    STALLED,
    ClassModels,
    class_models,
    schedulers,
    steady_state,
)
from kb.model import KnowledgeBase, Record

NIM = "receipts/nim-1.8-llama-3.3-70b-h100-tp2-fp8-concurrency"
MI355X = "receipts/vllm-recipes-llama-3.3-70b-mi355x-tp1-8k1k-conc64"
MS = Fraction(1, 1000)


def _record(kb: KnowledgeBase, receipt: str) -> Record:
    record = kb.get(receipt)
    assert record is not None
    return record


def _row(kb: KnowledgeBase, receipt: str, index: int) -> dict[str, object]:
    return copy.deepcopy(dict(_record(kb, receipt).data["results"][index]))


def test_the_rule_is_declared_with_its_sources() -> None:
    data = json.loads(
        (Path(__file__).resolve().parents[2] / "kb" / "data" / "end-to-end.json").read_text()
    )
    entry = data["serving_steady_state"]
    assert entry["reason"] and entry["tpot"] and entry["ttft"]
    assert any("chunked prefill is always enabled by default" in s for s in entry["sources"])
    assert schedulers() == {
        "engines/vllm": MIXED,
        "engines/tensorrt-llm": MIXED,
        "engines/sglang": STALLED,
    }


def test_the_arithmetic_by_hand() -> None:
    # C = 11, O = 101, t_dec = 20 ms, a 300 ms prompt pass of which 10 ms is overhead.
    # mixed: d_s = 290 ms; TPOT = 20 + 10 x 290/100 = 49 ms; rho = 29/49;
    # TTFT = 300 + 10 + (29/49) x 145 = 310 + 4205/49 ms; request = TTFT + 100 x 49 ms.
    found = steady_state(MIXED, 11, 101, 20 * MS, 300 * MS, 10 * MS)
    assert found.prefill_stall == 290 * MS
    assert found.tpot == 49 * MS
    assert found.prefill_share == Fraction(29, 49)
    assert found.ttft == (310 + Fraction(4205, 49)) * MS
    assert found.latency == found.ttft + 100 * 49 * MS
    # stalled: the whole pass stalls every decode: TPOT = 20 + 10 x 300/100 = 50 ms
    stalled = steady_state(STALLED, 11, 101, 20 * MS, 300 * MS, 10 * MS)
    assert stalled.tpot == 50 * MS and stalled.prefill_stall == 300 * MS


def test_one_client_is_the_request_alone() -> None:
    found = steady_state(MIXED, 1, 101, 20 * MS, 300 * MS, 10 * MS)
    assert found.tpot == 20 * MS and found.ttft == 300 * MS and found.prefill_share == 0


def test_bad_inputs_are_refused() -> None:
    with pytest.raises(ValueError, match="scheduler"):
        steady_state("fifo", 2, 10, MS, MS, 0 * MS)
    with pytest.raises(ValueError, match="at least 1"):
        steady_state(MIXED, 0, 10, MS, MS, 0 * MS)
    with pytest.raises(ValueError, match="overhead"):
        steady_state(MIXED, 2, 10, MS, MS, 2 * MS)


def test_a_passing_row_nim_tpot_at_concurrency_50(shipped: KnowledgeBase) -> None:
    record, row = _record(shipped, NIM), _row(shipped, NIM, 3)
    assert row["concurrency"] == 50 and "batch" not in row
    scenario, _, _ = conditions(shipped, record, row)
    at_c = outcome(scenario, shipped)
    single = outcome(replace(scenario, batch=1), shipped)
    assert at_c.tpot is not None and single.ttft is not None
    overhead = next(Fraction(r.value) for r in single.rows if r.name == "overhead")
    expected = at_c.tpot + 49 * (single.ttft - overhead) / 499  # TensorRT-LLM: mixed
    result = evaluate_row(shipped, record, 3, row, False)
    assert result.predicted == expected
    assert result.predicted > at_c.tpot  # the prefills are counted
    assert result.state == VALIDATED, result.error
    assert any(a.startswith("serving steady state of 50") for a in result.assumed)


def test_the_class_claims_bind_the_rows_composed_figures(shipped: KnowledgeBase) -> None:
    """The class's two claims work NIM's concurrency-50 row by hand from kb's composed figures:
    their bindings are those figures rounded, so a change to the composition fails here until
    the claims say what kb now computes (they had gone stale once: class v3's history)."""
    record, row = _record(shipped, NIM), _row(shipped, NIM, 3)
    scenario, _, _ = conditions(shipped, record, row)
    at_c = outcome(scenario, shipped)
    single = outcome(replace(scenario, batch=1), shipped)
    assert at_c.tpot is not None and single.ttft is not None
    overhead = next(Fraction(r.value) for r in single.rows if r.name == "overhead")
    claims = {c["id"]: c for c in _record(shipped, SERVING_CLASS).data["claims"]}

    def bound(claim: str, name: str) -> float:
        return float(claims[claim]["bind"][name]["value"])

    def near(value: float, seconds: Fraction, digits: int) -> bool:
        return round(float(seconds / MS), digits) == value

    steady, mixed = "nim-h100-tp2-c50-tpot", "nim-h100-tp2-c50-tpot-mixed"
    assert near(bound(steady, "t_dec"), at_c.tpot, 2) and near(bound(mixed, "t_dec"), at_c.tpot, 2)
    assert near(bound(steady, "d_s"), single.ttft - overhead, 1)
    assert near(bound(mixed, "d_1"), single.ttft, 1)
    per_layer = overhead / 80 / (MS / 1000)  # us
    assert round(float(per_layer), 1) == bound(mixed, "t_o")
    predicted = evaluate_row(shipped, record, 3, row, False).predicted
    assert predicted is not None
    # mixed: the claim works from inputs rounded to 0.01 and 0.1 ms, so its figure is the row's
    # to within 0.01 ms (session 26: 69.40 by hand from the rounded inputs, 69.39 unrounded)
    assert abs(float(predicted / MS) - float(claims[mixed]["expect"]["value"])) <= 0.01


def test_a_failing_row_mi355x_tpot_stays_a_miss(shipped: KnowledgeBase) -> None:
    record = _record(shipped, MI355X)
    # the MXFP4 TPOT row: its matmuls at AITER's measured MXFP4 rate since session 24
    # (receipts/aiter-mi355x-mxfp4-gemm; the FP8 rows at receipts/rocm-blog-mi355x-fp8-gemm's
    # since session 14), still a miss: the decode step's gap is not in the matmul rate
    result = evaluate_row(shipped, record, 3, _row(shipped, MI355X, 3), False)
    assert result.state == CONTRADICTED
    assert result.error is not None and result.error < -Fraction(1, 4)
    assert any(
        a.startswith("matmuls at the measured rate receipts/aiter-mi355x-mxfp4-gemm#")
        for a in result.assumed
    )


def test_concurrency_one_is_priced_as_before(shipped: KnowledgeBase) -> None:
    record, row = _record(shipped, NIM), _row(shipped, NIM, 0)
    assert row["concurrency"] == 1
    scenario, _, _ = conditions(shipped, record, row)
    result = evaluate_row(shipped, record, 0, row, False)
    assert result.predicted == outcome(scenario, shipped).tpot
    assert not any(a.startswith("serving steady state") for a in result.assumed)


def test_an_engine_without_a_declared_scheduler_is_not_evaluable(shipped: KnowledgeBase) -> None:
    record = _record(shipped, NIM)
    data = copy.deepcopy(record.data)
    data["engine"]["record"] = "engines/nemo"
    other = Record(record.id, record.kind, record.path, data)
    result = evaluate_row(shipped, other, 3, _row(shipped, NIM, 3), False)
    assert result.state == NOT_EVALUABLE
    assert "scheduler" in result.reason and "engines/nemo" in result.reason


@pytest.fixture(scope="module")
def models(shipped: KnowledgeBase) -> ClassModels:
    found = class_models(shipped)
    assert isinstance(found, ClassModels), found
    return found


def test_the_class_equations_give_the_hand_arithmetic(models: ClassModels) -> None:
    for scheduler in (MIXED, STALLED):
        by_hand = steady_state(scheduler, 11, 101, 20 * MS, 300 * MS, 10 * MS)
        by_class = steady_state(scheduler, 11, 101, 20 * MS, 300 * MS, 10 * MS, models)
        assert by_class == by_hand
    assert models.tpot.text == "t_tpot = t_dec + (n_c - 1)*d_s/(n_out - 1)"


_TIMES = st.fractions(min_value=Fraction(1, 10**4), max_value=Fraction(2), max_denominator=10**4)


@settings(max_examples=25, deadline=None)
@given(
    st.integers(min_value=1, max_value=300),
    st.integers(min_value=1, max_value=4000),
    _TIMES,
    _TIMES,
    st.fractions(min_value=0, max_value=1, max_denominator=100),
)
def test_the_class_and_the_arithmetic_agree_everywhere(
    shipped: KnowledgeBase,
    clients: int,
    outputs: int,
    step: Fraction,
    prompt: Fraction,
    part: Fraction,
) -> None:
    found = class_models(shipped)
    assert isinstance(found, ClassModels)
    for scheduler in (MIXED, STALLED):
        by_hand = steady_state(scheduler, clients, outputs, step, prompt, part * prompt)
        assert steady_state(scheduler, clients, outputs, step, prompt, part * prompt, found) == (
            by_hand
        )


class _Without:
    """The shipped tree without the class (its `get` is all class_models reads first)."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb

    def get(self, record_id: str) -> Record | None:
        return None if record_id == SERVING_CLASS else self.kb.get(record_id)


def test_without_the_class_it_is_said(shipped: KnowledgeBase) -> None:
    found = class_models(cast(KnowledgeBase, _Without(shipped)))
    assert isinstance(found, str) and SERVING_CLASS in found and "not in the tree" in found
