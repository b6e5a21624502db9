"""The ledger section of a placement page, and its stacked chart, from `kb.ledger`.

Feasibility comes first: an option that cannot hold the state is shown as an
infeasible counterfactual with its shortfall, no ledger rows and no ratio. For
feasible options every ledger row is shown with its provenance, and the chart
stacks the rows per option (infeasible options are marked, not drawn).
"""

from __future__ import annotations

from typing import Any

from kb.model import KnowledgeBase, Record
from kb.sitegen.charts import Bar, Chart, stacked_bars


def ledger_context(
    record: Record, kb: KnowledgeBase
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Build the ledger section and the chart list of a placement record."""
    from kb.ledger.analysis import analyze_placement
    from kb.ledger.inputs import Unresolved

    try:
        analysis = analyze_placement(record, kb, with_break_even=True)
    except Exception as exc:  # the page must still build; the note says what failed
        return not_computed(f"The ledger could not be computed ({type(exc).__name__}: {exc})."), []
    if isinstance(analysis, Unresolved):
        gaps = "; ".join(f"{g.pointer}: {g.message}" for g in analysis.gaps)
        return not_computed(f"The ledger is incomplete, so nothing is computed: {gaps}"), []
    return ledger_sections(analysis), [_chart(record, analysis)]


def not_computed(note: str) -> dict[str, Any]:
    """The section of a ledger that was not computed: every key ledger_sections gives, empty."""
    return {
        "shown": True,
        "note": note,
        "envelope": "",
        "candidates": [],
        "comparisons": [],
        "break_even": [],
        "break_even_note": "",
    }


def ledger_sections(analysis: Any) -> dict[str, Any]:
    """Everything `kb ledger` prints, as page data, through kb.ledger.render's own text."""
    from kb.ledger.render import NO_BREAK_EVEN, break_even_parts, envelope_line

    break_evens = [break_even_parts(be) for be in analysis.break_evens]
    return {
        "shown": True,
        "note": "",
        "envelope": envelope_line(analysis).removeprefix("envelope: "),
        "candidates": [_side(side, index == 0) for index, side in enumerate(analysis.sides)],
        "comparisons": [_comparison(c) for c in analysis.comparisons],
        "break_even": [
            {"headline": headline, "sides": [{"side": s, "names": n} for s, n in sides]}
            for headline, sides in break_evens
        ],
        "break_even_note": "" if break_evens else NO_BREAK_EVEN,
    }


def _side(side: Any, is_reference: bool) -> dict[str, Any]:
    from kb.ledger.quantities import amount
    from kb.ledger.render import ROW_LABELS, device_line, row_value_text, transfer_line

    fit, option = side.feasibility, side.option
    rows = []
    if side.ledger is not None:
        rows = [
            {
                "component": ROW_LABELS.get(row.name, row.name),
                "value": row_value_text(row),
                "sort": _sort_key(row.value),
                "formula": row.formula,
                "basis": row.provenance,
                "receipts": list(row.receipts),
            }
            for row in side.ledger.rows
        ]
    transfers = [
        {"text": transfer_line(t), "pricing": t.pricing, "basis": t.provenance}
        for t in (side.ledger.transfers if side.ledger is not None else ())
    ]
    role = "reference" if is_reference else "candidate"
    return {
        "name": f"{option.name} ({role})",
        "anchor": f"option-{_slug(option.name)}",
        "feasible": fit.feasible,
        "strategies": ", ".join(option.strategies) or "none",
        "links": ", ".join(option.links) or "none",
        "devices": [device_line(d) for d in fit.devices],
        "reason": ""
        if fit.feasible
        else (
            "Infeasible counterfactual: "
            + "; ".join(fit.shortfalls())
            + ". No ledger, speedup or penalty ratio is reported."
        ),
        "headroom": amount(fit.headroom, "B"),
        "rows": rows,
        "transfers": transfers,
        "total": amount(side.ledger.total, "s") if side.ledger is not None else "",
    }


def _comparison(comparison: Any) -> dict[str, Any]:
    from kb.ledger.render import comparison_table, efficiency_text

    table = comparison_table(comparison) if not comparison.withheld else [[]]
    dims = [
        {"cells": cells, "better": d.better}
        for cells, d in zip(table[1:], comparison.dimensions, strict=True)
    ]
    efficiency = efficiency_text(comparison).rpartition(" = ")[2]
    return {
        "title": f"{comparison.candidate} against {comparison.reference}",
        "withheld": comparison.withheld,
        "efficiency": efficiency,
        "head": table[0],
        "dims": dims,
    }


def _sort_key(value: Any) -> str:
    return repr(float(value))


def _chart(record: Record, analysis: Any) -> dict[str, Any]:
    from kb.ledger.render import ROW_LABELS
    from kb.numfmt import significant

    bars = []
    for side in analysis.sides:
        if side.ledger is None:
            bars.append(Bar(side.option.name, (), "; ".join(side.feasibility.shortfalls())))
            continue
        parts = tuple(
            (ROW_LABELS.get(r.name, r.name), float(r.value) * 1000) for r in side.ledger.rows
        )
        bars.append(Bar(side.option.name, parts))
    names = ", ".join(b.name + (" (infeasible)" if b.infeasible else "") for b in bars)
    chart = Chart(
        anchor="chart-" + record.id.replace("/", "-"),
        title=f"Placement-tax ledger per option ({record.title})",
        desc=(
            f"Stacked ledger components in milliseconds for each option: {names}. "
            "Infeasible options are marked and carry no bar."
        ),
        x_label="option",
        y_label="time per step (ms)",
        caption="Ledger components stacked per option; hover a segment for its value.",
        table={
            "head": ["option", "component", "ms"],
            "rows": [
                [side.option.name, ROW_LABELS.get(r.name, r.name), significant(r.value * 1000)]
                for side in analysis.sides
                if side.ledger is not None
                for r in side.ledger.rows
            ],
        },
    )
    return stacked_bars(chart, bars)


def _slug(text: str) -> str:
    return "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else "-" for c in text)
