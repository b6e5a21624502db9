"""One placement, end to end: feasibility of every option, ledgers, comparisons, break-evens.

This is what `kb ledger` prints and what rule LG001 consults. `--set NAME=VALUE`
settings replace envelope inputs on a copy of the record, never the record itself;
the copy's view is built from it only when the record itself passed the schema
(a placement that fails its schema is not computed: kb.ledger.inputs). Break-even
places every interconnect that has a view (one that fails its schema has its own
finding, and no figure kb would trust); their figures are read once per run
(`break_even_figures`).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from kb.kinds import views
from kb.kinds.interconnect import Interconnect
from kb.kinds.placement import placement
from kb.ledger.compare import Comparison, Side, compare
from kb.ledger.feasibility import feasibility
from kb.ledger.inputs import (
    PlacementSpec,
    Unresolved,
    resolve_placement,
    resolve_view,
    schema_invalid,
)
from kb.ledger.ledger import compute_ledger
from kb.ledger.quantities import QuantityError, parse_setting
from kb.model import KnowledgeBase, Record
from kb.run import Kept

if TYPE_CHECKING:  # SymPy is imported by kb.ledger.breakeven: only when a break-even is asked
    from kb.ledger.breakeven import Figures

SETTABLE = {"batch": "1", "state_bytes": "B", "useful_work": "", "slo": "s", "context": "1"}


@dataclass(frozen=True)
class PlacementAnalysis:
    spec: PlacementSpec
    sides: tuple[Side, ...]  # reference first, then candidates in record order
    comparisons: tuple[Comparison, ...]
    break_evens: tuple[Any, ...] = ()
    requests: tuple[Any, ...] = ()  # kb.ledger.request.Request per feasible composed option


def apply_settings(record: Record, settings: Mapping[str, str]) -> Record:
    """Return a copy of `record` with envelope inputs replaced (ValueError on a bad one)."""
    data = copy.deepcopy(dict(record.data))
    envelope = dict(data.get("envelope") or {})
    for name, text in settings.items():
        if name not in SETTABLE:
            raise ValueError(f"--set {name}: not an envelope input ({', '.join(SETTABLE)})")
        try:
            value, dim = parse_setting(text)
        except QuantityError as exc:
            raise ValueError(f"--set {name}={text}: {exc}") from exc
        if SETTABLE[name] and dim != SETTABLE[name]:
            raise ValueError(f"--set {name}={text}: dimension {dim}, expected {SETTABLE[name]}")
        if name == "context":
            envelope["workload"] = _with_context(envelope.get("workload"), value)
            continue
        envelope[name] = _setting_value(name, value, dim)
    data["envelope"] = envelope
    return Record(record.id, record.kind, record.path, data, record.digest)


def _with_context(workload: Any, value: Fraction) -> dict[str, Any]:
    """The workload with its context replaced (a composed placement only)."""
    if not isinstance(workload, dict):
        raise ValueError("--set context: only a placement with an envelope workload has one")
    if value.denominator != 1 or value < 1:
        raise ValueError(f"--set context={value}: expected a whole number of tokens, at least 1")
    return {**workload, "context": int(value)}


def _setting_value(name: str, value: Fraction, dim: str) -> Any:
    if name == "batch":
        if value.denominator != 1 or value < 1:
            raise ValueError(f"--set batch={value}: expected a whole number, at least 1")
        return int(value)
    unit = {"B": "B", "s": "s", "FLOP": "FLOP"}.get(dim)
    if unit is None:
        raise ValueError(f"--set {name}: dimension {dim} is not bytes, FLOP or seconds")
    number = int(value) if value.denominator == 1 else str(value)
    return {"value": number, "unit": unit, "basis": "unverified", "note": "set by --set"}


def analyze_spec(
    spec: PlacementSpec, with_break_even: bool = False, figures: Figures | None = None
) -> PlacementAnalysis:
    """Feasibility first; ledgers only for feasible options; ratios only between them."""
    sides = []
    for option in spec.options:
        fit = feasibility(spec.envelope, option)
        ledger = compute_ledger(spec.envelope, option) if fit.feasible else None
        sides.append(Side(option, fit, ledger))
    comparisons = tuple(compare(spec.envelope, sides[0], s) for s in sides[1:])
    evens = _break_evens(spec, sides, figures) if with_break_even else ()
    return PlacementAnalysis(spec, tuple(sides), comparisons, evens, _requests(spec, sides))


def _requests(spec: PlacementSpec, sides: list[Side]) -> tuple[Any, ...]:
    """TTFT, TPOT and request latency of each feasible composed option (kb.ledger.request)."""
    from kb.ledger.request import request

    found = (request(spec.envelope, s.option, s.ledger) for s in sides if s.ledger is not None)
    return tuple(r for r in found if r is not None)


def _break_evens(
    spec: PlacementSpec, sides: list[Side], figures: Figures | None
) -> tuple[Any, ...]:
    from kb.ledger.breakeven import break_even, parameters_of

    ref = sides[0]
    results = []
    for cand in sides[1:]:
        if not (ref.feasibility.feasible and cand.feasibility.feasible):
            continue
        for parameter, link in parameters_of(cand.option):
            results.append(
                break_even(spec.envelope, ref.option, cand.option, parameter, link, figures)
            )
    return tuple(results)


def analyze_placement(
    record: Record,
    kb: KnowledgeBase,
    settings: Mapping[str, str] | None = None,
    with_break_even: bool = False,
) -> PlacementAnalysis | Unresolved:
    """Resolve (after `--set` settings) and analyze one placement record."""
    if settings:
        edited = apply_settings(record, settings)
        if views(kb).placement(record) is None:
            return schema_invalid(record, kb)
        spec = resolve_view(placement(edited), edited, kb)  # the copy's own view, not the memo
    else:
        spec = resolve_placement(record, kb)
    if isinstance(spec, Unresolved) or spec.gaps:
        return spec if isinstance(spec, Unresolved) else Unresolved(spec.id, spec.path, spec.gaps)
    return analyze_spec(spec, with_break_even, break_even_figures(kb) if with_break_even else None)


FIGURES: Kept[Figures] = Kept("break-even figures")  # break_even_figures, once per run


def break_even_figures(kb: KnowledgeBase) -> Figures:
    """The figures every break-even places, read from the interconnects once per run.

    Every placement's break-even places the same interconnects: a frozen knowledge
    base keeps them in its run context (FIGURES), an unfrozen one
    reads them per call.
    """
    from kb.ledger.breakeven import figures_of

    found = kb.run.kept(FIGURES) if kb.frozen else None
    if found is None:
        found = figures_of(interconnect_views(kb))
        if kb.frozen:
            kb.run.keep(FIGURES, found)
    return found


def interconnect_views(kb: KnowledgeBase) -> list[Interconnect]:
    """The view of every interconnect that has one (break-even places each)."""
    checked = views(kb)
    links = [checked.interconnect(record) for record in kb.of_kind("interconnect")]
    return [link for link in links if link is not None]
