"""Predictions: a record's equation at a receipt's conditions, held to its measured figure.

Judged on both paths (symbolic, claims.py; plan, plan.py) by one function,
claimbase.judge_prediction: the tests compare the two byte for byte.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kb.equations import engine
from kb.model import KnowledgeBase, Record
from tests.equations.helpers import symbolic_alone
from tests.equations.test_plan import _check_equivalence

RING = """
symbols:
  N: {meaning: ranks, unit: "1"}
  S: {meaning: message size, unit: B}
  alpha: {meaning: latency per all-reduce, unit: us}
  W: {meaning: bus bandwidth, unit: GB/s}
  T: {meaning: all-reduce time, unit: us}
equations:
  t_ring: {expr: "T = alpha + 2*(N - 1)/N*S/W"}
claims:
  - id: t-1mib
    kind: prediction
    of: t_ring
    bind:
      N: receipts/ar#results.0.gpus
      S: receipts/ar#results.0.message_size
      alpha: {value: 20, unit: us}
      W: {value: 100, unit: GB/s}
    measured: receipts/ar#results.0.latency
    band: {rel: 0.25}
"""


def _receipt(latency: Any = 42, unit: str = "us") -> dict[str, Any]:
    return {
        "kind": "receipt",
        "id": "receipts/ar",
        "results": [
            {
                "gpus": 8,
                "message_size": {"value": 1, "unit": "MiB"},
                "latency": {"value": latency, "unit": unit},
            }
        ],
    }


def _kb(latency: Any = 42, unit: str = "us", extra: str = "", **claim: Any) -> KnowledgeBase:
    data = yaml.safe_load(RING)
    data["claims"][0].update(claim)
    data["claims"] += yaml.safe_load(extra) or []
    data.update({"kind": "flop_class", "id": "flops/ring"})
    kb = KnowledgeBase("/x")
    kb.add(Record("flops/ring", "flop_class", "records/flops/ring.yaml", data))
    kb.add(Record("receipts/ar", "receipt", "records/receipts/ar.yaml", _receipt(latency, unit)))
    return kb


def _result(kb: KnowledgeBase) -> engine.RecordResult:
    return engine.analyse(kb, use_cache=False).results["flops/ring"]


def test_within_the_band_is_validated() -> None:
    result = _result(_kb())
    (item,) = [i for i in result.items if i.section == "claim"]
    assert (item.kind, item.state) == ("prediction", "validated")
    assert (item.computed, item.claimed) == ("38.35 us", "42.00 us")  # predicted, measured
    assert (item.error, item.band, item.receipt) == ("-8.7%", "\u00b125%", "receipts/ar")
    assert item.detail == (
        "predicted 38.35 us, measured 42.00 us (receipts/ar), error -8.7% within the band \u00b125%"
    )
    assert result.issues == []


def test_outside_the_band_is_an_error_naming_both_records() -> None:
    result = _result(_kb(latency=60))
    (item,) = [i for i in result.items if i.section == "claim"]
    assert item.state == "contradicted" and item.error == "-36.1%"
    (issue,) = result.issues
    assert issue.code == "EQ018" and issue.pointer == "/claims/0"
    assert "contradicted by its measurement" in issue.message and "receipts/ar" in issue.message
    assert issue.related[0].path == "records/receipts/ar.yaml"
    assert issue.related[0].pointer == "/results/0/latency"


def test_an_accepted_contradiction_stays_contradicted_and_is_no_error() -> None:
    result = _result(_kb(latency=60, accepted={"reason": "no per-layer overhead term"}))
    (item,) = [i for i in result.items if i.section == "claim"]
    assert (item.state, item.accepted) == ("contradicted", "no per-layer overhead term")
    assert item.error == "-36.1%"
    assert item.detail.endswith("; accepted: no per-layer overhead term")
    assert result.issues == []


def test_the_measurement_converts_units_exactly() -> None:
    (item,) = [i for i in _result(_kb(latency=0.042, unit="ms")).items if i.section == "claim"]
    assert (item.state, item.computed, item.claimed) == ("validated", "0.03835 ms", "0.04200 ms")


@pytest.mark.parametrize(
    ("claim", "receipt", "code", "field"),
    [
        ({"measured": "receipts/ar#results.0.gpus"}, {}, "EQ012", "measured"),  # a count
        ({"measured": "receipts/ar#results.0.nothing"}, {}, "EQ010", "measured"),
        ({"measured": "receipts/gone#results.0.latency"}, {}, "RF001", "measured"),
        ({}, {"latency": 0}, "EQ011", "measured"),
        ({"band": {"rel": "a lot"}}, {}, "EQ001", "band/rel"),
        ({"band": None}, {}, "EQ001", "band"),
    ],
)
def test_a_bad_measurement_or_band_is_a_finding_at_its_field(
    claim: dict[str, Any], receipt: dict[str, Any], code: str, field: str
) -> None:
    result = _result(_kb(**claim) if not receipt else _kb(latency=receipt["latency"]))
    assert [(i.code, i.pointer) for i in result.issues] == [(code, f"/claims/0/{field}")]
    assert [i.state for i in result.items if i.section == "claim"] == ["invalid"]


def test_the_plan_path_gives_exactly_the_symbolic_result() -> None:
    counts = _check_equivalence(_kb(), (Fraction(1), Fraction(3, 2), Fraction(1, 3)))
    assert counts["planned"] >= 3  # the validated, the contradicted (x3/2, x1/3): from the plan


@settings(max_examples=40, deadline=None)
@given(
    latency=st.integers(1, 10**6),
    band=st.sampled_from([0, 0.01, 0.1, 0.25, 1, 10]),
    limited=st.booleans(),
)
def test_the_state_follows_the_band_on_both_paths(latency: int, band: float, limited: bool) -> None:
    extra = {"accepted": {"reason": "stated"}} if limited else {}
    kb = _kb(latency=latency / 1000, band={"rel": band}, **extra)
    record = kb.records["flops/ring"]
    resolver = lambda spec: engine.resolve(kb, spec)  # noqa: E731
    symbolic, plan = engine.run_record(record, resolver)
    assert plan is not None
    assert engine._to_json(symbolic_alone(record, resolver)) == engine._to_json(symbolic)
    planned = engine.run_planned(record, plan, resolver)
    assert planned is not None
    assert engine._to_json(planned) == engine._to_json(symbolic)
    (item,) = [i for i in symbolic.items if i.section == "claim"]
    predicted = Fraction(20) + Fraction(2 * 7, 8) * Fraction(2**20) / Fraction(10**11) * 10**6
    error = abs(predicted - Fraction(latency, 1000)) / Fraction(latency, 1000)
    inside = error <= Fraction(str(band))
    assert item.state == ("validated" if inside else "contradicted")
    expected = (["EQ028"] if limited else []) if inside else ([] if limited else ["EQ018"])
    assert [i.code for i in symbolic.issues] == expected


def test_a_changed_measurement_changes_the_cache_key(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    kb = _kb()
    assert engine.analyse(kb).results["flops/ring"].issues == []
    changed = _kb(latency=60)
    assert [i.code for i in engine.analyse(changed).results["flops/ring"].issues] == ["EQ018"]


def _schema_errors(claim: dict[str, Any], **top: Any) -> list[str]:
    from kb.schema import validator

    record = {
        "kind": "flop_class",
        "id": "flops/ring",
        "title": "t",
        "version": 1,
        "status": "draft",
        "text": "t",
        "history": [{"version": 1, "date": "2026-11-30", "change": "c"}],
        "claims": [claim],
        **top,
    }
    checker = validator("flop_class")
    assert checker is not None
    return [error.message for error in checker.iter_errors(record)]


PREDICTION = {
    "id": "p",
    "kind": "prediction",
    "of": "t_ring",
    "bind": {},
    "measured": "receipts/ar#results.0.latency",
    "band": {"rel": 0.25},
}


@pytest.mark.parametrize(
    ("claim", "top", "ok"),
    [
        (PREDICTION, {}, True),
        ({**PREDICTION, "accepted": {"reason": "stated"}}, {}, True),
        ({**PREDICTION, "limitation": {"reason": "stated"}}, {}, False),
        ({**PREDICTION, "bound": "upper"}, {}, False),
        (PREDICTION, {"calibration": ["receipts/x"], "unvalidated": "why"}, True),
        ({k: v for k, v in PREDICTION.items() if k != "band"}, {}, False),
        ({k: v for k, v in PREDICTION.items() if k != "measured"}, {}, False),
        ({**PREDICTION, "band": {"abs": 1}}, {}, False),
        ({**PREDICTION, "expect": {"value": 1}}, {}, False),
        ({**PREDICTION, "erratum": {"source": "sources/doc", "reason": "r"}}, {}, False),
        ({**PREDICTION, "accepted": {}}, {}, False),
        (
            {
                "id": "n",
                "kind": "numeric",
                "of": "t",
                "bind": {},
                "expect": {"value": 1},
                "measured": "receipts/ar#results.0.latency",
            },
            {},
            False,
        ),
        (PREDICTION, {"calibration": "receipts/x"}, False),
    ],
)
def test_the_schema_holds_predictions_to_their_shape(
    claim: dict[str, Any], top: dict[str, Any], ok: bool
) -> None:
    assert (_schema_errors(claim, **top) == []) is ok
