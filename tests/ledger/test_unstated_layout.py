"""A row whose source states its devices but not its layout (end-to-end.json `unstated_layout`).

kb.ledger.endtoend prices such a row under every layout declared for its receipt, each
exactly as the row would be priced if its source stated that layout; the declared set is
held here equal to the planner's enumeration restricted by the engine (the ledger sits
below kb.plan and does not import it); kb.ledger.layouts.judge gives the verdict:
contradicted only when every layout misses on the same side (or none fits), else
`undetermined`, which is never validated and never a validation row. A receipt whose
source reports the best mapping (`reported: best`) is judged instead on kb's best layout
(kb.ledger.layouts.best): the maximum of the layouts' predictions for a rate.
"""

from __future__ import annotations

import copy
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kb.ledger import layouts
from kb.ledger.endtoend import (
    CALIBRATION,
    CONTRADICTED,
    NOT_EVALUABLE,
    UNDETERMINED,
    VALIDATED,
    _shown,
    distribution,
    evaluate_row,
    report_row,
)
from kb.model import KnowledgeBase
from kb.plan.enumerate import Space, enumerate_placements
from kb.plan.planner import reference_network
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
    for receipt, decl in layouts.declarations().items():
        record = kb.get(receipt)
        assert record is not None, receipt
        for index, row in enumerate(record.data["results"]):
            if layouts.declared(receipt, index, row) is not None:
                found.append((receipt, index))
        assert decl.rows is None or {i for r, i in found if r == receipt} == set(decl.rows)
    return found


def _admitted(kb: KnowledgeBase, receipt: str, index: int, linked: bool) -> tuple[str, ...]:
    """The planner's mappings of all the row's devices that the engine admits (the premise)."""
    record, row = _row(kb, receipt, index)
    model = kb.get(record.data["model"])
    assert model is not None
    experts = model.get("geometry.experts") if model.get("architecture") == "moe" else None
    batch = row.get("batch") or row["concurrency"]
    nodes = row.get("nodes", 1)
    space = Space(
        row["gpus"], nodes, model.get("geometry.layers"), batch, experts, True, {}, linked
    )
    ep = layouts.engine_ep()[record.data["engine"]["record"]]
    return tuple(
        p.name
        for p in enumerate_placements(space)[0]
        if (p.devices, p.nodes) == (row["gpus"], nodes)
        and p.ep in ((1, p.tp) if ep == "1 or tp" else (1,))
    )


def test_the_declared_rows_are_the_seventeen_without_a_layout(shipped: KnowledgeBase) -> None:
    rows = _declared_rows(shipped)
    assert len(rows) == 17 and {(TRT, 1), (TRT, 3), (TRT, 5)} <= set(rows)
    for receipt, index in rows:
        record, row = _row(shipped, receipt, index)
        assert "tp" not in row and row["gpus"] > 1


def test_the_declared_layouts_are_the_planners_and_the_engines(shipped: KnowledgeBase) -> None:
    """Premise: the set declared before pricing is the one kb.plan.enumerate gives today."""
    for receipt, index in _declared_rows(shipped):
        decl = layouts.declarations()[receipt]
        assert _admitted(shipped, receipt, index, linked=True) == decl.layouts
    assert layouts.declarations()[TT].layouts == ("tp16", "tp16-ep16")
    assert len(layouts.declarations()[TRT].layouts) == 10
    assert _admitted(shipped, TT, 0, linked=False) == ()  # every TT layout needs the link


def test_the_link_is_the_planners_reference_network(shipped: KnowledgeBase) -> None:
    hardware = "hardware/nvidia-h100-sxm"
    assumed = reference_network(shipped, hardware)
    assert assumed is not None
    assert layouts.reference_link(shipped, hardware, "InfiniBand") == assumed[0]
    assert layouts.reference_link(shipped, hardware, "Ethernet") is None


def test_a_layouts_name_is_its_degrees() -> None:
    assert layouts.degrees("dp2-tp4") == {"tp": 4, "pp": 1, "ep": 1, "dp": 2}
    assert layouts.degrees("tp16-ep16") == {"tp": 16, "pp": 1, "ep": 16, "dp": 1}
    with pytest.raises(ValueError, match="not a layout"):
        layouts.degrees("tp16-xx2")


def test_each_layout_is_priced_as_the_row_stating_it(shipped: KnowledgeBase) -> None:
    """No second path: a layout's row is evaluate_row on the row with its degrees written."""
    for receipt, index in ((TT, 0), (TT, 9), (TRT, 3)):
        record, row = _row(shipped, receipt, index)
        result = evaluate_row(shipped, record, index, row, False)
        assert result.layouts
        for name, priced in result.layouts:
            stated = {**row, **layouts.degrees(name), "nodes": row.get("nodes", 1)}
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
        best = layouts.declarations()[result.receipt].best is not None
        judged = (VALIDATED, CONTRADICTED) if best else (CONTRADICTED, UNDETERMINED)
        assert result.state in judged, result
        assert "layout unstated" in report_row(result)["conditions"]


