"""Pytest fixtures of the ledger tests; the records themselves are in ledger_fixtures.py."""

from __future__ import annotations

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
