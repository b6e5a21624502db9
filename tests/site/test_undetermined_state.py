"""The `undetermined` end-to-end state on the site: neutral, never green, with every layout.

A row whose source leaves its layout open (kb/data/end-to-end.json `unstated_layout`)
is shown in the explorer's receipts table (explore.js paints `state state-<state>`) with
its reason, which names each layout's prediction; the stylesheet paints the state as
the neutral states are painted, not as `validated`. The shipped rows of that kind are
declared best (`unstated_layout.reported`) and judged; the undetermined ones are shown
here with that declaration removed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kb.ledger import layouts
from kb.ledger.endtoend import CONTRADICTED, UNDETERMINED, VALIDATED
from kb.model import KnowledgeBase
from kb.sitegen.explorer import receipt_rows
from tests.conftest import SHIPPED_RECORDS

STYLE = Path(__file__).resolve().parents[2] / "kb" / "theme" / "static" / "style.css"


@pytest.fixture(scope="module")
def shipped_kb() -> KnowledgeBase:
    """The shipped records, schema-checked (the composed ledger reads typed views)."""
    from kb.api import open_kb
    from kb.checker import schema_stage

    kb = open_kb(SHIPPED_RECORDS, with_references=False)
    schema_stage(kb)
    return kb


def _rule_of(selector: str) -> str:
    """The declarations of the first rule whose selector list names `selector`."""
    css = re.sub(r"/\*.*?\*/", "", STYLE.read_text(encoding="utf-8"), flags=re.S)
    for selectors, body in re.findall(r"([^{}]+)\{([^{}]*)\}", css):
        if selector in [s.strip() for s in selectors.split(",")]:
            return body.strip()
    raise AssertionError(f"no rule for {selector}")


def test_undetermined_is_painted_neutral_not_green() -> None:
    state = _rule_of(f".state-{UNDETERMINED}")
    assert state == _rule_of(".state-consistent")  # the neutral states' rule
    assert "var(--measured)" not in state and "var(--measured)" in _rule_of(".state-validated")


def _without_best(monkeypatch: pytest.MonkeyPatch) -> None:
    """The declarations with no `reported: best` (no shipped row is undetermined with it)."""
    changed = {
        receipt: layouts.Declared(decl.rows, decl.layouts, decl.link_family)
        for receipt, decl in layouts.declarations().items()
    }
    monkeypatch.setattr(layouts, "declarations", lambda: changed)


def test_the_explorer_shows_each_layout_of_an_undetermined_row(
    shipped_kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    _without_best(monkeypatch)
    rows = receipt_rows(shipped_kb, "models/llama-2-70b")
    open_rows = [r for r in rows if r["state"] == UNDETERMINED]
    assert len(open_rows) == 3
    for row in open_rows:
        assert row["predicted"] == "" and row["error"] == ""
        # every layout is listed, in the band or outside it (dp8 is outside on one row since
        # session 24's hbm_streamed_rate)
        assert "consistent with " in row["reason"] and "outside the band: " in row["reason"]
        assert " dp8 " in row["reason"] and " tp8 " in row["reason"]
        assert "the source does not state which ran" in row["reason"]


def test_the_explorer_shows_kbs_best_layout_and_every_layout_of_a_best_row(
    shipped_kb: KnowledgeBase,
) -> None:
    """The same rows as shipped (`reported: best`): judged, painted by their state."""
    rows = receipt_rows(shipped_kb, "models/llama-2-70b")
    best = [r for r in rows if "kb's best is" in r["reason"]]
    assert [r["row"] for r in best] == [1, 3, 5]
    for row in best:
        assert row["state"] in (VALIDATED, CONTRADICTED) and row["predicted"] and row["error"]
        assert "the highest of dp8 " in row["reason"] and " tp8 " in row["reason"]
