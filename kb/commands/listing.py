"""`kb list [--kind K] [--unverified | --unvalidated | --predictions]`: records, figures, models.

`--unverified` lists each figure (a quantity: a mapping with `value` and
`unit`) whose basis is `unverified`, with its record id and JSON pointer, and
ends with the count, so the README can say how many figures still lack a
source. `--unvalidated` lists each flop class without a prediction (no claim of
kind `prediction` or `bound` holds it to a measured receipt), with the reason its
`unvalidated:` field gives, and ends with both counts. `--predictions` lists every
prediction and bound held to a measured receipt, with predicted, measured, error,
band (a bound's side and tightness) and its state: `validated`, `bound holds`,
`contradicted (accepted: reason)` or `contradicted` (kb/equations/verdict.py
prediction_state), and ends with the count of each. `--end-to-end` lists every row of
every end-to-end receipt with the composed ledger's prediction at its conditions
(kb/ledger/endtoend.py): receipt, row, conditions, predicted, measured, error and state
(`validated`, `contradicted`, `not evaluable` with its reason, `calibration`), then the
validation rows' median |error| and share within the declared band.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from kb.commands._common import KIND, records_root, require_dir, root_option
from kb.model import KnowledgeBase

COLUMNS = ("id", "kind", "version", "status", "title")


@click.command()
@root_option
@click.option(
    "--kind",
    type=KIND,
    help="Only records of this kind (or folder: hardware for accelerator).",
)
@click.option("--unverified", is_flag=True, help="List every figure whose basis is unverified.")
@click.option(
    "--unvalidated",
    is_flag=True,
    help="List every flop class without a prediction against a measurement.",
)
@click.option(
    "--predictions",
    is_flag=True,
    help="List every prediction and bound against a measurement, with its state.",
)
@click.option(
    "--end-to-end",
    "end_to_end",
    is_flag=True,
    help="List every end-to-end receipt row with the composed prediction at its conditions.",
)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
def list_records(
    root: Path | None,
    kind: str | None,
    unverified: bool,
    unvalidated: bool,
    predictions: bool,
    end_to_end: bool,
    fmt: str,
) -> None:
    """List records, --unverified figures, --unvalidated classes or --predictions' states."""
    from kb.api import open_kb  # local: loads only when run

    root = records_root(root)
    require_dir(root)
    kb = open_kb(root, with_references=False)
    if end_to_end:
        click.echo(render_end_to_end(kb, fmt), nl=False)
    elif predictions:
        click.echo(_render_predictions(prediction_rows(kb, kind), fmt), nl=False)
    elif unvalidated:
        click.echo(_render_unvalidated(unvalidated_classes(kb), kb, fmt), nl=False)
    elif unverified:
        rows = list(unverified_figures(kb, kind))
        click.echo(_render_figures(rows, fmt), nl=False)
    else:
        rows = [record_row(r) for r in kb if kind is None or r.kind == kind]
        click.echo(_render_records(rows, fmt), nl=False)


def record_row(record: Any) -> dict[str, Any]:
    return {
        "id": record.id,
        "kind": record.kind,
        "version": record.version,
        "status": record.status,
        "title": record.title,
    }


def unverified_figures(kb: KnowledgeBase, kind: str | None = None) -> Iterator[dict[str, Any]]:
    """Every quantity whose basis is `unverified`: record id, pointer, value, unit."""
    from kb.rules._walk import quantities

    for record in kb:
        if kind is not None and record.kind != kind:
            continue
        for pointer, quantity in quantities(record.data):
            if quantity.get("basis") == "unverified":
                yield {
                    "id": record.id,
                    "pointer": pointer,
                    "value": quantity.get("value"),
                    "unit": quantity.get("unit"),
                }


def unvalidated_classes(kb: KnowledgeBase) -> list[dict[str, Any]]:
    """Every flop class with no prediction or bound (held to a measurement): id and reason."""
    from kb.equations.codes import MEASURED_KINDS

    rows = []
    for record in kb.of_kind("flop_class"):
        claims = record.data.get("claims")
        if not any(
            isinstance(c, dict) and c.get("kind") in MEASURED_KINDS
            for c in (claims if isinstance(claims, list) else [])
        ):
            reason = record.data.get("unvalidated")
            rows.append(
                {
                    "id": record.id,
                    "reason": reason if isinstance(reason, str) else "(no reason given)",
                }
            )
    return sorted(rows, key=lambda row: row["id"])


