"""A plan as text (for people) or JSON (kb/data/output/plan.v1.schema.json, exact fractions).

Text: the question; 1. feasibility (each infeasible option with the GiB per device
it needs and has; then those kb could not price, with kb's words); 2. every feasible
option on every dimension in one table, its Pareto count and SLO flags; 3. the
Pareto front of each pair of dimensions; 4. each feasible option's ledger rows with
their provenance; 5. with --sweep, the preferred option per dimension at each value
and where it changes. Values are rounded to four significant digits (kb/numfmt.py);
JSON carries each exactly as `"p/q"` beside its unit.
"""

from __future__ import annotations

import json
from collections import defaultdict
from fractions import Fraction
from typing import Any

from kb.ledger.paging import gib
from kb.ledger.quantities import amount, number
from kb.ledger.render import ROW_LABELS, exact
from kb.plan.planner import BY_KEY, DIMENSIONS, Option, Plan
from kb.plan.sweep import Sweep


def cell(key: str, value: Fraction | None) -> str:
    """One dimension's value as the table prints it."""
    if value is None:
        return "n/a"
    unit = BY_KEY[key].unit
    if unit == "s":
        return amount(value, "s")
    if key == "exposed_share":
        return f"{number(value * 100)}%"
    if key in ("devices", "max_batch", "max_context"):
        return str(int(value))
    if key == "energy_per_token":
        return amount(value, "J")
    return number(value)


def _question(result: Plan) -> list[str]:
    q = result.query
    per_node = q.count // q.nodes if q.nodes else q.count
    where = f"{q.count} x {q.hardware}" + (
        f" ({q.nodes} nodes of {per_node})" if q.nodes > 1 else ""
    )
    if q.input_tokens is not None:
        lengths = f"prompt {q.input_tokens} + output {q.output_tokens or 1} tokens"
        if q.context is not None:
            lengths += f", decode context {q.context}"
    else:
        lengths = f"decode context {q.context}"
    links = ", ".join(
        f"{name} {value}"
        for name, value in (
            ("inside a node", q.intra_link or "the accelerator's own link"),
            ("between nodes", q.inter_link if q.nodes > 1 else None),
        )
        if value
    )
    counts = {s: len(result.of(s)) for s in ("infeasible", "unpriced", "feasible")}
    return [
        f"kb plan {q.model} on {where}",
        f"batch {q.batch}, {lengths}; weights {q.weight_precision}, KV cache "
        f"{q.kv_precision}; engine {q.engine or 'none named'}; {links}",
        f"{len(result.options)} placements: {counts['infeasible']} do not fit, "
        f"{counts['unpriced']} could not be priced, {counts['feasible']} feasible; "
        f"{len(result.excluded)} not enumerated",
    ] + [f"note: {n}" for n in result.notes]


def text(result: Plan, sweep: Sweep | None = None) -> str:
    lines = _question(result)
    lines += ["", "1. Feasibility (state per device against capacity; checked first)"]
    infeasible, unpriced = result.of("infeasible"), result.of("unpriced")
    if not infeasible:
        lines.append("  every priced placement fits")
    for o in infeasible:
        lines.append(f"  {o.name} ({_where(o)}): {_shortfall(o)}")
    if not result.of("feasible"):
        lines.append(
            "  no placement fits"
            + (f" ({len(unpriced)} could not be priced: below)" if unpriced else "")
        )
    if unpriced:
        lines += ["", "   not priced (kb's words):"]
        for o in unpriced:
            lines.append(f"  {o.name} ({_where(o)}): {'; '.join(o.problems) or 'no reason given'}")
    if result.excluded:
        lines += ["", "   not enumerated:"]
        groups: dict[str, list[str]] = defaultdict(list)
        for e in result.excluded:
            groups[e.reason].append(e.placement.name)
        lines += [f"  {', '.join(names)}: {reason}" for reason, names in groups.items()]
    feasible = result.of("feasible")
    if feasible:
        lines += ["", "2. Feasible placements, every dimension (no combined score)"]
        lines += _table(result, feasible)
        lines += ["", "3. Pareto fronts (per pair of dimensions: no option beats these on both)"]
        for (a, b), names in result.fronts:
            lines.append(f"  {BY_KEY[a].label} x {BY_KEY[b].label}: {', '.join(names)}")
        lines += [
            "",
            "4. Ledgers (the decode step's rows with their provenance; formulas: --format json)",
        ]
        for o in feasible:
            lines += _ledger(o)
    if sweep is not None:
        lines += ["", f"5. Sweep over {sweep.parameter}"] + sweep_lines(sweep)
    return "\n".join(lines) + "\n"


