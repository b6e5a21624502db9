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
        analysis = analyze_placement(record, kb)
    except Exception as exc:  # the page must still build; the note says what failed
        note = f"The ledger could not be computed ({type(exc).__name__}: {exc})."
        return {"shown": True, "note": note, "candidates": [], "comparisons": []}, []
    if isinstance(analysis, Unresolved):
        gaps = "; ".join(f"{g.pointer}: {g.message}" for g in analysis.gaps)
        note = f"The ledger is incomplete, so nothing is computed: {gaps}"
        return {"shown": True, "note": note, "candidates": [], "comparisons": []}, []
    sides = [_side(side, index == 0) for index, side in enumerate(analysis.sides)]
    context = {
        "shown": True,
        "note": "",
        "candidates": sides,
        "comparisons": [_comparison(c) for c in analysis.comparisons],
    }
    return context, [_chart(record, analysis)]


def _side(side: Any, is_reference: bool) -> dict[str, Any]:
    from kb.ledger.quantities import amount
    from kb.ledger.render import ROW_LABELS

    fit = side.feasibility
    rows = []
    if side.ledger is not None:
        rows = [
            {
                "component": ROW_LABELS.get(row.name, row.name),
                "value": amount(row.value, "s"),
                "formula": row.formula,
                "provenance": _provenance(row),
            }
            for row in side.ledger.rows
        ]
    role = "reference" if is_reference else "candidate"
    return {
        "name": f"{side.option.name} ({role})",
        "anchor": f"option-{_slug(side.option.name)}",
        "feasible": fit.feasible,
        "reason": ""
        if fit.feasible
        else (
            "Infeasible counterfactual: "
            + "; ".join(fit.shortfalls())
            + ". No ledger, speedup or penalty ratio is reported."
        ),
        "headroom": amount(fit.headroom, "B"),
        "rows": rows,
        "total": amount(side.ledger.total, "s") if side.ledger is not None else "",
    }


def _provenance(row: Any) -> str:
    receipts = f" ({', '.join(row.receipts)})" if row.receipts else ""
    return f"{row.provenance}{receipts}"


def _comparison(comparison: Any) -> dict[str, Any]:
    from kb.ledger.quantities import number

    dims = [
        {
            "dimension": f"{d.name} ({d.unit}, {d.better} is better)",
            "delta": "\u2014" if d.delta is None else number(d.delta),
            "ratio": "\u2014" if d.ratio is None else number(d.ratio),
        }
        for d in comparison.dimensions
    ]
    efficiency = "" if comparison.efficiency is None else number(comparison.efficiency)
    return {
        "title": f"{comparison.candidate} against {comparison.reference}",
        "withheld": comparison.withheld,
        "efficiency": efficiency,
        "dims": dims,
    }


def _chart(record: Record, analysis: Any) -> dict[str, Any]:
    from kb.ledger.render import ROW_LABELS

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
            "rows": [[b.name, name, f"{value:.6g}"] for b in bars for name, value in b.parts],
        },
    )
    return stacked_bars(chart, bars)


def _slug(text: str) -> str:
    return "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else "-" for c in text)
