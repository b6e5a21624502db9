"""Render a PlacementAnalysis as text (for people) or JSON (exact fractions, for tools and tests).

Text rounds to four significant digits with a readable unit (ns/µs/ms/s, B/kB/MB/GB,
GB/s; kb/numfmt.py, shared with `kb calc` and the site); JSON carries every value
exactly as `"p/q"` next to its unit, so a hand-worked ledger can be compared to the
last digit. The text pieces (device, transfer, comparison and break-even lines) are
public so the site's placement page prints the same words.
"""

from __future__ import annotations

import json
from fractions import Fraction
from functools import lru_cache
from typing import Any

from kb.ledger.analysis import PlacementAnalysis
from kb.ledger.compare import Comparison, Side
from kb.ledger.quantities import SCALES, amount, number

ROW_LABELS = {
    "useful": "T_useful",
    "overhead": "T_per_layer_overhead",
    "exposed": "T_exposed",
    "sync": "T_sync",
    "input_imbalance": "T_input_imbalance",
    "replication_or_migration": "T_replication_or_migration",
    "remote_memory_or_paging": "T_remote_memory_or_paging",
    "orchestration_or_recovery": "T_orchestration_or_recovery",
}


# The one rounding rule for exact values in kb's JSON. Python refuses to turn an int of
# more than 4,300 digits (about 14,284 bits) into text; an exact MoE figure can carry
# (1 - k/E)^B with B in the thousands (a prefill's prompt tokens), past it. A value whose
# numerator or denominator has more than EXACT_BITS bits is written as the nearest
# fraction with a denominator of at most ROUNDED_DENOMINATOR (2^64): it differs by less
# than 2^-64 of its unit, far below any digit kb shows, and its JSON says it was rounded.
# Everything kb computes or compares (the Pareto fronts, the SLO checks) stays exact.
EXACT_BITS = 12_000
ROUNDED_DENOMINATOR = 2**64


def printable(value: Fraction) -> tuple[Fraction, int | None]:
    """The value as kb prints it, and the bits of its exact form when it had to be rounded.

    (value, None) when its numerator and denominator have at most EXACT_BITS bits;
    else (the nearest fraction with a denominator of at most 2^64, the exact bits).
    """
    bits = max(value.numerator.bit_length(), value.denominator.bit_length())
    if bits <= EXACT_BITS:
        return value, None
    return value.limit_denominator(ROUNDED_DENOMINATOR), bits


def rounded_note(bits: int) -> str:
    """What a rounded value's JSON and notes say (kb.ledger.render.printable's rule)."""
    return (
        f"rounded to a denominator of at most 2^64 (the nearest such fraction): the exact "
        f"fraction has {bits} bits, past Python's 4,300-digit limit for printing an int"
    )


def exact(value: Fraction | None, unit: str) -> dict[str, Any] | None:
    """JSON form: the exact fraction, a float for convenience, and the unit.

    A value past EXACT_BITS is written by `printable`'s rule, with `rounded` saying so
    (its float is the exact value's).
    """
    if value is None:
        return None
    shown, bits = printable(value)
    found: dict[str, Any] = {"exact": str(shown), "value": float(value), "unit": unit}
    if bits is not None:
        found["rounded"] = rounded_note(bits)
    return found


# ---- text -------------------------------------------------------------------------------


def text(analysis: PlacementAnalysis) -> str:
    """Render the report: envelope, feasibility, ledgers, comparisons, break-even."""
    spec = analysis.spec
    lines = [
        f"{spec.id}",
        envelope_line(analysis),
        "",
        "1. Feasibility (state per device against capacity; checked first)",
    ]
    for index, side in enumerate(analysis.sides):
        lines += _feasibility_lines(side, "reference" if index == 0 else "candidate")
    lines += ["", "2. Ledgers (critical path; T_total is the sum of the rows)"]
    for side in analysis.sides:
        lines += _ledger_lines(side, spec.envelope.batch)
    lines += ["", "3. Comparisons (candidate against the reference; no combined score)"]
    for comparison in analysis.comparisons:
        lines += _comparison_lines(comparison)
    lines += ["", "4. Break-even envelope"]
    lines += _break_even_lines(analysis)
    if analysis.requests:
        lines += ["", "5. Requests (prefill pass, then a decode step per further output token)"]
        lines += [line for r in analysis.requests for line in request_lines(r)]
    return "\n".join(lines) + "\n"


