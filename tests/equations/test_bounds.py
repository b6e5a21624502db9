"""Bounds and accepted contradictions: states that cannot be mistaken (claimbase.judge_prediction).

A bound (`kind: bound`, `bound: upper | lower`) holds or is contradicted, with its
tightness; a contradiction the record accepts stays contradicted, carries its reason,
and is no error until the measurement stops contradicting it (EQ028). Both paths
(symbolic and plan) judge them alike. The ring fixture predicts 38.35 us.
"""

from __future__ import annotations

from typing import Any

import pytest

from kb.equations import engine
from kb.equations.verdict import prediction_state, record_verdict
from tests.equations.helpers import symbolic_alone
from tests.equations.test_predictions import PREDICTION, _kb, _result, _schema_errors


def _bound(side: str, latency: float, **claim: Any) -> engine.RecordResult:
    kb = _kb(latency=latency, **claim, kind="bound", bound=side)
    kb.records["flops/ring"].data["claims"][0].pop("band")
    return _result(kb)


@pytest.mark.parametrize(
    ("side", "latency", "state", "codes"),
    [
        ("lower", 60, "holds", []),
        ("lower", 30, "contradicted", ["EQ018"]),
        ("upper", 30, "holds", []),
        ("upper", 60, "contradicted", ["EQ018"]),
    ],
)
def test_a_bound_holds_on_its_side_of_the_measurement(
    side: str, latency: float, state: str, codes: list[str]
) -> None:
    result = _bound(side, latency)
    (item,) = [i for i in result.items if i.section == "claim"]
    assert (item.kind, item.state, item.band) == ("bound", state, f"{side} bound")
    assert item.tightness == {60: "1.56", 30: "0.782"}[int(latency)]
    assert f"tightness (measured/bound) {item.tightness}" in item.detail
    assert [i.code for i in result.issues] == codes


def test_an_accepted_contradicted_bound_is_no_error_and_an_accepted_holding_one_is() -> None:
    accepted = {"accepted": {"reason": "prefill not counted"}}
    (item,) = [i for i in _bound("lower", 30, **accepted).items if i.section == "claim"]
    assert (item.state, item.accepted) == ("contradicted", "prefill not counted")
    assert prediction_state(item) == "contradicted (accepted: prefill not counted)"
    assert _bound("lower", 30, **accepted).issues == []
    stale = _bound("lower", 60, **accepted)
    assert [i.code for i in stale.issues] == ["EQ028"]
    assert "holds it now" in stale.issues[0].message


def test_an_accepted_prediction_back_in_its_band_is_eq028() -> None:
    result = _result(_kb(latency=42, accepted={"reason": "was outside"}))
    (item,) = [i for i in result.items if i.section == "claim"]
    assert item.state == "validated"
    assert [i.code for i in result.issues] == ["EQ028"]


def test_a_contradiction_accepted_or_not_makes_the_verdict_red_and_a_bound_is_not_green() -> None:
    accepted = _result(_kb(latency=60, accepted={"reason": "known"})).items
    assert record_verdict(accepted, {}).tone == "contradicted"
    holding = _bound("lower", 60).items
    verdict = record_verdict(holding, {})
    assert (verdict.tone, verdict.holds, verdict.validated) == ("none", 1, 0)


@pytest.mark.parametrize("latency", [30, 38.35008, 60])
@pytest.mark.parametrize("side", ["lower", "upper"])
def test_the_plan_path_judges_a_bound_as_the_symbolic_path(side: str, latency: float) -> None:
    kb = _kb(latency=latency, kind="bound", bound=side, accepted={"reason": "r"})
    kb.records["flops/ring"].data["claims"][0].pop("band")
    record = kb.records["flops/ring"]
    resolver = lambda spec: engine.resolve(kb, spec)  # noqa: E731
    symbolic, plan = engine.run_record(record, resolver)
    assert plan is not None
    assert engine._to_json(symbolic_alone(record, resolver)) == engine._to_json(symbolic)
    planned = engine.run_planned(record, plan, resolver)
    assert planned is not None and engine._to_json(planned) == engine._to_json(symbolic)


def test_a_bad_side_is_a_finding_at_its_field() -> None:
    result = _bound("sideways", 60)
    assert [(i.code, i.pointer) for i in result.issues] == [("EQ001", "/claims/0/bound")]


NUMERIC = {"id": "n", "kind": "numeric", "of": "t", "bind": {}, "expect": {"value": 1}}
BOUND_CLAIM = {k: v for k, v in PREDICTION.items() if k != "band"} | {"kind": "bound"}


@pytest.mark.parametrize(
    ("claim", "ok"),
    [
        ({**BOUND_CLAIM, "bound": "lower"}, True),
        ({**BOUND_CLAIM, "bound": "upper", "accepted": {"reason": "r"}}, True),
        (BOUND_CLAIM, False),  # no side
        ({**BOUND_CLAIM, "bound": "sideways"}, False),
        ({**BOUND_CLAIM, "bound": "lower", "band": {"rel": 0.25}}, False),
        ({**BOUND_CLAIM, "bound": "lower", "limitation": {"reason": "r"}}, False),
        (NUMERIC, True),
        ({**NUMERIC, "accepted": {"reason": "r"}}, False),  # only a measured claim is accepted
        ({**NUMERIC, "bound": "lower"}, False),
    ],
)
def test_the_schema_knows_bounds_and_acceptance(claim: dict[str, Any], ok: bool) -> None:
    assert (_schema_errors(claim) == []) is ok, _schema_errors(claim)