BAND = Fraction(1, 4)


def _entry(name: str, error: str | None, fits: bool = True, why: str = "") -> layouts.Entry:
    return layouts.Entry(name, None if error is None else Fraction(error), fits, "x", why)


def test_a_one_sided_miss_is_the_nearest_layout() -> None:
    found = layouts.judge((_entry("a", "-0.5"), _entry("b", "-0.3")), BAND)
    assert (found.kind, found.nearest) == ("missed", "b")
    assert "outside the band under every layout" in found.reason


def test_misses_on_both_sides_or_one_within_are_open() -> None:
    both = layouts.judge((_entry("a", "-0.5"), _entry("b", "0.4")), BAND)
    within = layouts.judge((_entry("a", "-0.5"), _entry("b", "0.1")), BAND)
    for found in (both, within):
        assert found.kind == "open" and found.nearest is None
        assert "the source does not state which ran" in found.reason
    assert "consistent with b x" in within.reason and "outside the band: a x" in within.reason
    edge = layouts.judge((_entry("a", "-0.25"), _entry("b", "-0.5")), BAND)
    assert edge.kind == "open"  # -25% is within the band: the row is not a one-sided miss


def test_a_layout_that_does_not_fit_is_dropped_and_none_fitting_is_a_miss() -> None:
    kept = layouts.judge((_entry("a", None, fits=False), _entry("b", "-0.5")), BAND)
    assert kept.kind == "missed" and "does not fit: a" in kept.reason
    assert layouts.judge((_entry("a", None, fits=False),), BAND).kind == "unfit"


def test_an_unpriced_layout_keeps_a_one_sided_miss_open() -> None:
    found = layouts.judge((_entry("a", "-0.5"), _entry("b", None, why="no curve")), BAND)
    assert found.kind == "open" and "not priced: b (no curve)" in found.reason
    assert layouts.judge((_entry("b", None, why="no curve"),), BAND).kind == "unpriced"


