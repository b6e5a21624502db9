"""Pytest fixtures of the ledger tests; the records themselves are in ledger_fixtures.py."""

from __future__ import annotations

from typing import Any

import pytest

from kb.model import KnowledgeBase
from tests.ledger.ledger_fixtures import fixture_records, make_kb


@pytest.fixture
def records() -> dict[str, dict[str, Any]]:
    return fixture_records()


@pytest.fixture
def kb(records: dict[str, dict[str, Any]]) -> KnowledgeBase:
    return make_kb(records)
