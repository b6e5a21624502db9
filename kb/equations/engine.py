"""Analyse a whole KnowledgeBase once per run: equations, derivations, claims, figures.

`analyse(kb)` is memoised per KnowledgeBase object, so the dozen EQ rules share
one pass. Per record the result is cached by content hash (see cache.py); on a
hit nothing symbolic runs and SymPy is not even imported. `STATS` counts the
records whose checks really ran, which is what the cache tests assert on.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from kb.equations.bind import BindError, Bound, referenced_records, resolve
from kb.equations.cache import ResultCache, content_key
from kb.equations.figures import check_model
from kb.equations.results import Issue, Item
from kb.findings import Location
from kb.model import KnowledgeBase, Record
from kb.recordcache import cache_dir

SECTIONS = ("symbols", "equations", "derivations", "claims")
STATS: dict[str, int] = {"symbolic": 0, "cached": 0}


@dataclass
class RecordResult:
    """Everything checked in one record: items (for the site) and issues (for rules)."""

    record_id: str
    path: str
    items: list[Item] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)


@dataclass
class Analysis:
    """The per-run result: per-record results and the reverse binding index."""

    results: dict[str, RecordResult] = field(default_factory=dict)
    bound_by: dict[str, list[tuple[str, str]]] = field(default_factory=dict)

    def issues(self, code: str) -> Iterator[tuple[RecordResult, Issue]]:
        for record_id in sorted(self.results):
            result = self.results[record_id]
            for issue in result.issues:
                if issue.code == code:
                    yield result, issue

    def dependants(self, record_id: str) -> list[str]:
        """List records whose claims bind a field of `record_id`."""
        found = {dep for key, deps in self.bound_by.items()
                 if key.partition("#")[0] == record_id for dep, _ in deps}
        return sorted(found - {record_id})


_MEMO: dict[int, tuple[weakref.ref[KnowledgeBase], Analysis]] = {}


def analyse(kb: KnowledgeBase, use_cache: bool = True) -> Analysis:
    """Analyse `kb`, once per KnowledgeBase object."""
    memo = _MEMO.get(id(kb))
    if memo is not None and memo[0]() is kb:
        return memo[1]
    cache = ResultCache(cache_dir(kb.root) if use_cache else None)
    analysis = Analysis()
    pending: dict[str, str] = {}
    for record in kb:
        _index_bindings(analysis, record)
        result = _analyse_record(kb, record, cache, pending)
        if result is not None:
            analysis.results[record.id] = result
    _run_pending(kb, pending, cache, analysis)
    _MEMO[id(kb)] = (weakref.ref(kb), analysis)
    weakref.finalize(kb, _MEMO.pop, id(kb), None)  # forget it with the KnowledgeBase
    return analysis


def _run_pending(kb: KnowledgeBase, pending: dict[str, str], cache: ResultCache,
                 analysis: Analysis) -> None:
    """Check the records the cache could not answer, on several cores when worth it."""
    from kb.equations.parallel import map_records

    def job(record_id: str) -> dict[str, Any]:
        record = kb.records[record_id]
        return _to_json(run_record(record, lambda spec: resolve(kb, spec)))

    ids = sorted(pending)
    for record_id, data in zip(ids, map_records(job, ids), strict=True):
        STATS["symbolic"] += 1
        cache.put(pending[record_id], data)
        analysis.results[record_id] = _from_json(data)


def dependants(kb: KnowledgeBase, record_id: str) -> list[str]:
    """Ids of records that must be re-checked when `record_id` changes."""
    return analyse(kb).dependants(record_id)


def has_equations(record: Record) -> bool:
    return any(section in record.data for section in SECTIONS)


def _analyse_record(kb: KnowledgeBase, record: Record, cache: ResultCache,
                    pending: dict[str, str]) -> RecordResult | None:
    """Return a cheap or cached result now; queue the record in `pending` otherwise."""
    if record.kind == "model":
        items, issues = check_model(record.data)
        return RecordResult(record.id, record.path, items, issues) if items or issues else None
    if not has_equations(record):
        return None
    resolved = _resolve_all(kb, record)
    key = content_key({"path": record.path, "sections": {s: record.data.get(s) for s in SECTIONS},
                       "bindings": {spec: _bound_key(b) for spec, b in resolved.items()}})
    cached = cache.get(key)
    if cached is not None:
        STATS["cached"] += 1
        return _from_json(cached)
    pending[record.id] = key
    return None


def run_record(record: Record, resolver: Any) -> RecordResult:
    """Run every symbolic check of one record (no cache)."""
    from kb.equations.claims import check_claims
    from kb.equations.derive import check_derivations
    from kb.equations.system import build_system

    system = build_system(record.data)
    _check_derivations_once(system, record.data, check_derivations)
    check_claims(system, record.data.get("claims"), resolver)
    return RecordResult(record.id, record.path, system.items, system.issues)


# Derivation results by the exact text of (symbols, equations, derivations): records that
# share their maths (a family of flop classes) are re-derived once per process, not once
# each. Derivations bind nothing, so their items and issues depend on these sections only.
_DERIVED: dict[str, tuple[list[Any], list[Any]]] = {}
_DERIVED_MAX = 4096


def _check_derivations_once(system: Any, data: Any, check_derivations: Any) -> None:
    try:
        key = json.dumps([data.get(s) for s in ("symbols", "equations", "derivations")],
                         default=repr)
    except (TypeError, ValueError):  # unusual keys: just check
        check_derivations(system, data.get("derivations"))
        return
    known = _DERIVED.get(key)
    if known is None:
        items, issues = len(system.items), len(system.issues)
        check_derivations(system, data.get("derivations"))
        if len(_DERIVED) >= _DERIVED_MAX:
            _DERIVED.clear()
        known = _DERIVED[key] = (system.items[items:], system.issues[issues:])
    else:
        system.items.extend(known[0])
        system.issues.extend(known[1])


def binding_specs(record: Record) -> Iterator[tuple[str, str, Any]]:
    """(claim id, field, spec) for every binding in the record's claims."""
    claims = record.data.get("claims")
    for index, claim in enumerate(claims if isinstance(claims, list) else []):
        if not isinstance(claim, Mapping):
            continue
        for field_name in ("bind", "change"):
            specs = claim.get(field_name)
            for spec in specs.values() if isinstance(specs, Mapping) else ():
                yield str(claim.get("id", index)), field_name, spec