def _where(o: Option) -> str:
    p = o.placement
    return f"{p.devices} devices, {p.nodes} node{'s' if p.nodes > 1 else ''}"


def _shortfall(o: Option) -> str:
    out = o.outcome
    if out is None:
        return "does not fit"
    return (
        f"does not fit: needs {gib(out.need_per_device)} per device, has {gib(out.have_per_device)}"
    )


def _table(result: Plan, feasible: list[Option]) -> list[str]:
    dims = [d for d in DIMENSIONS if result.available.get(d.key) is None]
    head = ["option", "nodes"] + [d.label for d in dims] + ["Pareto", "provenance", "SLO"]
    total = len(result.fronts)
    rows = []
    for o in feasible:
        nodes = str(o.placement.nodes) + (" TP across" if o.placement.tp_across_nodes else "")
        rows.append(
            [o.name, nodes]
            + [cell(d.key, o.values.get(d.key)) for d in dims]
            + [
                f"{len(o.pareto)}/{total}" if o.pareto else "-",
                o.outcome.provenance if o.outcome is not None else "none",
                "; ".join(o.slo_violations) if o.slo_violations else "ok",
            ]
        )
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = ["  " + "  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)).rstrip()]
    lines += [
        "  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
    ]
    lines.append(
        "  Pareto: the pairs of dimensions on whose front the option lies; max batch: the "
        "largest batch at this context; max context: the longest context at this batch"
    )
    if any(o.placement.tp_across_nodes for o in feasible):
        lines.append(
            "  TP across: the tensor-parallel group spans nodes, so every all-reduce crosses "
            "the network between them (--tp-within-node leaves these out)"
        )
    for d in DIMENSIONS:
        why = result.available.get(d.key)
        if why is not None:
            lines.append(f"  {d.label}: {why}")
    q = result.query
    if q.slo_ttft is None and q.slo_tpot is None:
        lines.append("  SLO: none given (--slo-ttft, --slo-tpot)")
    return lines


def _ledger(o: Option) -> list[str]:
    out = o.outcome
    if out is None:
        return []
    v = o.values
    head = f"  {o.name} ({_where(o)}): TPOT {cell('tpot', v.get('tpot'))}"
    if v.get("ttft") is not None:
        head += f", TTFT {cell('ttft', v.get('ttft'))}"
    if v.get("latency") is not None:
        head += f", request {amount(v['latency'] or Fraction(0), 's')}"
    parts = [
        f"{ROW_LABELS.get(row.name, row.name)} {amount(Fraction(row.value), 's')} "
        f"({row.provenance})"
        for row in out.rows
        if row.value or row.provenance != "none"
    ]
    return [head + f"; {out.provenance}", "    " + " + ".join(parts)]


def sweep_lines(sweep: Sweep) -> list[str]:
    dims = [d for d in DIMENSIONS if any(d.key in p.preferred for p in sweep.points)]
    head = [sweep.parameter] + [d.label for d in dims]
    rows = []
    for point in sweep.points:
        rows.append(
            [str(point.value)]
            + ["=".join(point.preferred.get(d.key, ())) or "none fits" for d in dims]
        )
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = ["  preferred option per dimension:"]
    lines.append("  " + "  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)).rstrip())
    lines += [
        "  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
    ]
    if not sweep.changes:
        lines.append("  the preferred option of every dimension is the same at every value")
    for c in sweep.changes:
        lines.append(
            f"  {BY_KEY[c.dimension].label}: {'='.join(c.before) or 'none'} -> "
            f"{'='.join(c.after) or 'none'} between {sweep.parameter} {c.between[0]} and "
            f"{c.between[1]}: {c.how}"
        )
    return lines


# ---- JSON -------------------------------------------------------------------------------


def _option_json(o: Option) -> dict[str, Any]:
    out = o.outcome
    need = out.need_per_device if out is not None and out.need_per_device else None
    have = out.have_per_device if out is not None and out.have_per_device else None
    values = {
        key: exact(value, BY_KEY[key].unit if key in BY_KEY else "s")
        for key, value in o.values.items()
    }
    return {
        "name": o.name,
        "degrees": o.placement.degrees(),
        "devices": o.placement.devices,
        "nodes": o.placement.nodes,
        "tp_across_nodes": o.placement.tp_across_nodes,
        "status": o.status,
        "memory": {
            "need_per_device": exact(need, "B"),
            "have_per_device": exact(have, "B"),
            "need_gib": gib(need) if need is not None else None,
            "have_gib": gib(have) if have is not None else None,
            "max_batch": out.max_batch if out is not None else None,
            "max_context": out.max_context if out is not None else None,
        },
        "values": values,
        "provenance": out.provenance if out is not None else "none",
        "rows": [
            {
                "name": ROW_LABELS.get(r.name, r.name),
                "value": exact(Fraction(r.value), "s"),
                "formula": str(r.formula),
                "provenance": str(r.provenance),
                "receipts": list(getattr(r, "receipts", ())),
            }
            for r in (out.rows if out is not None else ())
        ],
        "pareto": list(o.pareto),
        "slo_violations": list(o.slo_violations),
        "problems": list(o.problems),
    }


def document(result: Plan, sweep: Sweep | None = None) -> dict[str, Any]:
    """The plan.v1 document (kb/data/output/plan.v1.schema.json)."""
    from kb import __version__

    q = result.query
    return {
        "schema": "plan.v1",
        "tool": {"name": "kb", "version": __version__},
        "query": {
            "model": q.model,
            "hardware": q.hardware,
            "count": q.count,
            "nodes": q.nodes,
            "batch": q.batch,
            "input_tokens": q.input_tokens,
            "output_tokens": q.output_tokens,
            "context": q.context,
            "engine": q.engine,
            "weight_precision": q.weight_precision,
            "kv_precision": q.kv_precision,
            "intra_link": q.intra_link,
            "inter_link": q.inter_link,
            "tp_across_nodes": q.tp_across_nodes,
            "pinned": dict(q.pinned),
            "slo_ttft": exact(q.slo_ttft, "s"),
            "slo_tpot": exact(q.slo_tpot, "s"),
            "settings": dict(q.settings),
        },
        "dimensions": [
            {
                "key": d.key,
                "label": d.label,
                "unit": d.unit,
                "better": d.better,
                "available": result.available.get(d.key) is None,
                "reason": result.available.get(d.key),
            }
            for d in DIMENSIONS
        ],
        "summary": {
            "enumerated": len(result.options),
            "feasible": len(result.of("feasible")),
            "infeasible": len(result.of("infeasible")),
            "unpriced": len(result.of("unpriced")),
        },
        "options": [_option_json(o) for o in result.options],
        "pareto": [{"dimensions": [a, b], "front": list(names)} for (a, b), names in result.fronts],
        "not_enumerated": [
            {"name": e.placement.name, "degrees": e.placement.degrees(), "reason": e.reason}
            for e in result.excluded
        ],
        "sweep": _sweep_json(sweep) if sweep is not None else None,
        "notes": list(result.notes),
    }


def _sweep_json(sweep: Sweep) -> dict[str, Any]:
    return {
        "parameter": sweep.parameter,
        "values": [p.value for p in sweep.points],
        "points": [
            {
                "value": p.value,
                "preferred": {k: ("=".join(v) or None) for k, v in p.preferred.items()},
                "feasible": [o.name for o in p.plan.of("feasible")],
            }
            for p in sweep.points
        ],
        "changes": [
            {
                "dimension": c.dimension,
                "from": "=".join(c.before) or None,
                "to": "=".join(c.after) or None,
                "between": list(c.between),
                "break_even": exact(c.break_even, "1"),
                "how": c.how,
            }
            for c in sweep.changes
        ],
    }


def to_json(result: Plan, sweep: Sweep | None = None) -> str:
    return json.dumps(document(result, sweep), indent=2) + "\n"