def request_lines(r: Any) -> list[str]:
    """One option's TTFT, TPOT and request latency, and how the prefill was priced."""
    lines = [
        f"  {r.option}: {r.input_tokens} prompt + {r.output_tokens} output tokens: "
        f"TTFT {amount(r.ttft, 's')} (read or matmuls {amount(r.prefill_read, 's')} + "
        + (f"non-matmul kernels {amount(r.prefill_kernels, 's')} + " if r.prefill_kernels else "")
        + f"overhead {amount(r.prefill_overhead, 's')} + all-reduces "
        f"{amount(r.prefill_collectives, 's')}), TPOT {amount(r.tpot, 's')}, request "
        f"{amount(r.latency, 's')} = TTFT + {r.output_tokens - 1} x TPOT; {r.provenance}"
    ]
    if r.energy_per_token is not None:
        lines.append(
            f"    energy per output token over the request {amount(r.energy_per_token, 'J')} "
            f"({r.energy_provenance}: N*P_dev*request/(batch*output tokens))"
        )
    else:
        lines.append("    energy per output token over the request: none entered")
    lines += [f"    prefill all-reduces priced by {p}" for p in r.pricing]
    return lines


def envelope_line(analysis: PlacementAnalysis) -> str:
    """`envelope: model ..., batch 8, state 141.1 GB, useful work 141.1 GB` (text and site)."""
    env = analysis.spec.envelope
    slo = f", SLO {amount(env.slo.value, 's')}" if env.slo else ""
    work = env.workload
    if work is not None:  # a composed placement: what runs, not typed bytes
        return (
            f"envelope: model {env.model}, precision {env.precision}, batch {env.batch}, "
            f"context {work.context} tokens, weights {amount(work.weights_total, 'B')} "
            f"(composed from {', '.join(work.composed_from)}){slo}"
        )
    return (
        f"envelope: model {env.model}, precision {env.precision}, batch {env.batch}, "
        f"state {amount(env.state_bytes.value, 'B')}, useful work "
        f"{amount(env.useful_work.value, env.useful_work.dim)}{slo}"
    )


def _feasibility_lines(side: Side, role: str) -> list[str]:
    fit = side.feasibility
    verdict = "feasible" if fit.feasible else "INFEASIBLE (counterfactual)"
    lines = [f"  {side.option.name} ({role}): {verdict}"]
    option = side.option
    if option.strategies or option.links:
        lines.append(
            f"    strategies: {', '.join(option.strategies) or 'none'}; "
            f"links: {', '.join(option.links) or 'none'}"
        )
    lines += [f"    {device_line(d)}" for d in fit.devices]
    return lines


def device_line(d: Any) -> str:
    """`h200 x2: state 70.55 GB + reserve 0 B of 151.4 GB, headroom 80.85 GB`."""
    if d.parts:
        return composed_device_line(d)
    tail = (
        f"headroom {amount(d.headroom, 'B')}" if d.fits else f"short by {amount(-d.headroom, 'B')}"
    )
    return (
        f"{d.name} x{d.count}: state {amount(d.state, 'B')} + reserve "
        f"{amount(d.reserve, 'B')} of {amount(d.capacity, 'B')}, {tail}"
    )


PART_LABELS = {
    "weights": "weights",
    "kv_cache": "KV cache",
    "replicated": "replicated",
    "workspace": "workspace",
}


def composed_device_line(d: Any) -> str:
    """A composed placement's device: its parts, then the verdict in GiB and the headroom."""
    from kb.ledger.paging import gib

    parts = " + ".join(f"{PART_LABELS[name]} {gib(value)}" for name, value in d.parts)
    state = f"{d.name} x{d.count}: {parts} + reserve {gib(d.reserve)}"
    if not any(name == "workspace" for name, _ in d.parts):
        state += " (activations and workspace: no figure states them, not counted)"
    paged = f"; KV cache and reserve as {d.paging}" if d.paging else ""
    if not d.fits:
        largest = (
            f"; largest batch at this context {d.max_batch}" if d.max_batch is not None else ""
        )
        return (
            f"{state}; does not fit: needs {gib(d.state + d.reserve)} per device, "
            f"has {gib(d.capacity)}{largest}{paged}"
        )
    return (
        f"{state} of {gib(d.capacity)}, headroom {gib(d.headroom)}: largest batch at this "
        f"context {d.max_batch}, longest context at this batch {d.max_context} tokens{paged}"
    )