def _render_unvalidated(rows: list[dict[str, Any]], kb: KnowledgeBase, fmt: str) -> str:
    total = len(kb.of_kind("flop_class"))
    if fmt == "json":
        document = {"unvalidated": rows, "count": len(rows), "flop_classes": total}
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    summary = (
        f"{len(rows)} of {total} flop class{'es' if total != 1 else ''} without a "
        f"prediction; {total - len(rows)} with one\n"
    )
    return _table(rows, ("id", "reason")) + summary


def prediction_rows(kb: KnowledgeBase, kind: str | None = None) -> list[dict[str, str]]:
    """Every prediction and bound of the tree with its state, by record (kb's own analysis)."""
    from kb.equations.codes import MEASURED_KINDS
    from kb.equations.engine import analyse
    from kb.equations.verdict import prediction_state

    analysis = analyse(kb)
    rows = []
    for record in sorted(kb, key=lambda r: r.id):
        result = analysis.results.get(record.id)
        if (kind is not None and record.kind != kind) or result is None:
            continue
        for item in result.items:
            if item.section == "claim" and item.kind in MEASURED_KINDS:
                band = item.band + (f" (tightness {item.tightness})" if item.tightness else "")
                rows.append(
                    {
                        "id": record.id,
                        "prediction": item.id,
                        "kind": item.kind,
                        "predicted": item.computed,
                        "measured": item.claimed,
                        "error": item.error,
                        "band": band,
                        "state": prediction_state(item) if item.state else "",
                    }
                )
    return rows


def _render_predictions(rows: list[dict[str, str]], fmt: str) -> str:
    if fmt == "json":
        return json.dumps({"predictions": rows, "count": len(rows)}, indent=2) + "\n"
    counts: dict[str, int] = {}
    for row in rows:
        state = row["state"].split(" (")[0]
        state = "contradicted (accepted)" if "(accepted" in row["state"] else state
        counts[state] = counts.get(state, 0) + 1
    summary = ", ".join(f"{n} {state}" for state, n in sorted(counts.items()))
    columns = ("id", "prediction", "predicted", "measured", "error", "band", "state")
    return _table(rows, columns) + f"{len(rows)} predictions: {summary or 'none'}\n"


def _render_records(rows: list[dict[str, Any]], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(rows, indent=2, ensure_ascii=False) + "\n"
    return _table(rows, COLUMNS) + f"{len(rows)} record{'s' if len(rows) != 1 else ''}\n"


def _render_figures(rows: list[dict[str, Any]], fmt: str) -> str:
    if fmt == "json":
        document = {"figures": rows, "count": len(rows)}
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    records = len({r["id"] for r in rows})
    summary = f"{len(rows)} unverified figure{'s' if len(rows) != 1 else ''}"
    summary += f" in {records} record{'s' if records != 1 else ''}\n"
    return _table(rows, ("id", "pointer", "value", "unit")) + summary


def _table(rows: list[dict[str, Any]], columns: tuple[str, ...]) -> str:
    """Left-aligned columns; the last column is not padded."""
    if not rows:
        return ""
    cells = [[_cell(row.get(c)) for c in columns] for row in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(columns) - 1)]
    lines = []
    for line in cells:
        padded = [cell.ljust(width) for cell, width in zip(line, widths, strict=False)]
        lines.append("  ".join([*padded, line[-1]]).rstrip())
    return "\n".join(lines) + "\n"


def _cell(value: Any) -> str:
    text = "" if value is None else str(value)
    return " ".join(text.split())  # one line per row, whatever the title holds


def render_end_to_end(kb: KnowledgeBase, fmt: str) -> str:
    """Every end-to-end receipt row, its prediction and state, then the distribution."""
    from kb.checker import schema_stage
    from kb.ledger.endtoend import report_row, summary
    from kb.ledger.kept import end_to_end_rows

    schema_stage(kb)  # the composed ledger reads typed views
    results = end_to_end_rows(kb)  # kept between runs while nothing it reads changes
    rows = [report_row(r) for r in results]
    totals = summary(results)
    if fmt == "json":
        document = {"rows": rows, "summary": totals}
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    for row in rows:
        row["state"] = f"{row['state']}: {row['reason']}" if row["reason"] else row["state"]
    columns = ("receipt", "label", "conditions", "measures", "predicted", "measured", "error")
    table = _table(rows, (*columns, "state"))
    states = ", ".join(f"{n} {state}" for state, n in sorted(totals["states"].items()))
    return (
        table
        + f"{totals['rows']} end-to-end rows: {states}\n"
        + f"{totals['validation_rows']} validation rows: median |error| "
        + f"{totals['median_abs_error'] or 'n/a'}, {totals['within_band']} within "
        + f"±{totals['band']} ({totals['share_within_band'] or 'n/a'})\n"
    )
