"""A row whose source states its devices but not its layout (end-to-end.json `unstated_layout`).

kb.ledger.layouts prices such a row under every layout the planner and the engine
admit, each exactly as the row would be priced if its source stated that layout; the
set is the one declared before any row was priced; the verdict is contradicted only
when every layout misses on the same side (or none fits), else `undetermined`, which
is never validated and never a validation row.
"""

from __future__ import annotations

import copy
from fractions import Fraction
from typing import Any

import pytest

from kb.ledger import layouts
from kb.ledger.endtoend import (
    CALIBRATION,
    CONTRADICTED,
    NOT_EVALUABLE,
    UNDETERMINED,
    VALIDATED,
    RowResult,
    distribution,
    evaluate_row,
    report_row,
)
from kb.model import KnowledgeBase
from tests.shipped_outputs import ONE_WORKER, end_to_end_json, end_to_end_results

TT = "receipts/tt-sglang-deepseek-r1-16xh100-two-node-batch1"
TRT = "receipts/trtllm-v0.7a-llama-2-70b-h200-throughput"
pytestmark = ONE_WORKER


def _row(kb: KnowledgeBase, receipt: str, index: int) -> tuple[Any, dict[str, Any]]:
    record = kb.get(receipt)
    assert record is not None
    return record, copy.deepcopy(dict(record.data["results"][index]))


def _declared_rows(kb: KnowledgeBase) -> list[tuple[str, int]]:
    found = []
    for receipt, decl in layouts.rules().receipts.items():
        record = kb.get(receipt)
        assert record is not None, receipt
        for index, row in enumerate(record.data["results"]):
            if layouts.declared(receipt, index, row) is not None:
                found.append((receipt, index))
        assert decl.rows is None or {i for r, i in found if r == receipt} == set(decl.rows)
    return found


def test_the_declared_rows_are_the_seventeen_without_a_layout(shipped: KnowledgeBase) -> None:
    rows = _declared_rows(shipped)
    assert len(rows) == 17 and {(TRT, 1), (TRT, 3), (TRT, 5)} <= set(rows)
    for receipt, index in rows:
        record, row = _row(shipped, receipt, index)
        assert "tp" not in row and row["gpus"] > 1


def test_the_declared_layouts_are_the_planners_and_the_engines(shipped: KnowledgeBase) -> None:
    """Premise: the set declared before pricing is the one the enumeration gives today."""
    for receipt, index in _declared_rows(shipped):
        record, row = _row(shipped, receipt, index)
        decl = layouts.declared(receipt, index, row)
        assert decl is not None
        row["hardware"] = record.data["hardware"][0]
        found = layouts.admitted(shipped, record, row, linked=True)
        assert not isinstance(found, str), found
        assert tuple(p.name for p in found) == decl.layouts
    assert layouts.rules().receipts[TT].layouts == ("tp16", "tp16-ep16")
    assert len(layouts.rules().receipts[TRT].layouts) == 10


def test_sglang_admits_expert_parallelism_only_over_the_whole_tp_group(
    shipped: KnowledgeBase,
) -> None:
    record, row = _row(shipped, TT, 0)
    row["hardware"] = "hardware/nvidia-h100-sxm"
    found = layouts.admitted(shipped, record, row, linked=True)
    assert not isinstance(found, str)
    assert {p.ep for p in found} == {1, 16} and all(p.tp == 16 for p in found)
    assert layouts.admitted(shipped, record, row, linked=False) == ()  # tp16 needs the link


def test_each_layout_is_priced_as_the_row_stating_it(shipped: KnowledgeBase) -> None:
    """No second path: a layout's row is evaluate_row on the row with its degrees written."""
    for receipt, index in ((TT, 0), (TT, 9), (TRT, 3)):
        record, row = _row(shipped, receipt, index)
        result = evaluate_row(shipped, record, index, row, False)
        assert result.layouts
        for name, priced in result.layouts:
            degrees: dict[str, str] = {}
            stated = dict(row)
            for part in name.split("-"):
                degrees[part[:2]] = part[2:]
            stated.update({d: int(degrees.get(d, 1)) for d in ("tp", "pp", "ep", "dp")})
            stated["nodes"] = row.get("nodes", 1)
            if receipt == TT:
                stated["inter_link"] = "interconnects/infiniband-ndr"
            direct = evaluate_row(shipped, record, index, stated, False)
            assert priced.predicted == direct.predicted and priced.state == direct.state
            assert priced.assumed[0].startswith(f"layout {name}:")