def _ledger_lines(side: Side, batch: Fraction) -> list[str]:
    name = side.option.name
    if side.ledger is None:
        return [f"  {name}: not computed: infeasible counterfactual (the state does not fit)"]
    lines = [f"  {name}:"]
    for row in side.ledger.rows:
        receipts = f" ({', '.join(row.receipts)})" if row.receipts else ""
        lines.append(
            f"    {ROW_LABELS[row.name]:<29} {row_value_text(row):>12}  "
            f"{row.provenance}{receipts}; {row.formula}"
        )
    lines.append(
        f"    {'T_total':<29} {amount(side.ledger.total, 's'):>12}  {total_text(side.ledger)}"
    )
    if side.ledger.energy is not None:
        lines.append(f"    {energy_line(side.ledger.energy)}")
    if side.option.derived is not None:
        lines.append(f"    {throughput_line(side, batch)}")
    for cost in side.ledger.transfers:
        lines.append(f"      {transfer_line(cost)}")
        if cost.pricing:
            lines.append(f"        priced by {cost.pricing}")
    return lines


NONE_ENTERED = "none entered"


def row_value_text(row: Any) -> str:
    """A row's value as printed: `none entered` for a row the placement does not enter, not 0."""
    return NONE_ENTERED if row.provenance == "none" else amount(row.value, "s")


def throughput(side: Side, batch: Fraction) -> tuple[Fraction, Fraction]:
    """Decode throughput: batch / T_total tokens per second, for the system and per device."""
    assert side.ledger is not None
    rate = Fraction(batch) / Fraction(side.ledger.total)
    devices = sum(d.count for d in side.feasibility.devices) or 1
    return rate, rate / devices


def throughput_line(side: Side, batch: Fraction) -> str:
    """`Throughput  2985 tokens/s  estimated; batch / T_total, 373.1 tokens/s per device`."""
    system, per_device = throughput(side, batch)
    label = f"{'Throughput':<29}"
    return (
        f"{label} {number(system) + ' tokens/s':>12}  batch / T_total: {batch} sequences emit a "
        f"token each per step; {number(per_device)} tokens/s per device"
    )


def energy_line(energy: Any) -> str:
    """`E_per_output_token  0.1208 J  estimated at TDP; ...`, or `none entered: why`."""
    label = f"{'E_per_output_token':<29}"
    if energy.value is None:
        return f"{label} {'none entered':>12}  {energy.formula.removeprefix('none entered: ')}"
    return f"{label} {amount(energy.value, 'J'):>12}  {energy.provenance}; {energy.formula}"


def total_text(ledger: Any) -> str:
    """How T_total was computed: the sum of the rows, or the step class's equation."""
    if ledger.composed is None:
        return "sum of the rows"
    return f"{ledger.composed_formula} (the rows above split it)"


def transfer_line(cost: Any) -> str:
    """One transfer's arithmetic: messages x latency + bytes / bandwidth = raw; exposed."""
    source = ", ".join(cost.receipts) or f"line rate, {cost.provenance}"
    return (
        f"transfer {cost.name} over {cost.link}: {cost.messages} messages x "
        f"{amount(cost.latency, 's')} + {amount(cost.bytes, 'B')} / "
        f"{amount(cost.bandwidth, 'B/s')} ({source}) = raw {amount(cost.raw, 's')}; "
        f"overlap {amount(cost.overlap, 's')}; exposed {amount(cost.exposed, 's')}"
    )


def _cell(value: Fraction | None, unit: str) -> str:
    if value is None:  # an input the placement does not enter (cost rate, power, SLO)
        return NONE_ENTERED
    return amount(value, unit) if unit in SCALES else f"{number(value)} {unit}".strip()


COMPARISON_HEAD = ["dimension", "reference", "candidate", "delta (c-r)", "ratio c/r"]


def comparison_table(c: Comparison) -> list[list[str]]:
    """The comparison per dimension as text cells, the head row first (text and site)."""
    table = [list(COMPARISON_HEAD)]
    for d in c.dimensions:
        missing = d.reference is None or d.candidate is None
        ratio = number(d.ratio) if d.ratio is not None else NONE_ENTERED if missing else "n/a"
        cells = [_cell(v, d.unit) for v in (d.reference, d.candidate, d.delta)]
        table.append([d.name, *cells, ratio])
    return table


