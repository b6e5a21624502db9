"""EV003 on arbitrary row values: never raises, and fires exactly when stated degrees misfit."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kb.rules.receipt_parallel_degree_mismatch import _row_findings

ODD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-4, 64),
    st.floats(allow_nan=True),
    st.text(max_size=4),
    st.just([]),
    st.just({}),
)


def _positive(value: Any) -> int | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= 1
    return value if ok else None


def _expected(row: dict[str, Any]) -> set[str]:
    """The contract, written out apart from the rule: which keys a finding points at."""
    gpus, tp, pp, ep = (_positive(row.get(k)) for k in ("gpus", "tp", "pp", "ep"))
    if gpus is None:
        return set()
    keys = set()
    if (tp or pp) and gpus % ((tp or 1) * (pp or 1)) != 0:
        keys.add("tp" if tp else "pp")
    if ep and gpus % ep != 0:
        keys.add("ep")
    return keys


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["gpus", "tp", "pp", "ep", "label"]), ODD))
def test_findings_match_the_divisibility_contract(row: dict[str, Any]) -> None:
    findings = list(_row_findings("records/receipts/x.yaml", 3, row))
    pointers = {f.location.pointer for f in findings}
    assert pointers == {f"/results/3/{key}" for key in _expected(row)}
    assert all(f.code == "EV003" for f in findings)


def test_a_tp8_row_on_four_gpus_names_both_numbers() -> None:
    (finding,) = _row_findings("records/receipts/x.yaml", 0, {"gpus": 4, "tp": 8})
    assert finding.message == "results/0: tp=8 needs a multiple of 8 GPUs, the row says 4"
