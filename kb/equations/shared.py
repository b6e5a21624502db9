"""Symbolic work that records with the same maths share, done once per process.

A family of flop classes repeats the same symbols, equations and claims with
other bound records. A cold run (engine.py, `shared=True` in planbuild.py) does
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
two texts share only when they are the same. `BUILT` (results.py) counts what this process's
memos really built: "built_systems", "built_claims", "built_derivations" (the
engine returns a run's share of it in RunStats). Each memo is dropped whole when
it reaches MAX entries.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kb.equations.claims import Verdict
from kb.equations.derive import check_derivations
from kb.equations.results import BUILT, Issue, Item
from kb.equations.system import System, build_system

MAX = 4096
_SYSTEMS: dict[str, System] = {}
_DERIVED: dict[str, tuple[list[Item], list[Issue]]] = {}
_VERDICTS: dict[str, Verdict] = {}
_ENTRIES: dict[str, dict[str, Any]] = {}
# The fields a binding claim's plan entry is built from (planbuild._compile*); the
# rest (id, text, expect, tolerances, the bound specs' targets) enters at evaluation.
ENTRY_FIELDS = ("kind", "of", "expr", "replace")


def _key(*parts: Any) -> str | None:
    try:
        return repr(parts)
    except Exception:  # nothing YAML loads should fail, but a key is only an optimisation
        return None


def _remember(memo: dict[str, Any], key: str, value: Any) -> None:
    if len(memo) >= MAX:
        memo.clear()
    memo[key] = value


def family_key(data: Mapping[str, Any], fallback: str) -> str:
    """Records of one family share a System (and mostly their claims): one key per text."""
    return _key(data.get("symbols"), data.get("equations")) or fallback


def system_of(data: Mapping[str, Any]) -> tuple[System, str | None]:
    """Return a fresh copy of the record's System and its key (None: built unshared)."""
    key = _key(data.get("symbols"), data.get("equations"))
    known = _SYSTEMS.get(key) if key is not None else None
    if known is None:
        known = build_system(data)
        BUILT["built_systems"] += 1
        if key is None:
            return known, None
        _remember(_SYSTEMS, key, known)
    return System(
        dict(known.symbols),
        dict(known.units),
        dict(known.equations),
        list(known.issues),
        list(known.items),
        set(known.failed),
    ), key


def derive_once(system: System, data: Mapping[str, Any]) -> None:
    """Check the derivations, or add the items and issues the same text gave before."""
    key = _key(data.get("symbols"), data.get("equations"), data.get("derivations"))
    known = _DERIVED.get(key) if key is not None else None
    if known is None:
        items, issues = len(system.items), len(system.issues)
        check_derivations(system, data.get("derivations"))
        BUILT["built_derivations"] += 1
        known = system.items[items:], system.issues[issues:]
        if key is not None:
            _remember(_DERIVED, key, known)
        return
    system.items.extend(known[0])
    system.issues.extend(known[1])


def verdict_key(system_key: str, claim: Mapping[str, Any]) -> str | None:
    """A claim that binds nothing: everything but its id decides its verdict."""
    return _key("verdict", system_key, [(k, v) for k, v in claim.items() if k != "id"])


def known_verdict(key: str | None) -> Verdict | None:
    return _VERDICTS.get(key) if key is not None else None


def keep_verdict(key: str | None, verdict: Verdict | None) -> None:
    """Remember a freshly computed verdict (not a timeout: the budget is wall clock)."""
    if verdict is None:
        return
    BUILT["built_claims"] += 1
    if key is not None and verdict[0] != "timeout":
        _remember(_VERDICTS, key, verdict)


def entry_key(system_key: str, claim: Mapping[str, Any], is_binding: Any) -> str | None:
    """A binding claim's entry key: ENTRY_FIELDS, the bound names, the changes, the factor.

    A change bound to a quantity is a placeholder in the entry (its value comes
    at evaluation), a literal or expression change is compiled in; the entry needs
    a finite numeric factor, whose value is compared at evaluation.
    """
    bind, change, factor = claim.get("bind"), claim.get("change"), claim.get("factor")
    names = list(bind) if isinstance(bind, Mapping) else None
    changes = (
        [(n, "<bound>" if is_binding(s) else s) for n, s in change.items()]
        if isinstance(change, Mapping)
        else change
    )
    numeric = (
        isinstance(factor, (int, float))
        and not isinstance(factor, bool)
        and (factor == factor and factor not in (float("inf"), float("-inf")))
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
        "<number>" if numeric else factor,
    )


def known_entry(key: str | None) -> dict[str, Any] | None:
    return _ENTRIES.get(key) if key is not None else None


def keep_entry(key: str | None, entry: dict[str, Any]) -> None:
    BUILT["built_claims"] += 1
    if key is not None:
        _remember(_ENTRIES, key, entry)


def clear() -> None:
    """Forget everything shared so far (tests: the next records build afresh)."""
    for memo in (_SYSTEMS, _DERIVED, _VERDICTS, _ENTRIES):
        memo.clear()