def efficiency_text(c: Comparison) -> str:
    """`latency placement efficiency T_r/T_c = 0.9821` ("" when not computed)."""
    if c.efficiency is None:
        return ""
    return f"latency placement efficiency T_r/T_c = {number(c.efficiency)}"


def _comparison_lines(c: Comparison) -> list[str]:
    head = f"  {c.candidate} against {c.reference}:"
    if c.withheld:
        return [head, f"    withheld: {c.withheld}"]
    table = comparison_table(c)
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    lines = [head] + [
        "    "
        + "  ".join(
            cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(row)
        )
        for row in table
    ]
    if c.efficiency is not None:
        lines.append(f"    {efficiency_text(c)}")
    return lines


def _break_even_lines(analysis: PlacementAnalysis) -> list[str]:
    if not analysis.break_evens:
        return [f"  {NO_BREAK_EVEN}"]
    lines: list[str] = []
    for be in analysis.break_evens:
        headline, sides = break_even_parts(be)
        lines.append(f"  {headline}")
        lines += [f"    {side}: {', '.join(names)}" for side, names in sides]
    return lines


NO_BREAK_EVEN = (
    "not computed: it needs a feasible reference and a feasible candidate with transfers"
)
BREAK_EVEN_SIDES = ("candidate faster", "tie", "reference faster")


def break_even_parts(be: Any) -> tuple[str, list[tuple[str, list[str]]]]:
    """A break-even's headline and the interconnects on each side of it (text and site)."""
    unit = {"bandwidth": "B/s", "latency": "s", "batch": ""}[be.parameter]
    what = f"{be.parameter} of {be.link}" if be.link else "batch"
    per = ""
    if be.rings is not None:  # one port's rate, as the records on each side state it
        c = be.rings.count
        what += (
            f" per port, with {c} ports a node (a ring on each: "
            f"min({c} x port, {_cell(be.rings.intra, unit)}) bus bandwidth)"
        )
        per = " per port"
    result = ", ".join(_cell(v, unit) for v in be.values) if be.values else be.detail
    headline = (
        f"{be.candidate}: {what}: {be.status}"
        f"{' at ' + result if be.values else ' (' + result + ')'}"
        f" (the placement uses {_cell(be.current, unit)}{per})"
    )
    names: dict[str, list[str]] = {side: [] for side in BREAK_EVEN_SIDES}
    for p in be.sides:  # one pass; a side outside BREAK_EVEN_SIDES is not printed
        on = names.get(p.side)
        if on is not None:
            on.append(_placed_name(p.interconnect, p.value.numerator, p.value.denominator, unit))
    return headline, [(side, names[side]) for side in BREAK_EVEN_SIDES if names[side]]


@lru_cache(maxsize=8192)  # every placement's break-even names the same interconnects
def _placed_name(interconnect: str, numerator: int, denominator: int, unit: str) -> str:
    """`id (1.6 TB/s)`; the value as two integers, which hash faster than a Fraction."""
    return f"{interconnect} ({amount(Fraction(numerator, denominator), unit)})"


# ---- json -------------------------------------------------------------------------------


def to_json(analysis: PlacementAnalysis) -> str:
    spec = analysis.spec
    doc = {
        "placement": spec.id,
        "feasibility": [_fit_json(s) for s in analysis.sides],
        "ledgers": [_ledger_json(s, spec.envelope.batch) for s in analysis.sides],
        "comparisons": [_comparison_json(c) for c in analysis.comparisons],
        "break_even": [_break_even_json(b) for b in analysis.break_evens],
    }
    if analysis.requests:
        doc["requests"] = [
            {
                "option": r.option,
                "input_tokens": r.input_tokens,
                "output_tokens": r.output_tokens,
                "ttft": exact(r.ttft, "s"),
                "tpot": exact(r.tpot, "s"),
                "latency": exact(r.latency, "s"),
                "prefill": {
                    "read": exact(r.prefill_read, "s"),
                    **({"kernels": exact(r.prefill_kernels, "s")} if r.prefill_kernels else {}),
                    "overhead": exact(r.prefill_overhead, "s"),
                    "all_reduces": exact(r.prefill_collectives, "s"),
                    "pricing": list(r.pricing),
                },
                "provenance": r.provenance,
                "energy_per_token": exact(r.energy_per_token, "J"),
                "energy_provenance": r.energy_provenance,
            }
            for r in analysis.requests
        ]
    return json.dumps(doc, indent=2) + "\n"


