"""Site test fixtures: a copy of the repository's records, schemas and docs to build from.

The browser tests build the shipped records plus one hostile probe record (its
title is a script tag). If the shipped seed flop class does not carry equations
yet, the seed's own maths from `fixtures/seed_equations.yaml` is merged in, so
the B* MathML and chart are always exercised.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SEED_FLOP = "flops/sched-tensor-parallel-crossover"
XSS_TITLE = "<script>alert(1)</script>"


def copy_repo(target: Path) -> Path:
    """Copy records/ into `target`; return it."""
    for folder in ("records",):
        shutil.copytree(REPO / folder, target / folder)
    seed = target / "records" / f"{SEED_FLOP}.yaml"
    data = yaml.safe_load(seed.read_text(encoding="utf-8"))
    if not data.get("equations"):
        overlay = yaml.safe_load((FIXTURES / "seed_equations.yaml").read_text(encoding="utf-8"))
        seed.write_text(yaml.safe_dump({**data, **overlay}, sort_keys=False), encoding="utf-8")
    return target


def add_probe(records: Path) -> None:
    """A flop class whose title, summary and text try to inject markup."""
    probe: dict[str, Any] = {
        "kind": "flop_class",
        "id": "flops/xss-probe",
        "title": XSS_TITLE,
        "version": 1,
        "status": "draft",
        "summary": '<img src=x onerror=alert(2)> & "quotes"',
        "history": [{"version": 1, "date": "2026-11-30", "change": "<b>probe</b>"}],
        "text": "</script><script>alert(3)</script>",
    }
    (records / "flops" / "xss-probe.yaml").write_text(yaml.safe_dump(probe), encoding="utf-8")


def load(records: Path):  # type: ignore[no-untyped-def]
    """The checked knowledge base of a records tree (references indexed)."""
    from kb.api import open_kb, validate

    result = validate(records, remember=False)
    return open_kb(records, checked=result), result.findings


@pytest.fixture(scope="session")
def repo_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = copy_repo(tmp_path_factory.mktemp("repo"))
    add_probe(root / "records")
    return root


@pytest.fixture(scope="session")
def built_site(repo_copy: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from kb.sitegen.build import build

    kb, findings = load(repo_copy / "records")
    out = tmp_path_factory.mktemp("site") / "_site"
    build(kb, out, findings=[f for f in findings if f.severity.value != "error"])
    return out
