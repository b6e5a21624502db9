"""Symbolic work that records with the same maths share, done once per run.

A family of flop classes repeats the same symbols, equations and claims with
other bound records. The engine makes one `SharedWork` per analysis (kept as
`Analysis.shared`, so nothing outlives the run) and planbuild.py does, through it,
the work that does not depend on bound values once per distinct text:

- `build_system` once per (symbols, equations); each record gets its own copy,
  because its items and issues lists are extended by the later steps;
- the derivations once per (symbols, equations, derivations): they bind nothing;
- a claim that binds no other record: its verdict once per (system, claim
  without its id); the id enters only the items and messages, added per record;
- a claim that binds: its plan entry (definitions expanded, compiled to an exact
  tree, planbuild.py) once per (system, claim without what enters only at
  evaluation: expect, tolerances, the bound specs, a numeric factor); each record
  is then judged from the tree exactly as plan.py does.

Keys are the `repr` of the sections as authored, so order and types count and
two texts share only when they are the same. A record's (symbols, equations) text
is repr'd once a run and named by a short label (`system_label`; repr'ing it in
every key was ~0.15-0.4 s of CPU at 10,000 records). No SymPy is imported
until a record is checked. `built` counts what was really built
(the engine returns it in RunStats). Each memo is dropped whole at MAX entries.
Work a budget stopped (kb.equations.timeout.budgets_stopped) is shared too, and
its stop counted again for each record that reuses it (`stopped`): a record's result
says it was decided by a budget whether it did the work or reused it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kb.equations.claimbase import is_binding
from kb.equations.results import Issue, Item
from kb.equations.timeout import budgets_stopped, note_stopped
from kb.run import Spending

if TYPE_CHECKING:  # SymPy is imported by the first record checked, not by the engine
    from kb.equations.claims import ClaimVerdict
    from kb.equations.system import System

MAX = 4096
MAX_RECORDS = 65536  # data objects whose label is remembered (dropped whole past it)
# The fields a binding claim's plan entry is built from (planbuild._compile*); the
# rest (id, text, expect, tolerances, the bound specs' targets) enters at evaluation.
ENTRY_FIELDS = ("kind", "of", "expr", "replace")


def _key(*parts: Any) -> str | None:
    try:
        return repr(parts)
    except Exception:  # a nesting too deep for repr: that record shares nothing
        return None


def family_key(data: Mapping[str, Any], fallback: str, work: SharedWork) -> str:
    """Records of one family share a System (and mostly their claims): the text's label."""
    return work.system_label(data) or fallback