def _fit_json(side: Side) -> dict[str, Any]:
    return {
        "option": side.option.name,
        "feasible": side.feasibility.feasible,
        "headroom": exact(side.feasibility.headroom, "B"),
        "devices": [
            {
                "name": d.name,
                "count": d.count,
                "state": exact(d.state, "B"),
                "reserve": exact(d.reserve, "B"),
                "capacity": exact(d.capacity, "B"),
                "headroom": exact(d.headroom, "B"),
                "fits": d.fits,
                **(
                    {
                        "parts": {name: exact(value, "B") for name, value in d.parts},
                        "max_batch": d.max_batch,
                        "paging": d.paging or None,
                        "max_context": d.max_context,
                    }
                    if d.parts
                    else {}
                ),
            }
            for d in side.feasibility.devices
        ],
    }


def _ledger_json(side: Side, batch: Fraction) -> dict[str, Any]:
    if side.ledger is None:
        return {
            "option": side.option.name,
            "computed": False,
            "reason": "infeasible counterfactual",
        }
    return {
        "option": side.option.name,
        "computed": True,
        "total": exact(side.ledger.total, "s"),
        "total_formula": total_text(side.ledger),
        **_energy_json(side.ledger.energy),
        **_throughput_json(side, batch),
        "rows": [
            {
                "row": r.name,
                "value": exact(r.value, "s"),
                "formula": r.formula,
                "provenance": r.provenance,
                "receipts": list(r.receipts),
                "inputs": {k: str(v) for k, v in r.inputs.items()},
            }
            for r in side.ledger.rows
        ],
        "transfers": [
            {
                "name": t.name,
                "link": t.link,
                "messages": t.messages,
                "bytes": exact(t.bytes, "B"),
                "latency": exact(t.latency, "s"),
                "bandwidth": exact(t.bandwidth, "B/s"),
                "raw": exact(t.raw, "s"),
                "overlap": exact(t.overlap, "s"),
                "exposed": exact(t.exposed, "s"),
                "provenance": t.provenance,
                "receipts": list(t.receipts),
                "pricing": t.pricing,
            }
            for t in side.ledger.transfers
        ],
    }


def _throughput_json(side: Side, batch: Fraction) -> dict[str, Any]:
    """A composed ledger's decode throughput, tokens per second (system and per device)."""
    if side.option.derived is None:
        return {}
    system, per_device = throughput(side, batch)
    return {
        "throughput": exact(system, "tokens/s"),
        "throughput_per_device": exact(per_device, "tokens/s"),
    }


def _energy_json(energy: Any) -> dict[str, Any]:
    """A composed ledger's energy per output token (absent for a typed placement)."""
    if energy is None:
        return {}
    return {
        "energy_per_token": {
            "value": exact(energy.value, "J"),
            "formula": energy.formula,
            "provenance": energy.provenance,
            "inputs": {k: str(v) for k, v in energy.inputs.items()},
        }
    }


def _comparison_json(c: Comparison) -> dict[str, Any]:
    if c.withheld:
        return {"reference": c.reference, "candidate": c.candidate, "withheld": c.withheld}
    return {
        "reference": c.reference,
        "candidate": c.candidate,
        "efficiency": exact(c.efficiency, "1"),
        "dimensions": [
            {
                "name": d.name,
                "better": d.better,
                "reference": exact(d.reference, d.unit),
                "candidate": exact(d.candidate, d.unit),
                "delta": exact(d.delta, d.unit),
                "ratio": exact(d.ratio, "1"),
            }
            for d in c.dimensions
        ],
    }


def _break_even_json(be: Any) -> dict[str, Any]:
    unit = {"bandwidth": "B/s", "latency": "s", "batch": "1"}[be.parameter]
    rails = {}
    if be.rings is not None:  # `current`, `values` and the sides are one port's rate
        rails = {
            "rails": {
                "per_port": True,
                "ports": exact(be.rings.count, "1"),
                "intra": exact(be.rings.intra, "B/s"),
            }
        }
    return {
        "candidate": be.candidate,
        "parameter": be.parameter,
        "link": be.link,
        **rails,
        "current": exact(be.current, unit),
        "status": be.status,
        "values": [exact(v, unit) for v in be.values],
        "detail": be.detail,
        "sides": [
            {"interconnect": p.interconnect, "value": exact(p.value, unit), "side": p.side}
            for p in be.sides
        ],
    }
