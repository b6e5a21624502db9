"""EV003 on every schema-valid row: fires exactly when stated degrees misfit the GPU count.

The rule reads the receipt's typed view (kb.kinds.receipt): a row the schema refuses
(a degree that is a string, zero, a float) gives SC001 and no view, so EV003 never
sees it (the rule cases hold that end to end).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kb.kinds.receipt import ResultRow
from kb.rules.receipt_parallel_degree_mismatch import _row_findings

DEGREE = st.one_of(st.none(), st.integers(1, 64))  # what the schema lets a row state


def row_of(
    index: int, gpus: int | None, tp: int | None, pp: int | None, ep: int | None
) -> ResultRow:
    return ResultRow(index, gpus, tp, pp, ep, None, None, None, None, None, None)


def _expected(gpus: int | None, tp: int | None, pp: int | None, ep: int | None) -> set[str]:
    """The contract, written out apart from the rule: which keys a finding points at."""
    if gpus is None:
        return set()
    keys = set()
    if (tp or pp) and gpus % ((tp or 1) * (pp or 1)) != 0:
        keys.add("tp" if tp else "pp")
    if ep and gpus % ep != 0:
        keys.add("ep")
    return keys


@settings(max_examples=300, deadline=None)
@given(DEGREE, DEGREE, DEGREE, DEGREE)
def test_findings_match_the_divisibility_contract(
    gpus: int | None, tp: int | None, pp: int | None, ep: int | None
) -> None:
    findings = list(_row_findings("records/receipts/x.yaml", row_of(3, gpus, tp, pp, ep)))
    pointers = {f.location.pointer for f in findings}
    assert pointers == {f"/results/3/{key}" for key in _expected(gpus, tp, pp, ep)}
    assert all(f.code == "EV003" for f in findings)


def test_a_tp8_row_on_four_gpus_names_both_numbers() -> None:
    (finding,) = _row_findings("records/receipts/x.yaml", row_of(0, 4, 8, None, None))
    assert finding.message == "results/0: tp=8 needs a multiple of 8 GPUs, the row says 4"