class SharedWork:
    """One run's memos of symbolic work, by text (a None key is never kept), and their tally."""

    def __init__(self, run: Spending | None = None) -> None:
        self.run = run  # what the run's checks spend from (kb.run.RunContext.budget)
        self.systems: dict[str | None, System] = {}
        self.derived: dict[str | None, tuple[list[Item], list[Issue]]] = {}
        self.verdicts: dict[str | None, ClaimVerdict] = {}
        self.entries: dict[str | None, dict[str, Any]] = {}
        self.built = {"built_systems": 0, "built_claims": 0, "built_derivations": 0}
        self.labels: dict[str, str] = {}  # a (symbols, equations) text -> its label
        self.labelled = 0  # labels handed out (never reused, even once `labels` is dropped)
        self.records: dict[int, tuple[Mapping[str, Any], str | None]] = {}  # id -> (data, label)
        self.stopped: set[tuple[str, str]] = set()  # (memo, key): work a budget stopped
        self.compile_stops = (
            0  # stops while compiling plan entries (planbuild: they decide nothing)
        )

    def note(self, memo: str, key: str | None, before: int) -> None:
        """Remember that the work just kept under `key` was stopped by a budget, if it was.

        `before`: budgets_stopped(self.run) when the work began.
        """
        if key is not None and budgets_stopped(self.run) != before:
            self.stopped.add((memo, key))

    def reused(self, memo: str, key: str | None) -> None:
        """Count again the stop of work reused from `memo` (see `note`)."""
        if key is not None and (memo, key) in self.stopped:
            note_stopped(self.run)

    def system_label(self, data: Mapping[str, Any]) -> str | None:
        """A short name for `data`'s (symbols, equations) text (None: it cannot be repr'd).

        Repr'd once per data object (kept beside its label, so an id never names another).
        """
        known = self.records.get(id(data))
        if known is not None and known[0] is data:
            return known[1]
        text = _key(data.get("symbols"), data.get("equations"))
        label = None if text is None else self.labels.get(text)
        if text is not None and label is None:
            if len(self.labels) >= MAX:
                self.labels.clear()
            label = self.labels[text] = f"system {self.labelled}"
            self.labelled += 1
        if len(self.records) >= MAX_RECORDS:
            self.records.clear()
        self.records[id(data)] = (data, label)
        return label

    def keep(self, memo: dict[str | None, Any], key: str | None, value: Any, built: str) -> None:
        """Count what was built as `built` and keep it under `key` (unless that is None)."""
        self.built[built] += 1
        if key is not None:
            if len(memo) >= MAX:
                memo.clear()
            memo[key] = value

    def system_of(self, data: Mapping[str, Any]) -> tuple[System, str | None]:
        """Return a fresh copy of the record's System and its key (None: nothing shared)."""
        from kb.equations.system import System, build_system

        key = self.system_label(data)
        known = self.systems.get(key)
        if known is None:
            before = budgets_stopped(self.run)
            known = build_system(data, self.run)
            self.keep(self.systems, key, known, "built_systems")
            self.note("systems", key, before)
        else:
            self.reused("systems", key)
        fields = (dict(known.symbols), dict(known.units), list(known.issues), list(known.items))
        return System(*fields, dict(known.equations), set(known.failed)), key

    def derive(self, system: System, data: Mapping[str, Any]) -> None:
        """Check the derivations, or add the items and issues the same text gave before."""
        label = self.system_label(data)
        key = None if label is None else _key(label, data.get("derivations"))
        known = self.derived.get(key)
        if known is None:
            from kb.equations.derive import check_derivations

            items, issues = len(system.items), len(system.issues)
            before = budgets_stopped(self.run)
            check_derivations(system, data.get("derivations"), self.run)
            known = system.items[items:], system.issues[issues:]
            self.keep(self.derived, key, known, "built_derivations")
            self.note("derived", key, before)
            return
        self.reused("derived", key)
        system.items.extend(known[0])
        system.issues.extend(known[1])


def verdict_key(system_key: str | None, claim: Mapping[str, Any]) -> str | None:
    """A claim that binds nothing: everything but its id decides its verdict."""
    if system_key is None:
        return None
    return _key("verdict", system_key, [(k, v) for k, v in claim.items() if k != "id"])


def entry_key(system_key: str | None, claim: Mapping[str, Any]) -> str | None:
    """A binding claim's entry key: ENTRY_FIELDS, the bound names, the changes, the factor.

    A bound change and a finite factor are placeholders (their values come at
    evaluation); a literal or expression change is compiled in.
    """
    if system_key is None:
        return None
    bind, change, factor = claim.get("bind"), claim.get("change"), claim.get("factor")
    names = list(bind) if isinstance(bind, Mapping) else None
    changes = (
        [(n, "<bound>" if is_binding(s) else s) for n, s in change.items()]
        if isinstance(change, Mapping)
        else change
    )
    fields = [(f, claim[f]) for f in ENTRY_FIELDS if f in claim]
    return _key(
        "entry",
        system_key,
        fields,
        names,
        "change" in claim,
        changes,
        "factor" in claim,
        "<number>" if finite_number(factor) else factor,
    )


def finite_number(value: Any) -> bool:
    """A YAML number that is not a bool, NaN or infinite (an effect claim's plannable factor)."""
    numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
    return numeric and value == value and value not in (float("inf"), float("-inf"))


def system_of(data: Mapping[str, Any], work: SharedWork | None = None) -> tuple[System, str | None]:
    """The record's System through `work` (a run's: `Analysis.shared`), else built afresh."""
    return (work or SharedWork()).system_of(data)
