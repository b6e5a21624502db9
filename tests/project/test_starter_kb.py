"""Issue 6 acceptance: the starter knowledge base is big enough and every figure is sourced.

- at least 10 flop classes, 9 accelerators, 10 interconnects, 5 models, 12 receipts;
- every figure has a basis, and every figure whose basis is not `unverified` or `assumed`
  (a scenario input, PV003) cites a source record that exists (and is a source);
- every flop class has at least one numeric claim bound to a hardware or model record,
  and the equations engine proves every such claim.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from kb.api import open_kb
from kb.equations.engine import analyse
from kb.model import UNSOURCED_BASES, KnowledgeBase, split_binding
from kb.rules._walk import located, quantities
from tests.conftest import REPO

MINIMUM = {"flop_class": 10, "accelerator": 9, "interconnect": 10, "model": 5, "receipt": 12}


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return open_kb(REPO / "records")


def test_the_starter_kb_has_the_minimum_counts(kb: KnowledgeBase) -> None:
    counts = Counter(record.kind for record in kb)
    short = {kind: (counts[kind], need) for kind, need in MINIMUM.items() if counts[kind] < need}
    assert not short, f"kinds below their minimum (have, need): {short}"


def test_every_figure_has_a_basis_and_an_existing_source(kb: KnowledgeBase) -> None:
    problems = []
    for record in kb:
        for pointer, quantity in quantities(record.data):
            if "basis" not in quantity:
                problems.append(f"{record.id}{pointer}: no basis")
        for pointer, block in located(kb, record, lambda node: "basis" in node):  # PV001-3's walk
            if block["basis"] in UNSOURCED_BASES:
                continue
            source = kb.get(str(block.get("source", "")))
            if source is None or source.kind != "source":
                problems.append(
                    f"{record.id}{pointer}: source {block.get('source')!r} is not a source record"
                )
    assert not problems, "\n".join(problems)


def _binds_hardware_or_model(claim: dict, kb: KnowledgeBase) -> bool:  # type: ignore[type-arg]
    bind = claim.get("bind") or {}
    targets = [kb.get(split_binding(v)[0]) for v in bind.values() if isinstance(v, str)]
    return any(t is not None and t.kind in ("accelerator", "model") for t in targets)


def test_every_flop_class_has_a_recomputed_numeric_claim_bound_to_hardware_or_a_model(
    kb: KnowledgeBase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shipped_stores: Path
) -> None:
    """The claims' results from the stores one cold check of the shipped records left
    (tests/warm.py, shared by the run), not a cold analysis of its own: a seeded run
    reports what a cold run reports (tests/project/test_warm_stores.py)."""
    from tests.warm import seed

    monkeypatch.setenv("KB_CACHE_DIR", str(seed(shipped_stores, tmp_path / "cache")))
    analysis = analyse(kb)
    missing = []
    for record in kb.of_kind("flop_class"):
        claims = [c for c in record.data.get("claims", []) if c.get("kind") == "numeric"]
        bound = {c["id"] for c in claims if _binds_hardware_or_model(c, kb)}
        states = {
            item.id: item.state
            for item in analysis.results[record.id].items
            if item.section == "claim"
        }
        proved = {cid for cid in bound if states.get(cid) == "recomputed"}
        if not proved:
            missing.append(f"{record.id}: bound {sorted(bound)}, states {states}")
    assert not missing, "\n".join(missing)


def test_unverified_figures_are_listed_by_kb_list(tmp_path: Path) -> None:
    from tests.conftest import run_kb

    done = run_kb(["list", "--unverified"], cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert "unverified" in done.stdout


def test_the_readme_states_how_many_figures_are_unverified() -> None:
    import re

    from tests.conftest import run_kb

    done = run_kb(["list", "--unverified"], cwd=REPO)
    counted = re.search(r"(\d+) unverified figures?", done.stdout)
    stated = re.search(r"(\d+) figures are `basis: unverified`", (REPO / "README.md").read_text())
    assert counted and stated, "README or kb list lost its count"
    assert stated.group(1) == counted.group(1), "update the README's count of unverified figures"
