"""A row whose source states its devices but not its layout (end-to-end.json `unstated_layout`).

Such a row is priced under every layout kb's planner admits for the devices it states
(kb.plan.enumerate: tp x pp x dp = all of the row's devices, in the row's nodes),
restricted to the expert-parallel degrees the engine admits (`engines`), each layout
priced exactly as the row would be if its source stated it (kb.ledger.endtoend's
evaluate_row on the row with the layout's degrees written in). The computed set must be
the one declared for the receipt (`receipts.*.layouts`), else the row says so and is
not priced. A layout that does not fit could not have run and is dropped. The verdict:

- no layout fits: contradicted (measured, but kb finds it does not fit under any);
- every fitting layout priced, each outside the band on the same side: contradicted
  under every layout, with the error of the one nearest the measurement (named);
- otherwise `undetermined`: the measurement cannot tell which layout ran; every
  layout's prediction is shown, and the row is never validated nor a validation row.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from kb.model import KnowledgeBase, Record
from kb.plan.enumerate import Placement, PlanError, Space, enumerate_placements

if TYPE_CHECKING:
    from kb.ledger.endtoend import RowResult

UNDETERMINED = "undetermined"
SECTION = "unstated_layout"
Priced = tuple[tuple[str, "RowResult"], ...]  # (layout name, the row as priced under it)


@dataclass(frozen=True)
class Declared:
    """One receipt's declaration: its rows (None: all), its layouts and its link."""

    rows: frozenset[int] | None
    layouts: tuple[str, ...]
    link_family: str | None  # take the accelerator's reference network, of this family


@dataclass(frozen=True)
class Rules:
    receipts: Mapping[str, Declared]
    engine_ep: Mapping[str, str]  # engine -> "1" or "1 or tp"


@lru_cache(maxsize=1)
def rules() -> Rules:
    """kb/data/end-to-end.json `unstated_layout`, read once."""
    from kb.resources import end_to_end

    return end_to_end(SECTION, _rules)


def _rules(entry: Any) -> Rules:
    receipts = {}
    for receipt, node in entry["receipts"].items():
        rows = None if node["rows"] == "all" else frozenset(int(i) for i in node["rows"])
        link = node.get("link")
        family = str(link["family"]) if isinstance(link, dict) else None
        receipts[str(receipt)] = Declared(rows, tuple(str(n) for n in node["layouts"]), family)
    engines = {str(engine): str(node["ep"]) for engine, node in entry["engines"].items()}
    return Rules(receipts, engines)


def declared(receipt: str, index: int, row: Mapping[str, Any]) -> Declared | None:
    """The declaration that prices this row, when it states no layout (no `tp`)."""
    if "tp" in row:
        return None
    found = rules().receipts.get(receipt)
    if found is None or (found.rows is not None and index not in found.rows):
        return None
    return found


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def admitted(
    kb: KnowledgeBase, record: Record, row: Mapping[str, Any], linked: bool
) -> tuple[Placement, ...] | str:
    """The layouts the planner and the engine admit for the row's devices (a string: why none)."""
    model = kb.get(str(row.get("model") or record.get("model")))
    gpus, nodes = _whole(row.get("gpus")), _whole(row.get("nodes")) or 1
    batch = _whole(row.get("batch")) or _whole(row.get("concurrency"))
    layers = _whole(model.get("geometry.layers")) if model is not None else None
    if model is None or gpus is None or batch is None or layers is None:
        return "the row states no devices or batch, or its model no layers, to lay out"
    experts = model.get("geometry.experts") if model.get("architecture") == "moe" else None
    space = Space(gpus, nodes, layers, batch, _whole(experts), True, {}, linked)
    try:
        found, _ = enumerate_placements(space)
    except PlanError as exc:
        return str(exc)
    ep = rules().engine_ep.get(str(record.get("engine.record")), "1")
    return tuple(
        p
        for p in found
        if (p.devices, p.nodes) == (gpus, nodes)
        and p.ep in ((1, p.tp) if ep == "1 or tp" else (1,))
    )


