"""A rule the record cache serves finds on a record alone what it finds on it among the others.

The checker caches the findings per file of the rules that declare READS = "record"
(kb.checker.local_findings, except the stage and waiver rules); that is exact only if
this holds. tests/run/test_reads.py holds every declaration to what the rule reads.
Checked on the shipped records and on every rule case's files together. The record-local
rules that read the typed views (READS = "views") run after the schema stage, not from the
cache: they are held to the same, with the schema stage run on each side.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.checker import build_knowledge_base, rules_at, schema_stage
from kb.model import KnowledgeBase
from kb.reads import rule_reads
from kb.rules import all_rules
from tests.conftest import SHIPPED_RECORDS, write_tree
from tests.rules.test_rule_cases import case_files

LOCAL_RULES = list(rules_at("alone"))
VIEW_RULES = [r for r in all_rules() if rule_reads(r) == "views"]


def findings_of(rule: object, kb: KnowledgeBase) -> list[tuple[object, ...]]:
    return sorted((f.location.path, f.location.pointer, f.message) for f in rule.check(kb))  # type: ignore[attr-defined]


def knowledge_bases(root: Path) -> list[KnowledgeBase]:
    """The shipped records and every rule case's files (written under `root`), each loaded."""
    trees = [SHIPPED_RECORDS]
    for module, doc in case_files().items():
        for name, case in (doc.get("cases") or {}).items():
            trees.append(write_tree(root / module / name / "records", case["files"]))
    return [build_knowledge_base(tree) for tree in trees]


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> list[KnowledgeBase]:
    """`knowledge_bases`, loaded once per worker and only read: the record-local rules' side."""
    return knowledge_bases(tmp_path_factory.mktemp("local"))


@pytest.fixture(scope="module")
def staged(tmp_path_factory: pytest.TempPathFactory) -> list[KnowledgeBase]:
    """`knowledge_bases` with the schema stage run, once per worker: the view rules' side."""
    kbs = knowledge_bases(tmp_path_factory.mktemp("views"))
    for kb in kbs:
        schema_stage(kb)
    return kbs


def test_some_rules_are_local() -> None:
    assert {"PV001", "PV002", "PV003"} <= {rule.CODE for rule in LOCAL_RULES}
    assert {"EV001", "EV002", "EV003", "LG002"} <= {rule.CODE for rule in VIEW_RULES}
    assert not set(LOCAL_RULES) & set(VIEW_RULES)  # the per-file stage runs before views exist


@pytest.mark.parametrize("rule", LOCAL_RULES + VIEW_RULES, ids=lambda rule: rule.CODE)
def test_a_local_rule_sees_each_record_alone_as_it_sees_it_among_others(
    rule: object, request: pytest.FixtureRequest
) -> None:
    """The trees are loaded once per worker (`loaded`, `staged`) and only read here: a rule
    checks a knowledge base without changing it, the single-record ones are built per rule."""
    seen, views = 0, rule in VIEW_RULES
    for kb in request.getfixturevalue("staged" if views else "loaded"):
        alone: list[tuple[object, ...]] = []
        for record in kb:
            single = KnowledgeBase(root=kb.root)
            single.add(record)
            if views:
                schema_stage(single)
            alone.extend(findings_of(rule, single))
        together = findings_of(rule, kb)
        assert sorted(alone) == together
        seen += len(together)
    assert seen > 0, "no fixture makes this rule fire: the comparison proves nothing"
