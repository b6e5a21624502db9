"""kb.plan.render: the text sections and the plan.v1 JSON (checked against its schema)."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

from jsonschema import Draft202012Validator

from kb.plan.planner import ModelFacts, Query, plan
from kb.plan.render import text, to_json
from kb.plan.sweep import sweep_plan
from tests.plan.fakes import pricing

SCHEMA = Path(__file__).resolve().parents[2] / "kb" / "data" / "output" / "plan.v1.schema.json"
MS = Fraction(1, 1000)
FACTS = ModelFacts(layers=2, experts=None)
QUERY = Query("models/m", "hardware/h", count=2, batch=8, context=100, slo_tpot=20 * MS)
PRICE = pricing(
    {"tp2": lambda b: (10 + b) * MS, "dp2": lambda b: (30 + Fraction(b, 2)) * MS},
    too_big=("tp1",),
)


def validator() -> Draft202012Validator:
    document = json.loads(SCHEMA.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(document)
    return Draft202012Validator(document)


def test_json_holds_to_plan_v1_with_a_sweep() -> None:
    result = plan(QUERY, FACTS, None, PRICE)  # type: ignore[arg-type]
    swept = sweep_plan(QUERY, FACTS, None, "batch", (8, 64), PRICE)  # type: ignore[arg-type]
    document = json.loads(to_json(result, swept))
    errors = [e.message for e in validator().iter_errors(document)]
    assert not errors, errors
    by_name = {o["name"]: o for o in document["options"]}
    assert by_name["tp1"]["status"] == "infeasible"
    assert by_name["tp1"]["memory"]["need_gib"] == "90.00 GiB"
    assert by_name["pp2"]["status"] == "unpriced" and by_name["pp2"]["problems"]
    assert Fraction(by_name["tp2"]["values"]["tpot"]["exact"]) == 18 * MS
    assert by_name["dp2"]["slo_violations"] == ["TPOT 34 ms > SLO 20 ms"]
    assert document["sweep"]["changes"][0]["break_even"] is not None


def test_a_drifted_document_fails_the_schema() -> None:
    document = json.loads(to_json(plan(QUERY, FACTS, None, PRICE)))  # type: ignore[arg-type]
    document["options"][0]["status"] = "maybe"
    assert list(validator().iter_errors(document))


def test_text_puts_feasibility_first_and_names_no_score() -> None:
    result = plan(QUERY, FACTS, None, PRICE)  # type: ignore[arg-type]
    out = text(result)
    assert out.index("1. Feasibility") < out.index("2. Feasible placements")
    assert "tp1 (1 devices, 1 node): does not fit: needs 90.00 GiB per device, has 80.00 GiB" in out
    assert "pp2 (2 devices, 1 node): not priced in this test" in out
    assert "TPOT 34 ms > SLO 20 ms" in out
    assert "energy/token: n/a" in out
    assert "TPOT x tok/s: tp2" in out
