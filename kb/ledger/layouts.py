"""A row whose source states its devices but not its layout (end-to-end.json `unstated_layout`).

Such a row is priced under every layout declared for its receipt: the layouts kb's
planner admits for all of the devices the row states (kb.plan.enumerate: tp x pp x dp =
the devices, in the row's nodes; ep only for an MoE model; pp divides the layers, dp the
batch), restricted to the expert-parallel degrees the engine admits (`engines`).
tests/ledger/test_unstated_layout.py holds each declared set equal to that enumeration
(the ledger sits below the planner and does not import it). kb.ledger.endtoend prices
each layout exactly as the row would be if its source stated it (`stated_rows`: the row
with the layout's degrees written in) and assembles the row from `judge`'s verdict:

- no layout fits: contradicted (measured, but kb finds it fits under no layout);
- every fitting layout priced, each outside the band on the same side: contradicted under
  every layout, with the error of the one nearest the measurement (named);
- otherwise `undetermined`: the measurement cannot tell which layout ran; every layout's
  prediction is shown, and the row is never validated nor a validation row.

A receipt whose source says its figure is the best over the mappings the engine ran
(`reported: best`, with the source's words) measures a best, not an unknown layout: `best`
gives the verdict instead. kb's prediction is the best (`better: higher`: the maximum;
`lower`: the minimum) of its predictions over the fitting layouts, named and judged on the
band like any row, every layout still shown. No layout fits: contradicted; a fitting layout
not priced: the best cannot be taken, and the row stays undetermined.

A row whose layouts put a TP group across nodes needs the link between them: where the
declaration names a `link.family`, the accelerator's reference node network is taken
(as kb plan takes it) when, and only when, it is of that family.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

from kb.model import KnowledgeBase, Record

UNDETERMINED = "undetermined"
SECTION = "unstated_layout"
DEGREES = ("tp", "pp", "ep", "dp")
_PART = re.compile(r"^(tp|pp|ep|dp)([1-9][0-9]*)$")


@dataclass(frozen=True)
class Best:
    """`reported: best`: the source reports the best layout's figure, in its own words."""

    higher: bool  # a rate: the maximum is the best; a time: the minimum
    words: str


@dataclass(frozen=True)
class Declared:
    """One receipt's declaration: rows (None: all), layouts, link family, best (`reported`)."""

    rows: frozenset[int] | None
    layouts: tuple[str, ...]
    link_family: str | None
    best: Best | None = None


@lru_cache(maxsize=1)
def declarations() -> Mapping[str, Declared]:
    """kb/data/end-to-end.json `unstated_layout.receipts`, read once (receipt -> Declared)."""
    from kb.resources import end_to_end

    return end_to_end(SECTION, _declarations)


def _declarations(entry: Any) -> dict[str, Declared]:
    found = {}
    for receipt, node in entry["receipts"].items():
        rows = None if node["rows"] == "all" else frozenset(int(i) for i in node["rows"])
        link = node.get("link")
        family = str(link["family"]) if isinstance(link, dict) else None
        names = tuple(str(n) for n in node["layouts"])
        for name in names:
            degrees(name)  # ValueError on a name that is not a layout
        found[str(receipt)] = Declared(rows, names, family, _best(node.get("reported")))
    return found


def _best(node: Any) -> Best | None:
    """A receipt's `reported` entry: None when absent; ValueError unless it is a best."""
    if node is None:
        return None
    if not isinstance(node, dict) or node.get("value") != "best":
        raise ValueError(f"`reported` must be {{value: best, better, words}}, not {node!r}")
    if node.get("better") not in ("higher", "lower"):
        raise ValueError(f"`reported.better` must be higher or lower, not {node.get('better')!r}")
    return Best(node["better"] == "higher", str(node["words"]))


def engine_ep() -> Mapping[str, str]:
    """`unstated_layout.engines`: engine -> the EP degrees it admits ("1" or "1 or tp")."""
    from kb.resources import end_to_end

    return end_to_end(SECTION, lambda e: {str(k): str(v["ep"]) for k, v in e["engines"].items()})


def declared(receipt: str, index: int, row: Mapping[str, Any]) -> Declared | None:
    """The declaration that prices this row, when it states no layout (no `tp`)."""
    if "tp" in row:
        return None
    found = declarations().get(receipt)
    if found is None or (found.rows is not None and index not in found.rows):
        return None
    return found


def degrees(name: str) -> dict[str, int]:
    """A layout's degrees from its name (kb.plan.enumerate's: `dp4-tp2`, `tp16-ep16`, `tp1`)."""
    found = dict.fromkeys(DEGREES, 1)
    for part in name.split("-"):
        match = _PART.match(part)
        if match is None:
            raise ValueError(f"{name!r} is not a layout (parts tpN, ppN, epN, dpN)")
        found[match.group(1)] = int(match.group(2))
    return found


