"""PV001-PV003 share one walk of each record's provenance nodes: the same findings as one scan each.

Before the shared pass each rule scanned every mapping of every record on its own
(`located` over `mappings`); now one walk per record and run collects the mappings
that hold a figure or a `basis` (kb.rules._walk), and the three rules pick from
those. Here each rule's findings from the shared pass are held equal to the old
per-rule scan's: on every rule case tree of the three rules, on random documents,
and on a generated corpus with provenance damage (200 records per push; the
shipped records and 1,000 generated records with KB_FULL=1).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given

from kb.findings import Finding
from kb.loader import load_knowledge_base
from kb.model import KnowledgeBase, Record
from kb.rules import assumed_without_note, missing_basis, missing_source
from kb.rules._walk import mappings, provenance
from tests.conftest import SHIPPED_RECORDS, write_tree
from tests.equations.helpers import generated_corpus
from tests.rules.test_rule_cases import case_files, cases_of
from tests.rules.test_walk import DOCUMENTS
from tests.sample import full

RULES = (missing_basis, missing_source, assumed_without_note)
Wanted = Callable[[Mapping[str, Any]], bool]


def scanned(kb: KnowledgeBase, record: Record, wanted: Wanted) -> list[tuple[str, Any]]:
    """The old path: every mapping of the record, with its pointer, that `wanted` picks."""
    return [(pointer, node) for pointer, node in mappings(record.data) if wanted(node)]


def findings_both_ways(
    kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[Finding], list[Finding]]:
    """Every PV001-PV003 finding on `kb`: from the shared pass, then from one scan per rule."""
    kb.freeze()
    shared = [f for rule in RULES for f in rule.check(kb)]
    with monkeypatch.context() as patch:
        for rule in RULES:
            patch.setattr(rule, "located", scanned)
        alone = [f for rule in RULES for f in rule.check(kb)]
    return shared, alone


def loaded(root: Path) -> KnowledgeBase:
    kb, _ = load_knowledge_base(root)
    return kb


def test_every_pv_predicate_picks_only_provenance_nodes() -> None:
    """The shared pass may skip other mappings: no rule's predicate picks one."""
    for node in ({"value": 1}, {"unit": "B"}, {"note": "x"}, {}, {"source": "sources/a"}):
        assert not provenance(node)
        assert not missing_basis._without_basis(node)
        assert not missing_source._sourced_basis_without_source(node)
        assert not assumed_without_note._assumed_without_note(node)


@given(DOCUMENTS)
def test_random_documents(data: Any) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        kb = KnowledgeBase(root="records")
        kb.add(Record("sources/x", "source", "records/sources/x.yaml", data))
        shared, alone = findings_both_ways(kb, monkeypatch)
    assert shared == alone


@pytest.mark.parametrize("module", ["missing_basis", "missing_source", "assumed_without_note"])
def test_rule_case_trees(module: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cases = cases_of(case_files(), module)
    assert cases
    flagged = 0
    for name, case in cases.items():
        root = write_tree(tmp_path / name / "records", case["files"])
        shared, alone = findings_both_ways(loaded(root), monkeypatch)
        assert shared == alone, name
        flagged += bool(shared)
    assert flagged  # the cases that fail still fail


def damage(records: Path, seed: int) -> int:
    """Break provenance in about one record in five; returns how many files were changed."""
    rng = random.Random(seed)
    changed = 0
    edits = (
        lambda t: t.replace(", basis: estimated", "", 1),
        lambda t: re.sub(r"source: sources/bench-src-\d+", "source: ''", t, count=1),
        lambda t: t.replace("basis: estimated", "basis: assumed", 1),
    )
    for path in sorted(records.rglob("*.yaml")):
        if rng.random() < 0.2:
            text = path.read_text(encoding="utf-8")
            edited = rng.choice(edits)(text)
            if edited != text:
                path.write_text(edited, encoding="utf-8")
                changed += 1
    return changed


def test_generated_corpus_damaged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    records = generated_corpus(tmp_path, 1000 if full() else 200)
    assert damage(records, seed=34) > 10
    shared, alone = findings_both_ways(loaded(records), monkeypatch)
    assert {f.code for f in shared} == {"PV001", "PV002", "PV003"}
    assert shared == alone


@pytest.mark.skipif(not full(), reason="the shipped records with KB_FULL=1")
def test_shipped_records(monkeypatch: pytest.MonkeyPatch) -> None:
    shared, alone = findings_both_ways(loaded(SHIPPED_RECORDS), monkeypatch)
    assert shared == alone
