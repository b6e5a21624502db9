"""Knowledge bases of shipped records for the kinds tests, with the schema stage run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kb.checker import schema_stage
from kb.model import KIND_BY_FOLDER, KnowledgeBase, Record
from tests.conftest import load_yaml

RECORDS = Path(__file__).resolve().parents[2] / "records"


def shipped(record_id: str) -> dict[str, Any]:
    """The data of a shipped record, as YAML gives it."""
    data: dict[str, Any] = load_yaml((RECORDS / f"{record_id}.yaml").read_text())
    return data


def checked_kb(records: dict[str, dict[str, Any]]) -> KnowledgeBase:
    """A frozen knowledge base of `records` (id -> data) after the schema stage."""
    kb = KnowledgeBase(root="records")
    for record_id, data in records.items():
        kind = KIND_BY_FOLDER[record_id.split("/")[0]]
        kb.add(Record(record_id, kind, f"records/{record_id}.yaml", data))
    kb.freeze()
    schema_stage(kb)
    return kb