def test_every_declared_row_has_a_composed_prediction(shipped: KnowledgeBase) -> None:
    """Issue 35's first acceptance item, for these rows: each shows a layout's prediction."""
    for result in end_to_end_results():
        if layouts.declared(result.receipt, result.index, {}) is None:
            continue
        assert result.layouts and any(r.predicted is not None for _, r in result.layouts)
        assert result.state in (CONTRADICTED, UNDETERMINED), result
        assert "layout unstated" in report_row(result)["conditions"]


def _priced(error: str | None, reason: str = "") -> RowResult:
    err = None if error is None else Fraction(error)
    return RowResult(
        receipt=TT,
        index=0,
        label="row",
        metric="",
        measures="tpot",
        conditions={"tp": 16},
        predicted=None if err is None else (1 + err) * 10,
        measured=Fraction(10),
        unit="s",
        error=err,
        state=VALIDATED if err is not None and abs(err) <= Fraction(1, 4) else CONTRADICTED,
        reason=reason,
    )


def test_a_one_sided_miss_is_contradicted_with_the_nearest_layout() -> None:
    found = layouts.verdict((("a", _priced("-0.5")), ("b", _priced("-0.3"))), False)
    assert found.state == CONTRADICTED and found.error == Fraction(-3, 10)
    assert "the nearest, b," in found.reason and found.validation
    assert [n for n, _ in found.layouts] == ["a", "b"]


def test_misses_on_both_sides_or_one_within_are_undetermined() -> None:
    both = layouts.verdict((("a", _priced("-0.5")), ("b", _priced("0.4"))), False)
    within = layouts.verdict((("a", _priced("-0.5")), ("b", _priced("0.1"))), False)
    for found in (both, within):
        assert found.state == UNDETERMINED and found.error is None and not found.validation
        assert "the source does not state which ran" in found.reason
    assert "consistent with b" in within.reason and "outside the band: a" in within.reason
    assert distribution([both, within]).rows == 0


def test_a_layout_that_does_not_fit_is_dropped_and_none_fitting_is_a_miss() -> None:
    unfit = _priced(None, "measured, but kb finds it does not fit (needs 90 GiB)")
    kept = layouts.verdict((("a", unfit), ("b", _priced("0.1"))), False)
    assert kept.state == UNDETERMINED and "does not fit: a" in kept.reason
    none = layouts.verdict((("a", unfit), ("b", unfit)), False)
    assert none.state == CONTRADICTED and none.error is None


def test_an_unpriced_layout_keeps_a_one_sided_miss_undetermined() -> None:
    unpriced = _priced(None, "no curve")
    unpriced = RowResult(**{**unpriced.__dict__, "measured": None, "state": NOT_EVALUABLE})
    found = layouts.verdict((("a", _priced("-0.5")), ("b", unpriced)), False)
    assert found.state == UNDETERMINED and "not priced: b (no curve)" in found.reason
    alone = layouts.verdict((("b", unpriced),), False)
    assert alone.state == NOT_EVALUABLE


def test_a_calibration_row_stays_calibration() -> None:
    found = layouts.verdict((("a", _priced("-0.5")), ("b", _priced("0.1"))), True)
    assert found.state == CALIBRATION and not found.validation


def test_a_declared_set_the_enumeration_does_not_give_is_not_priced(
    shipped: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    rules = layouts.rules()
    changed = {**rules.receipts, TT: layouts.Declared(None, ("tp16",), "InfiniBand")}
    monkeypatch.setattr(layouts, "rules", lambda: layouts.Rules(changed, rules.engine_ep))
    record, row = _row(shipped, TT, 0)
    found = evaluate_row(shipped, record, 0, row, False)
    assert found.state == NOT_EVALUABLE and "declare the set again" in found.reason


def test_the_link_is_taken_only_of_the_family_the_source_names(
    shipped: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    rules = layouts.rules()
    changed = {**rules.receipts, TT: layouts.Declared(None, ("tp16", "tp16-ep16"), "Ethernet")}
    monkeypatch.setattr(layouts, "rules", lambda: layouts.Rules(changed, rules.engine_ep))
    record, row = _row(shipped, TT, 0)
    found = evaluate_row(shipped, record, 0, row, False)
    assert found.state == NOT_EVALUABLE and found.predicted is None


def test_the_json_shows_every_layout_only_on_these_rows() -> None:
    document = end_to_end_json()
    with_layouts = [r for r in document["rows"] if "layouts" in r]
    assert len(with_layouts) == 17
    for row in with_layouts:
        assert all(inner["layout"] and "layouts" not in inner for inner in row["layouts"])
        if row["state"] == UNDETERMINED:
            assert row["predicted"] == "" and row["exact"]["error"] is None
    assert document["summary"]["states"].get(UNDETERMINED, 0) == sum(
        1 for r in document["rows"] if r["state"] == UNDETERMINED
    )
