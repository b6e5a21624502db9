"""The site reads typed views: a schema-invalid flop class says so, a valid one is unchanged."""

from __future__ import annotations

from kb.equations.engine import analyse
from kb.kinds import views
from kb.model import KnowledgeBase
from kb.sitegen.calculator import calculator
from kb.sitegen.equations_view import UNCHECKED_SCHEMA, equations_context
from kb.sitegen.flop_chart import NO_VIEW, chart_or_reason
from tests.kinds.helpers import checked_kb, shipped

FLOP = "flops/tp-prefill-comm-bound"


def _kb(flop: dict[str, object]) -> KnowledgeBase:
    """The flop class with every record it names (accelerators, links, receipts, sources)."""
    from kb.checker import build_knowledge_base
    from tests.kinds.helpers import RECORDS

    every = build_knowledge_base(RECORDS)
    records = {r.id: dict(r.data) for r in every}
    records[FLOP] = flop
    kb = checked_kb(records)
    analyse(kb)
    return kb


def test_a_valid_flop_class_shows_its_sections_chart_and_calculator() -> None:
    kb = _kb(shipped(FLOP))
    record = kb.get(FLOP)
    assert record is not None and views(kb).passed(record)
    context = equations_context(record, kb)
    assert context["note"] == ""
    assert [c["id"] for c in context["claims"]] == [c["id"] for c in shipped(FLOP)["claims"]]
    assert chart_or_reason(record, kb)[0]
    assert calculator(record, kb) is not None


def test_a_schema_invalid_flop_class_says_so_and_draws_nothing() -> None:
    broken = shipped(FLOP)
    broken["symbols"] = ["not", "a", "mapping"]
    kb = _kb(broken)
    record = kb.get(FLOP)
    assert record is not None
    assert any(f.location.path == record.path for f in kb.run.schema or [])
    context = equations_context(record, kb)
    assert context["note"] == UNCHECKED_SCHEMA
    assert context["shown"]  # the section is there, to say why it is empty
    assert context["symbols"] == context["equations"] == context["claims"] == []
    assert chart_or_reason(record, kb) == ([], NO_VIEW)  # no chart, and the page says why
    assert calculator(record, kb) is None
