"""LG009's claim half (kb/rules/_collective_claims.py) on arbitrary claims and curves."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from kb.findings import Severity
from kb.model import KnowledgeBase, Record
from kb.rules._collective_claims import check_claims

RECEIPT = "receipts/r"


def q(value: Any, unit: Any) -> dict[str, Any]:
    return {"value": value, "unit": unit, "basis": "measured", "source": "sources/s"}


def knowledge_base(rows: list[Any], claims: list[Any]) -> tuple[KnowledgeBase, Record]:
    kb = KnowledgeBase(Path("records"))
    receipt = Record(
        RECEIPT, "receipt", "records/receipts/r.yaml", {"pattern": "all-reduce", "results": rows}
    )
    flop = Record("flops/x", "flop_class", "records/flops/x.yaml", {"claims": claims})
    kb.records[receipt.id] = receipt
    kb.records[flop.id] = flop
    return kb, flop


def findings(rows: list[Any], claims: list[Any]) -> list[Any]:
    kb, flop = knowledge_base(rows, claims)
    return list(check_claims(kb, flop, "LG009", Severity.ERROR))


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 10**12),
    st.floats(allow_nan=True),
    st.text(max_size=12),
    st.sampled_from(["B", "KiB", "GB/s", "us", "furlong", ""]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=10,
)
bindings = st.one_of(
    values,
    st.builds(
        lambda i, f: f"{RECEIPT}#results.{i}.{f}",
        st.integers(0, 4),
        st.sampled_from(
            ["latency", "bus_bandwidth", "algorithm_bandwidth", "message_size", "gpus"]
        ),
    ),
    st.builds(
        q,
        st.one_of(st.integers(-5, 10**9), st.text(max_size=4)),
        st.sampled_from(["B", "KiB", "us"]),
    ),
)
rows_strategy = st.lists(
    st.one_of(
        values,
        st.fixed_dictionaries(
            {
                "gpus": st.one_of(st.integers(1, 8), st.booleans()),
                "message_size": st.one_of(
                    st.builds(q, st.integers(0, 10**6), st.just("B")), values
                ),
                "bus_bandwidth": st.builds(q, st.integers(1, 500), st.just("GB/s")),
            }
        ),
    ),
    max_size=5,
)
claims_strategy = st.lists(
    st.one_of(
        values,
        st.fixed_dictionaries(
            {
                "id": st.text(max_size=5),
                "bind": st.one_of(
                    values, st.dictionaries(st.text(min_size=1, max_size=3), bindings, max_size=4)
                ),
                "change": st.one_of(
                    st.none(),
                    st.dictionaries(st.text(min_size=1, max_size=3), bindings, max_size=2),
                ),
                "measured": st.one_of(st.none(), bindings),
            }
        ),
    ),
    max_size=3,
)


@given(rows_strategy, claims_strategy)
def test_any_claim_and_curve_gives_findings_never_a_crash(
    rows: list[Any], claims: list[Any]
) -> None:
    for finding in findings(rows, claims):
        assert finding.code == "LG009"
        assert finding.location.pointer.startswith("/claims/")
        assert "binds receipts/r#results." in finding.message


def bus_row(size: int) -> dict[str, Any]:
    return {"gpus": 8, "message_size": q(size, "B"), "bus_bandwidth": q(100, "GB/s")}


@given(
    st.lists(st.integers(1, 10**6), min_size=2, max_size=6, unique=True),
    st.integers(1, 10**6),
    st.data(),
)
def test_two_rows_pass_exactly_when_they_are_the_nearest_pair_around_the_size(
    sizes: list[int], named: int, data: st.DataObject
) -> None:
    first, second = data.draw(
        st.lists(st.integers(0, len(sizes) - 1), min_size=2, max_size=2, unique=True)
    )
    claim = {
        "id": "c",
        "bind": {
            "n": q(named, "B"),
            "W": f"{RECEIPT}#results.{first}.bus_bandwidth",
            "W_2": f"{RECEIPT}#results.{second}.bus_bandwidth",
        },
    }
    found = findings([bus_row(s) for s in sizes], [claim])
    low, high = sorted((sizes[first], sizes[second]))
    nearest = low < named < high and not any(low < s < high for s in sizes)
    for index in (first, second):
        flagged = any(f"results.{index}.bus_bandwidth" in f.message for f in found)
        assert flagged == (not nearest and sizes[index] != named)


@given(st.integers(1, 2**40), st.sampled_from(["B", "KiB", "MiB", "GiB"]))
def test_a_size_in_any_byte_unit_names_its_row(value: int, unit: str) -> None:
    factor = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}[unit]
    row = {"gpus": 8, "message_size": q(value * factor, "B"), "latency": q(5, "us")}
    claim = {"id": "c", "bind": {"n": q(value, unit), "t": f"{RECEIPT}#results.0.latency"}}
    assert findings([row], [claim]) == []
    claim["bind"]["n"] = q(value * factor + 1, "B")
    assert len(findings([row], [claim])) == 1
