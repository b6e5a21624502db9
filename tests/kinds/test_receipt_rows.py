"""Receipt result rows: end-to-end conditions (SHAPES.md section 4) are typed and reported."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kb import schema
from kb.model import Record

QUANTITY = {"value": 12.5, "unit": "ms", "basis": "measured", "source": "sources/x"}
CONDITIONS: dict[str, Any] = {
    "batch": 8,
    "tp": 4,
    "pp": 2,
    "ep": 1,
    "input_tokens": 128,
    "output_tokens": 2048,
    "precision": "fp8",
    "concurrency": 64,
    "cuda_graphs": True,
    "algorithm": "nvls",
}


def receipt(row: dict[str, Any]) -> Record:
    data = {
        "kind": "receipt",
        "id": "receipts/x",
        "title": "x",
        "version": 1,
        "status": "draft",
        "history": [{"version": 1, "date": "2026-12-01", "change": "new"}],
        "source": "sources/x",
        "evidence_class": "benchmark",
        "engine": {"name": "vLLM"},
        "pattern": "end-to-end",
        "provenance": {},
        "results": [row],
    }
    return Record("receipts/x", "receipt", "records/receipts/x.yaml", data)


def findings(row: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(f.code, f.location.pointer, f.message) for f in schema.validate_record(receipt(row))]


def test_a_row_with_every_condition_is_valid() -> None:
    assert findings({"label": "all", "value": QUANTITY, "metric": "TPOT", **CONDITIONS}) == []


def test_batch_may_be_a_dimensionless_quantity() -> None:
    batch = {"value": 31.5, "unit": "1", "basis": "measured", "source": "sources/x", "note": "mean"}
    assert findings({"value": QUANTITY, "batch": batch}) == []


def test_batch_as_a_quantity_must_be_dimensionless() -> None:
    found = findings({"value": QUANTITY, "batch": {**QUANTITY, "unit": "ms"}})
    assert [(code, pointer) for code, pointer, _ in found] == [("SC001", "/results/0/batch/unit")]


@pytest.mark.parametrize(
    ("field", "bad", "code"),
    [
        ("tp", 0, "SC001"),
        ("pp", -1, "SC001"),
        ("ep", 2.5, "SC001"),
        ("input_tokens", "128", "LD009"),
        ("output_tokens", 0, "SC001"),
        ("concurrency", 0, "SC001"),
        ("batch", 0, "SC001"),
        ("precision", "", "SC001"),
        ("precision", True, "LD010"),
        ("cuda_graphs", "off", "SC001"),
        ("algorithm", "ring-ll", "SC001"),
        ("algorithm", True, "LD010"),
        ("tp", True, "LD010"),
    ],
)
def test_a_bad_condition_is_a_finding_at_its_field(field: str, bad: Any, code: str) -> None:
    found = findings({"value": QUANTITY, field: bad})
    assert found, f"{field}={bad!r} was accepted"
    assert found[0][0] == code
    assert found[0][1] == f"/results/0/{field}"


def test_an_unknown_condition_is_named() -> None:
    found = findings({"value": QUANTITY, "tensor_parallel": 8})
    message = "results/0: unknown field 'tensor_parallel'"
    assert found == [("SC001", "/results/0/tensor_parallel", message)]


ALGORITHMS = {"ring", "tree", "nvls", "one-shot", "two-shot", "custom"}
ODD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=True),
    st.text(max_size=8),
    st.just([]),
    st.just({}),
)


@settings(max_examples=150, deadline=None)
@given(field=st.sampled_from(sorted(CONDITIONS)), value=ODD)
def test_any_condition_value_is_accepted_or_reported(field: str, value: Any) -> None:
    row = copy.deepcopy({"value": QUANTITY, **CONDITIONS})
    row[field] = value
    found = findings(row)
    valid = _expected_valid(field, value)
    assert (found == []) == valid, (field, value, found)
    for code, pointer, _ in found:
        assert code in {"SC001", "LD009", "LD010"}
        assert pointer.startswith(f"/results/0/{field}")


def _expected_valid(field: str, value: Any) -> bool:
    """The contract of SHAPES.md section 4, written out independently of the schema."""
    if field == "precision":
        return isinstance(value, str) and value != ""
    if field == "cuda_graphs":
        return isinstance(value, bool)
    if field == "algorithm":
        return isinstance(value, str) and value in ALGORITHMS
    # JSON Schema's "integer" admits a float with no fractional part (YAML `8.0`).
    whole = isinstance(value, float) and value.is_integer()
    is_int = (isinstance(value, int) and not isinstance(value, bool)) or whole
    return is_int and value >= 1