def _spec_key(spec: Any) -> str:
    return spec if isinstance(spec, str) else json.dumps(spec, sort_keys=True, default=str)


def _resolve_all(kb: KnowledgeBase, record: Record) -> dict[str, Bound | BindError]:
    found: dict[str, Bound | BindError] = {}
    for _, _, spec in binding_specs(record):
        if isinstance(spec, (str, Mapping)):
            found.setdefault(_spec_key(spec), resolve(kb, spec))
    return found


def _bound_key(bound: Bound | BindError) -> str:
    return bound.key() if isinstance(bound, Bound) else f"error:{bound.code}:{bound.message}"


def _index_bindings(analysis: Analysis, record: Record) -> None:
    for claim_id, _, spec in binding_specs(record):
        if referenced_records(spec) is not None:
            analysis.bound_by.setdefault(spec, []).append((record.id, claim_id))


def _to_json(result: RecordResult) -> dict[str, Any]:
    return {"record_id": result.record_id, "path": result.path,
            "items": [asdict(i) for i in result.items],
            "issues": [asdict(i) for i in result.issues]}


def _from_json(data: Mapping[str, Any]) -> RecordResult:
    issues = [Issue(i["code"], i["pointer"], i["message"], i["hint"],
                    tuple(Location(**loc) for loc in i["related"])) for i in data["issues"]]
    items = [Item(**i) for i in data["items"]]
    return RecordResult(data["record_id"], data["path"], items, issues)