def _link(kb: KnowledgeBase, row: Mapping[str, Any], family: str | None) -> tuple[str, str] | None:
    """The reference network between nodes, taken when declared and of the declared family."""
    from kb.plan.planner import reference_network

    if family is None or (_whole(row.get("nodes")) or 1) < 2:
        return None
    gpus, nodes = _whole(row.get("gpus")) or 1, _whole(row.get("nodes")) or 1
    hardware = str(row.get("hardware") or "")
    found = reference_network(kb, hardware, gpus // nodes) if hardware else None
    link = kb.get(found[0]) if found is not None else None
    if found is None or link is None or link.get("family") != family:
        return None
    return found[0], f"between the nodes: {found[0]}, the planner's reference network ({family})"


def evaluate(
    kb: KnowledgeBase,
    record: Record,
    index: int,
    row: Mapping[str, Any],
    decl: Declared,
    calibration: bool,
) -> RowResult:
    """The row priced under every admitted layout, with its verdict."""
    from kb.ledger.endtoend import NOT_EVALUABLE, RowResult

    hardware = row.get("hardware") or next(iter(record.get("hardware") or []), None)
    located = {**row, "hardware": hardware} if hardware else dict(row)
    link = _link(kb, located, decl.link_family)
    found = admitted(kb, record, located, link is not None)
    names = tuple(p.name for p in found) if not isinstance(found, str) else ()
    base = dict(receipt=record.id, index=index, label=str(row.get("label") or f"results[{index}]"))
    if isinstance(found, str) or names != decl.layouts:
        why = (
            found
            if isinstance(found, str)
            else (
                f"the planner and the engine admit {', '.join(names) or 'no layout'}, but "
                f"end-to-end.json declares {', '.join(decl.layouts)}: declare the set again"
            )
        )
        return RowResult(
            **base,  # type: ignore[arg-type]
            metric=str(row.get("metric") or ""),
            measures=row.get("measures"),
            conditions={},
            predicted=None,
            measured=None,
            unit="",
            error=None,
            state=NOT_EVALUABLE,
            reason=f"the source does not state the layout; {why}",
        )
    priced = tuple((p.name, _priced(kb, record, index, row, p, link)) for p in found)
    result = verdict(priced, calibration)
    return replace(result, reason=f"{result.reason}; {link[1]}") if link else result


def _priced(
    kb: KnowledgeBase,
    record: Record,
    index: int,
    row: Mapping[str, Any],
    p: Placement,
    link: tuple[str, str] | None,
) -> RowResult:
    """The row as if its source stated layout p (and the assumed link), by evaluate_row."""
    from kb.ledger.endtoend import evaluate_row

    stated: dict[str, Any] = {**row, **p.degrees(), "nodes": p.nodes}
    if link is not None:
        stated["inter_link"] = link[0]
    result = evaluate_row(kb, record, index, stated, False)
    notes = (f"layout {p.name}: the source states none ({SECTION})",) + (
        (link[1],) if link is not None else ()
    )
    return replace(result, assumed=(*notes, *result.assumed))


def _unfit(result: RowResult) -> bool:
    """A layout kb finds does not fit (evaluate_row's only unpriced contradiction)."""
    return result.predicted is None and result.measured is not None and "not fit" in result.reason


def _listed(priced: Priced) -> str:
    """Each priced layout with its prediction and error: 'tp16 23.50 ms (+1.7%)'."""
    from kb import numfmt
    from kb.ledger.endtoend import percent

    return ", ".join(
        f"{name} {numfmt.human(r.predicted, r.unit)} ({percent(r.error)})"
        for name, r in priced
        if r.predicted is not None
    )


def verdict(priced: Priced, calibration: bool) -> RowResult:
    """The row's state from its layouts' rows (the rule in the module docstring)."""
    from kb.ledger.endtoend import CALIBRATION, CALIBRATION_WHY, CONTRADICTED, NOT_EVALUABLE

    fitting = tuple((n, r) for n, r in priced if not _unfit(r))
    scored = tuple((n, r) for n, r in fitting if r.error is not None)
    tail = _tail(priced, fitting)
    shown = next((r for _, r in (*scored, *priced) if r.conditions), priced[0][1])
    conditions = {**shown.conditions, "layouts": [n for n, _ in priced]} if shown.conditions else {}
    if not fitting:
        state, reason = CONTRADICTED, f"measured, but kb finds it fits under no layout ({tail})"
    elif len(scored) == len(fitting) and _one_sided_miss(scored):
        name, nearest = min(scored, key=lambda x: abs(x[1].error or Fraction(0)))
        reason = (
            f"outside the band under every layout ({_listed(scored)}); the nearest, {name}, "
            f"is shown{tail and '; ' + tail}"
        )
        return replace(
            nearest,
            conditions=conditions,
            layouts=priced,
            state=CALIBRATION if calibration else CONTRADICTED,
            reason=f"{CALIBRATION_WHY}; {reason}" if calibration else reason,
        )
    elif scored:
        state, reason = UNDETERMINED, _undetermined(scored, tail)
    else:
        state, reason = NOT_EVALUABLE, f"no layout priced ({tail})"
    if calibration:
        state, reason = CALIBRATION, f"{CALIBRATION_WHY}; {reason}"
    measured = next((r.measured for _, r in priced if r.measured is not None), None)
    return replace(
        shown,
        conditions=conditions,
        measured=measured,
        predicted=None,
        error=None,
        state=state,
        reason=reason,
        assumed=(),
        provenance="",
        outcome=None,
        layouts=priced,
    )


def _within(result: RowResult) -> bool:
    from kb.ledger.endtoend import declaration

    return result.error is not None and abs(result.error) <= declaration().band


def _one_sided_miss(scored: Priced) -> bool:
    """Every layout outside the band, all on the same side of the measurement."""
    sides = {r.error > 0 for _, r in scored if r.error is not None}
    return bool(scored) and len(sides) == 1 and not any(_within(r) for _, r in scored)


def _undetermined(scored: Priced, tail: str) -> str:
    """Why the measurement cannot tell the layouts apart, with each one's prediction."""
    within = tuple((n, r) for n, r in scored if _within(r))
    others = tuple((n, r) for n, r in scored if not _within(r))
    if within:
        reason = f"consistent with {_listed(within)}"
        reason += f"; outside the band: {_listed(others)}" if others else ""
    else:
        reason = (
            "no layout within the band, and they miss on both sides or one is not priced "
            f"({_listed(scored)})"
        )
    return f"{reason}; the source does not state which ran{tail and '; ' + tail}"


def _tail(priced: Priced, fitting: Priced) -> str:
    """What the verdict leaves out: layouts that do not fit, and those kb could not price."""
    kept = {n for n, _ in fitting}
    unfit = [n for n, _ in priced if n not in kept]
    parts = [f"does not fit: {', '.join(unfit)}"] if unfit else []
    parts += [f"not priced: {n} ({r.reason})" for n, r in fitting if r.error is None]
    return "; ".join(parts)
