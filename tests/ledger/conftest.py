"""Pytest fixtures of the ledger tests; the records themselves are in ledger_fixtures.py."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from kb.model import KnowledgeBase
from tests.conftest import SHIPPED_RECORDS
from tests.ledger.ledger_fixtures import fixture_records, make_kb


@pytest.fixture
def records() -> dict[str, dict[str, Any]]:
    return fixture_records()


@pytest.fixture
def kb(records: dict[str, dict[str, Any]]) -> KnowledgeBase:
    return make_kb(records)


@pytest.fixture(scope="module")
def shipped() -> KnowledgeBase:
    """The shipped records, loaded once per test module, their schema stage run (the ledger
    reads typed views)."""
    from kb.api import open_kb
    from kb.checker import schema_stage

    kb = open_kb(SHIPPED_RECORDS, with_references=False)
    schema_stage(kb)
    return kb


@pytest.fixture(scope="module")
def shipped_tree(tmp_path_factory: pytest.TempPathFactory, shipped_stores: Path) -> Path:
    """A copy of the shipped records beside the claims' stores of the run's one cold check
    (tests/warm.py), for the tests that run `kb ledger` or `kb show` on the shipped tree:
    its check is never a cold derivation of every claim (in CI, on records/ in place, it
    was: tests/ledger/test_scenario.py's tp8 test took 10-13 s), and does not depend on what
    other tests left in the project's own `.kb-cache`."""
    from tests.warm import seed

    folder = tmp_path_factory.mktemp("shipped-tree")
    shutil.copytree(SHIPPED_RECORDS, folder / "records")
    seed(shipped_stores, folder / ".kb-cache")
    return folder / "records"
