"""LG009's claim half (kb/rules/_collective_claims.py) on arbitrary claims and curves.

The rule reads claims and receipt rows through their typed views, so each case is a
knowledge base of a flop class and a receipt after the schema stage: a record that
fails its schema gives no LG009 finding (its SC001 finding is the report).
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kb.findings import Finding, Severity
from kb.model import KnowledgeBase, Record
from kb.rules._collective_claims import check_claims
from tests.kinds.helpers import checked_kb, shipped

RECEIPT = "receipts/azure-nd-h100-v5-nccl-all-reduce"
FLOP = "flops/x"
SHIPPED_RECEIPT = shipped(RECEIPT)


def q(value: Any, unit: Any) -> dict[str, Any]:
    return {"value": value, "unit": unit, "basis": "measured", "source": "sources/s"}


def flop_class(claims: list[Any]) -> dict[str, Any]:
    history = [{"version": 1, "date": "2026-12-01", "change": "Created."}]
    return {
        "kind": "flop_class",
        "id": FLOP,
        "title": "x",
        "version": 1,
        "status": "draft",
        "history": history,
        "text": "x",
        "claims": claims,
    }


def knowledge_base(rows: list[Any], claims: list[Any]) -> tuple[KnowledgeBase, Record]:
    receipt = copy.deepcopy(SHIPPED_RECEIPT)
    receipt["results"] = rows
    kb = checked_kb({RECEIPT: receipt, FLOP: flop_class(claims)})
    flop = kb.get(FLOP)
    assert flop is not None
    return kb, flop


def findings(rows: list[Any], claims: list[Any]) -> list[Finding]:
    kb, flop = knowledge_base(rows, claims)
    return list(check_claims(kb, flop, "LG009", Severity.ERROR))


def schema_failures(rows: list[Any], claims: list[Any]) -> set[str]:
    """The records of the case that fail their schema."""
    kb, _ = knowledge_base(rows, claims)
    return {f.location.path for f in kb.run.schema or []}


SYMBOLS = st.one_of(st.from_regex(r"\A[A-Za-z][A-Za-z0-9]{0,2}\Z"), st.text(max_size=3))
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
BINDS = st.one_of(values, st.dictionaries(SYMBOLS, bindings, max_size=4))
CHANGES = st.dictionaries(SYMBOLS, bindings, min_size=1, max_size=2)
IDS = st.one_of(st.sampled_from(["c", "d2"]), st.text(max_size=5))
claims_strategy = st.lists(
    st.one_of(
        values,
        st.fixed_dictionaries(
            {"id": IDS, "kind": st.just("numeric"), "of": st.just("t"), "bind": BINDS},
            optional={"change": CHANGES, "expect": st.just({"value": 1})},
        ),
        st.fixed_dictionaries(
            {
                "id": IDS,
                "kind": st.just("prediction"),
                "of": st.just("t"),
                "bind": BINDS,
                "measured": bindings,
                "band": st.just({"rel": 0.25}),
            }
        ),
    ),
    max_size=3,
)


def numeric(bind: dict[str, Any]) -> dict[str, Any]:
    """A schema-valid numeric claim binding `bind`."""
    return {"id": "c", "kind": "numeric", "of": "t", "bind": bind, "expect": {"value": 1}}


@settings(deadline=None)
@given(rows_strategy, claims_strategy)
def test_any_claim_and_curve_gives_findings_never_a_crash(
    rows: list[Any], claims: list[Any]
) -> None:
    found = findings(rows, claims)
    failing = schema_failures(rows, claims)
    if f"records/{FLOP}.yaml" in failing or f"records/{RECEIPT}.yaml" in failing:
        assert found == []  # no view, no check: the record's SC001 finding is the report
    for finding in found:
        assert finding.code == "LG009"
        assert finding.location.pointer.startswith("/claims/")
        assert f"binds {RECEIPT}#results." in finding.message


VALID_ROWS = st.lists(
    st.fixed_dictionaries(
        {"gpus": st.integers(1, 8)},
        optional={
            "message_size": st.builds(q, st.integers(1, 10**6), st.sampled_from(["B", "KiB"])),
            "bus_bandwidth": st.builds(q, st.integers(1, 500), st.just("GB/s")),
            "latency": st.builds(q, st.integers(1, 500), st.just("us")),
            "algorithm": st.sampled_from(["ring", "nvls"]),
        },
    ),
    min_size=1,
    max_size=5,
)
ROW_BINDINGS = st.builds(
    lambda i, f: f"{RECEIPT}#results.{i}.{f}",
    st.integers(0, 5),
    st.sampled_from(["latency", "bus_bandwidth", "message_size", "gpus"]),
)
VALID_BINDS = st.dictionaries(
    st.from_regex(r"\A[a-z][0-9]?\Z"),
    st.one_of(ROW_BINDINGS, st.builds(q, st.integers(1, 10**6), st.just("B"))),
    max_size=4,
)


@settings(deadline=None)
@given(VALID_ROWS, st.lists(VALID_BINDS.map(numeric), max_size=2))
def test_schema_valid_claims_are_checked_and_each_finding_names_a_bound_row(
    rows: list[Any], claims: list[Any]
) -> None:
    claims = [{**c, "id": f"c{i}"} for i, c in enumerate(claims)]
    assert schema_failures(rows, claims) == set()  # the case is checked, not skipped
    for finding in findings(rows, claims):
        index = int(finding.location.pointer.split("/")[2])
        symbol = finding.location.pointer.split("/")[-1]
        binding = claims[index]["bind"][symbol]
        assert binding.rsplit(".", 1)[1] in ("latency", "bus_bandwidth")
        assert f"binds {binding}," in finding.message


def test_a_flop_class_that_fails_its_schema_is_not_checked() -> None:
    row = {"gpus": 8, "message_size": q(1024, "B"), "latency": q(5, "us")}
    claim = numeric({"t": f"{RECEIPT}#results.0.latency"})
    (finding,) = findings([row], [claim])
    assert finding.location.pointer == "/claims/0/bind/t"
    assert "no message size of 1024 B" in finding.message
    assert findings([row], [{**claim, "kind": "guess"}]) == []
    assert findings([{**row, "gpus": "eight"}], [claim]) == []  # the receipt fails it


def test_a_row_that_states_no_size_or_does_not_exist_prices_no_message() -> None:
    row = {"gpus": 8, "bus_bandwidth": q(400, "GB/s")}
    for index in (0, 7):
        binding = f"{RECEIPT}#results.{index}.bus_bandwidth"
        claim = {**numeric({}), "kind": "prediction", "measured": binding, "band": {"rel": 0.25}}
        del claim["expect"]
        (finding,) = findings([row], [claim])
        assert finding.location.pointer == "/claims/0/measured"
        assert "its row states no message size" in finding.message


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
    claim = numeric(
        {
            "n": q(named, "B"),
            "W": f"{RECEIPT}#results.{first}.bus_bandwidth",
            "W_2": f"{RECEIPT}#results.{second}.bus_bandwidth",
        }
    )
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
    claim = numeric({"n": q(value, unit), "t": f"{RECEIPT}#results.0.latency"})
    assert findings([row], [claim]) == []
    claim["bind"]["n"] = q(value * factor + 1, "B")
    assert len(findings([row], [claim])) == 1
