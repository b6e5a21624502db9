"""The compiled schema pass changes speed, never findings: same results as python-jsonschema."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kb import schema
from kb.model import KIND_BY_FOLDER, Record

RECORDS = Path(__file__).resolve().parents[2] / "records"
SHIPPED = sorted(RECORDS.rglob("*.yaml"))
ODD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True),
    st.text(max_size=12),
    st.just([]),
    st.just({}),
    st.just({1: "int key"}),
)


def shipped_record(path: Path) -> Record:
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
    kind = KIND_BY_FOLDER.get(path.parent.name, "")
    return Record(str(path.relative_to(RECORDS).with_suffix("")), kind, str(path), data)


def findings(record: Record, engine: str, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    monkeypatch.setenv("KB_SCHEMA_ENGINE", engine)
    schema.fast_validator.cache_clear()
    found = [(f.code, f.location.pointer, f.message) for f in schema.validate_record(record)]
    schema.fast_validator.cache_clear()
    return found


def mutate(data: dict[str, Any], path: list[int], value: Any) -> dict[str, Any]:
    """Replace the node reached by following `path` (indices into keys/items) with `value`."""
    data = copy.deepcopy(data)
    node: Any = data
    for step in path:
        children = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
        if not children:
            break
        key, child = children[step % len(children)]
        if not isinstance(child, (dict, list)) or step == path[-1]:
            node[key] = value
            return data
        node = child
    return data


@pytest.mark.skipif(schema.fast_validator("source") is None, reason="jsonschema-rs not installed")
def test_the_compiled_pass_is_used_when_installed() -> None:
    assert schema.fast_validator("accelerator") is not None


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_shipped_records_get_the_same_findings(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    record = shipped_record(path)
    assert findings(record, "fast", monkeypatch) == findings(record, "python", monkeypatch)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    index=st.integers(0, len(SHIPPED) - 1),
    path=st.lists(st.integers(0, 50), min_size=1, max_size=5),
    value=ODD_VALUES,
)
def test_mutated_records_get_the_same_findings(
    index: int, path: list[int], value: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = shipped_record(SHIPPED[index])
    broken = Record(record.id, record.kind, record.path, mutate(dict(record.data), path, value))
    assert findings(broken, "fast", monkeypatch) == findings(broken, "python", monkeypatch)