def test_the_rows_states_follow_the_verdicts(
    shipped: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A miss is the nearest layout's row, contradicted; an open row shows no one prediction."""
    _not_best(monkeypatch)  # the v0.7a rows as they are without `reported: best`
    record, row = _row(shipped, TT, 0)
    missed = evaluate_row(shipped, record, 0, row, False)
    assert missed.state == CONTRADICTED and missed.validation
    nearest = min((r for _, r in missed.layouts), key=lambda r: abs(r.error or 0))
    assert (missed.predicted, missed.error) == (nearest.predicted, nearest.error)
    record, row = _row(shipped, TRT, 1)
    open_row = evaluate_row(shipped, record, 1, row, False)
    assert open_row.state == UNDETERMINED and not open_row.validation
    assert open_row.predicted is None and open_row.error is None
    assert distribution([open_row]).rows == 0
    calibrated = evaluate_row(shipped, record, 1, row, True)
    assert calibrated.state == CALIBRATION and not calibrated.validation


def test_a_declared_family_the_reference_network_is_not_leaves_the_row_unpriced(
    shipped: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    changed = {**layouts.declarations(), TT: layouts.Declared(None, ("tp16",), "Ethernet")}
    monkeypatch.setattr(layouts, "declarations", lambda: changed)
    record, row = _row(shipped, TT, 0)
    found = evaluate_row(shipped, record, 0, row, False)
    assert found.state == NOT_EVALUABLE and found.predicted is None and not found.layouts
    assert "the source does not state the layout" in found.reason


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


# ---- `reported: best`: the source reports the best layout (unstated_layout.reported) ----


def _not_best(monkeypatch: pytest.MonkeyPatch) -> None:
    """The declarations as they would be if no source reported the best layout."""
    changed = {
        receipt: layouts.Declared(decl.rows, decl.layouts, decl.link_family)
        for receipt, decl in layouts.declarations().items()
    }
    monkeypatch.setattr(layouts, "declarations", lambda: changed)


def _valued(name: str, value: str | None, fits: bool = True) -> layouts.Entry:
    return layouts.Entry(
        name, None, fits, "x", "no curve", None if value is None else Fraction(value)
    )


HIGHER = layouts.Best(True, "'max config'")


def test_only_the_v07a_eight_gpu_rows_are_declared_best() -> None:
    best = {r: d.best for r, d in layouts.declarations().items() if d.best is not None}
    assert set(best) == {TRT} and best[TRT] == layouts.Best(True, "'8xH200 = max TP/PP/DP config'")
    assert layouts.declarations()[TRT].rows == frozenset({1, 3, 5})


def test_a_reported_entry_that_is_not_a_best_is_refused() -> None:
    assert layouts._best(None) is None
    assert layouts._best({"value": "best", "better": "lower", "words": "w"}) == layouts.Best(
        False, "w"
    )
    with pytest.raises(ValueError, match="value: best"):
        layouts._best({"value": "median", "better": "higher", "words": "w"})
    with pytest.raises(ValueError, match="higher or lower"):
        layouts._best({"value": "best", "better": "up", "words": "w"})


def test_best_takes_the_highest_rate_or_the_lowest_time_of_the_fitting_layouts() -> None:
    entries = (_valued("a", "2"), _valued("b", "5"), _valued("c", None, fits=False))
    found = layouts.best(entries, HIGHER)
    assert (found.kind, found.nearest) == ("best", "b")
    assert "kb's best is b, the highest of a x, b x; does not fit: c" in found.reason
    lowest = layouts.best(entries, layouts.Best(False, "'fastest'"))
    assert (lowest.kind, lowest.nearest) == ("best", "a") and "the lowest of" in lowest.reason


def test_best_cannot_be_taken_with_a_fitting_layout_unpriced() -> None:
    partly = layouts.best((_valued("a", "2"), _valued("b", None)), HIGHER)
    assert (partly.kind, partly.nearest) == ("open", None) and "not priced: b (no curve)" in (
        partly.reason
    )
    assert layouts.best((_valued("b", None),), HIGHER).kind == "unpriced"
    assert layouts.best((_valued("a", None, fits=False),), HIGHER).kind == "unfit"


@given(st.lists(st.fractions(min_value=Fraction(1, 1000), max_value=1000), min_size=1, max_size=12))
def test_the_best_is_the_maximum_of_the_layouts_predictions(values: list[Fraction]) -> None:
    entries = tuple(_valued(f"l{i}", str(v)) for i, v in enumerate(values))
    found = layouts.best(entries, HIGHER)
    chosen = next(e for e in entries if e.name == found.nearest)
    assert chosen.value == max(values) and all(e.value is not None for e in entries)
    assert chosen == next(e for e in entries if e.value == max(values))  # the first, on a tie


def test_a_best_row_is_judged_on_kbs_best_layout(shipped: KnowledgeBase) -> None:
    """Passing fixture: the shipped 128/128 row, within the band on the maximum."""
    record, row = _row(shipped, TRT, 1)
    found = evaluate_row(shipped, record, 1, row, False)
    fitting = [(n, r) for n, r in found.layouts if r.predicted is not None]
    top = max(fitting, key=lambda pair: pair[1].predicted or 0)
    assert len(fitting) == len(found.layouts) == 10
    assert (found.predicted, found.error) == (top[1].predicted, top[1].error)
    assert found.state == VALIDATED and found.validation and abs(found.error or 1) <= BAND
    assert f"kb's best is {top[0]}, the highest of" in found.reason
    assert all(f"{n} {_shown(r)}" in found.reason for n, r in found.layouts)
    report = report_row(found)
    assert report["state"] == VALIDATED and len(report["layouts"]) == 10
    assert "layout unstated" in report["conditions"]


@pytest.mark.parametrize("scale, side", [(Fraction(3), -1), (Fraction(1, 10), 1)])
def test_a_best_row_missing_on_one_side_is_contradicted(
    shipped: KnowledgeBase, scale: Fraction, side: int
) -> None:
    """Failing fixture: the measurement moved so that every layout misses on one side."""
    record, row = _row(shipped, TRT, 1)
    shipped_row = evaluate_row(shipped, record, 1, row, False)
    assert shipped_row.measured is not None
    measured = shipped_row.measured * scale
    row["value"] = {**row["value"], "value": float(measured)}
    found = evaluate_row(shipped, record, 1, row, False)
    errors = [r.error for _, r in found.layouts if r.error is not None]
    assert len(errors) == 10 and all(e * side > BAND for e in errors)  # every layout, one side
    assert found.state == CONTRADICTED and found.validation
    assert found.error == max(errors)  # the maximum's error, not the nearest layout's
    assert found.reason.endswith("outside the band")


def test_a_row_not_declared_best_stays_undetermined(
    shipped: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    _not_best(monkeypatch)
    record, row = _row(shipped, TRT, 1)
    found = evaluate_row(shipped, record, 1, row, False)
    assert found.state == UNDETERMINED and found.predicted is None and not found.validation
    assert "the source does not state which ran" in found.reason


def test_every_best_row_shows_the_maximum_of_the_layouts_it_lists() -> None:
    """Property, on the shipped rows: the row's prediction is the max of its listed layouts'."""
    best_rows = [
        r
        for r in end_to_end_results()
        if r.layouts and (d := layouts.declarations().get(r.receipt)) and d.best is not None
    ]
    assert {r.index for r in best_rows} == {1, 3, 5}
    for result in best_rows:
        predictions = [r.predicted for _, r in result.layouts if r.predicted is not None]
        assert predictions and result.predicted == max(predictions)
        assert result.state in (VALIDATED, CONTRADICTED)
