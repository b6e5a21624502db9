"""Every rule's STAGE holds: kb.checker runs each rule where its declaration says.

A "stage" rule forwards what the load or schema stage found (a finding planted in
the schema stage's output comes back from it, and from no other rule); a "late"
rule reads the waivers stage or the rules stage's codes (run before them, it stops
with StageNotRun, and no other rule does once the stages before the rules have run).
"""

from __future__ import annotations

import pytest

from kb.api import open_kb, validate
from kb.checker import equations_stage, schema_stage
from kb.findings import Finding, Location, Severity
from kb.rules import all_rules
from kb.rules._base import STAGES, rule_stage
from kb.run import StageNotRun
from tests.conftest import SHIPPED_RECORDS

STAGE_OF = {rule.CODE: rule_stage(rule) for rule in all_rules()}


def declaring(stage: str) -> set[str]:
    return {code for code, value in STAGE_OF.items() if value == stage}


def test_every_rule_declares_a_known_stage() -> None:
    assert set(STAGE_OF.values()) <= set(STAGES)
    assert declaring("stage") and declaring("late") and declaring("rules")


def test_a_rule_forwards_a_stage_exactly_when_it_declares_stage() -> None:
    kb = open_kb(SHIPPED_RECORDS, checked=validate(SHIPPED_RECORDS, remember=False))
    planted = Location("planted.yaml", 0, 0, "")
    kb.run.schema = [Finding(code, Severity.ERROR, planted, "planted") for code in STAGE_OF]
    forwarded = set()
    for rule in all_rules():
        try:
            if any(f.location == planted for f in rule.check(kb)):
                forwarded.add(rule.CODE)
        except StageNotRun:
            assert STAGE_OF[rule.CODE] != "stage", rule.CODE  # it reads a later stage
    assert forwarded == declaring("stage")


def test_a_rule_reads_the_waivers_or_the_codes_exactly_when_it_declares_late() -> None:
    kb = open_kb(SHIPPED_RECORDS, checked=validate(SHIPPED_RECORDS, remember=False))
    schema_stage(kb)
    equations_stage(kb)
    assert kb.run.known_codes is None and kb.run.waivers_used is None
    stopped = set()
    for rule in all_rules():
        try:
            list(rule.check(kb))
        except StageNotRun:
            stopped.add(rule.CODE)
    assert stopped == declaring("late")


def test_an_unknown_stage_is_refused() -> None:
    class Odd:
        CODE, STAGE = "XX001", "early"

    with pytest.raises(ValueError, match="XX001: STAGE is gone"):  # READS says where it runs
        rule_stage(Odd())