def reference_link(kb: KnowledgeBase, hardware: str, family: str) -> str | None:
    """The accelerator's reference node network (kb plan's assumption), if of `family`."""
    record = kb.get(hardware)
    link_id = record.get("reference_node.scale_out.interconnect") if record else None
    link = kb.get(link_id) if isinstance(link_id, str) else None
    return str(link_id) if link is not None and link.get("family") == family else None


def stated_rows(
    kb: KnowledgeBase, record: Record, row: Mapping[str, Any], decl: Declared
) -> tuple[tuple[str, dict[str, Any], tuple[str, ...]], ...]:
    """Each declared layout: its name, the row with it written in, and the notes it adds.

    Empty when the row's nodes need a link between them that is not taken.
    """
    stated_nodes = row.get("nodes")
    nodes = stated_nodes if isinstance(stated_nodes, int) else 1
    link: str | None = None
    notes: tuple[str, ...] = ()
    if decl.link_family is not None and nodes > 1:
        hardware = row.get("hardware") or next(iter(record.get("hardware") or []), "")
        link = reference_link(kb, str(hardware), decl.link_family)
        if link is None:
            return ()
        notes = (
            f"between the nodes: {link}, the planner's reference network ({decl.link_family})",
        )
    found = []
    for name in decl.layouts:
        stated = {**row, **degrees(name), "nodes": nodes}
        if link is not None:
            stated["inter_link"] = link
        found.append((name, stated, (f"layout {name}: the source states none ({SECTION})", *notes)))
    return tuple(found)


@dataclass(frozen=True)
class Entry:
    """One layout as priced: its error (None: not priced), whether it fits, how it is shown."""

    name: str
    error: Fraction | None
    fits: bool
    shown: str  # "15.36 ms (-33.5%)"
    why: str = ""  # why it is not priced
    value: Fraction | None = None  # the prediction (`best` takes the best of them)


@dataclass(frozen=True)
class Verdict:
    """`unfit` (no layout fits), `missed` (one-sided miss), `best`, `open` or `unpriced`."""

    kind: str
    reason: str
    nearest: str | None = None


def judge(entries: Sequence[Entry], band: Fraction) -> Verdict:
    """The row's verdict from its layouts (the rule in the module docstring)."""
    fitting = [e for e in entries if e.fits]
    scored = [e for e in fitting if e.error is not None]
    unfit = [e.name for e in entries if not e.fits]
    tail = "; ".join(
        ([f"does not fit: {', '.join(unfit)}"] if unfit else [])
        + [f"not priced: {e.name} ({e.why})" for e in fitting if e.error is None]
    )
    if not fitting:
        return Verdict("unfit", f"measured, but kb finds it fits under no layout ({tail})")
    if not scored:
        return Verdict("unpriced", f"no layout priced ({tail})")
    within = [e for e in scored if e.error is not None and abs(e.error) <= band]
    sides = {e.error > 0 for e in scored if e.error is not None}
    if len(scored) == len(fitting) and not within and len(sides) == 1:
        nearest = min(scored, key=lambda e: abs(e.error or Fraction(0)))
        reason = (
            f"outside the band under every layout ({_listed(scored)}); the nearest, "
            f"{nearest.name}, is shown"
        )
        return Verdict("missed", reason + (f"; {tail}" if tail else ""), nearest.name)
    others = [e for e in scored if e not in within]
    if within:
        reason = f"consistent with {_listed(within)}"
        reason += f"; outside the band: {_listed(others)}" if others else ""
    else:
        reason = (
            "no layout within the band, and they miss on both sides or one is not priced "
            f"({_listed(scored)})"
        )
    reason += "; the source does not state which ran" + (f"; {tail}" if tail else "")
    return Verdict("open", reason)


def best(entries: Sequence[Entry], reported: Best) -> Verdict:
    """A best row's verdict: kb's best fitting layout (`nearest`), to be judged on the band."""
    fitting = [e for e in entries if e.fits]
    unfit = [e.name for e in entries if not e.fits]
    tail = f"; does not fit: {', '.join(unfit)}" if unfit else ""
    if not fitting:
        return Verdict("unfit", f"measured, but kb finds it fits under no layout ({tail[2:]})")
    priced = [(e.value, e) for e in fitting if e.value is not None]
    if len(priced) < len(fitting):
        kind = "open" if priced else "unpriced"
        missing = ", ".join(f"{e.name} ({e.why})" for e in fitting if e.value is None)
        return Verdict(kind, f"the source reports the best layout, but not priced: {missing}")
    top = (max if reported.higher else min)(priced, key=lambda pair: pair[0])[1]
    reason = (
        f"the source reports the best layout ({reported.words}): kb's best is {top.name}, "
        f"the {'highest' if reported.higher else 'lowest'} of {_listed(fitting)}{tail}"
    )
    return Verdict("best", reason, top.name)


def _listed(entries: Sequence[Entry]) -> str:
    return ", ".join(f"{e.name} {e.shown}" for e in entries)
