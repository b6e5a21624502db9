"""Analyse a whole KnowledgeBase once per run: equations, derivations, claims, figures.

`analyse(kb)` is memoised per KnowledgeBase object, so the dozen EQ rules share
one pass. Per record the result is cached by content hash (see cache.py); on a
hit nothing symbolic runs and SymPy is not even imported. On a miss whose
equation sections are unchanged (only the values its claims bind changed), the
record's plan, cached by the content of those sections alone, re-checks it with
fractions (plan.py), still without SymPy; only records without a usable plan
take the symbolic path, where records with the same maths share the symbolic
work (shared.py: systems, derivations and claims built once per distinct text).
`STATS` counts records served from the cache ("cached"), from plans ("planned")
and checked on the symbolic path ("symbolic"), and what was really built
("built_systems", "built_claims", "built_derivations"); the tests assert on it.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from kb.equations.bind import BindError, Bound, referenced_records, resolve
from kb.equations.cache import ResultCache, content_key
from kb.equations.compose import compose, uses_specs
from kb.equations.figures import check_model
from kb.equations.plan import PLAN_FORMAT, run_plan
from kb.equations.results import (
    STATS,
    Issue,
    Item,
    issue_from,
    issue_json,
    item_from,
    item_json,
)
from kb.equations.timeout import default_budget
from kb.model import KnowledgeBase, Record
from kb.recordcache import cache_dir

SECTIONS = ("symbols", "equations", "derivations", "claims")


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
        found = {
            dep
            for key, deps in self.bound_by.items()
            if key.partition("#")[0] == record_id
            for dep, _ in deps
        }
        return sorted(found - {record_id})


_MEMO: dict[int, tuple[weakref.ref[KnowledgeBase], Analysis]] = {}
# result key, plan key, bindings, the record with its `uses` resolved, compose.py's issues
Pending = tuple[str, str, dict[str, "Bound | BindError"], Record, tuple[Issue, ...]]


def analyse(kb: KnowledgeBase, use_cache: bool = True) -> Analysis:
    """Analyse `kb`, once per KnowledgeBase object."""
    default_budget()  # a bad $KB_EQ_BUDGET stops kb here (UsageProblem, exit 2), not per check
    memo = _MEMO.get(id(kb))
    if memo is not None and memo[0]() is kb:
        return memo[1]
    cache = ResultCache(cache_dir(kb.root) if use_cache else None)
    analysis = Analysis()
    pending: dict[str, Pending] = {}
    for record in kb:
        _index_bindings(analysis, record)
        if not kb.in_focus(record):
            continue  # context of a partial run (kb.incremental): nobody reads its findings
        result = _analyse_record(kb, record, cache, pending)
        if result is not None:
            analysis.results[record.id] = result
    _run_pending(kb, pending, cache, analysis)
    cache.flush()
    _MEMO[id(kb)] = (weakref.ref(kb), analysis)
    weakref.finalize(kb, _MEMO.pop, id(kb), None)  # forget it with the KnowledgeBase
    return analysis


def _run_pending(
    kb: KnowledgeBase, pending: dict[str, Pending], cache: ResultCache, analysis: Analysis
) -> None:
    """Check the records the cache could not answer, on several cores when worth it.

    Records with the same maths share their symbolic work (shared.py), so the cost
    is about one symbolic check per distinct text plus exact arithmetic per record.
    A family (records of one symbols-and-equations text) stays in one process, and
    workers are forked only for enough families (parallel.py): forking for many
    cheap records of a few families cost more than it saved (BENCHMARKS.md).
    """
    if not pending:
        return
    from kb.equations import planbuild  # noqa: F401  # SymPy imported once, before any fork
    from kb.equations.parallel import map_records
    from kb.equations.shared import family_key

    families: dict[str, list[str]] = {}
    for record_id in sorted(pending):
        families.setdefault(family_key(pending[record_id][3].data, record_id), []).append(record_id)
    members = list(families.values())

    def job(family: int) -> list[tuple[str, dict[str, Any], Any]]:
        checked = []
        for record_id in members[family]:
            resolver = _resolver(kb, pending[record_id][2])
            result, plan = run_record_with_plan(pending[record_id][3], resolver, shared=True)
            checked.append((record_id, _to_json(result), plan))
        return checked

    found = {
        record_id: (data, plan)
        for family in map_records(job, range(len(members)))
        for record_id, data, plan in family
    }
    for record_id in sorted(found):
        data, plan = found[record_id]
        STATS["symbolic"] += 1
        result_key, plan_key, _, _, issues = pending[record_id]
        cache.put(result_key, data)
        if plan is not None:
            cache.put(plan_key, plan)
        analysis.results[record_id] = _with_issues(_from_json(data), issues)


def dependants(kb: KnowledgeBase, record_id: str) -> list[str]:
    """Ids of records that must be re-checked when `record_id` changes."""
    return analyse(kb).dependants(record_id)


def has_equations(record: Record) -> bool:
    return any(section in record.data for section in SECTIONS)


def _analyse_record(
    kb: KnowledgeBase, record: Record, cache: ResultCache, pending: dict[str, Pending]
) -> RecordResult | None:
    """Return a cheap or cached result now; queue the record in `pending` otherwise."""
    if record.kind == "model":
        items, issues = check_model(record.data)
        return RecordResult(record.id, record.path, items, issues) if items or issues else None
    if not has_equations(record) or _ambiguous(kb, record):
        return None
    composed = compose(kb, record)  # `uses` resolved: the used text enters every key below
    record = composed.record
    resolved = _resolve_all(kb, record)
    sections = {s: record.data.get(s) for s in SECTIONS}
    key = content_key(
        {
            "path": record.path,
            "sections": sections,
            "bindings": {spec: _bound_key(b) for spec, b in resolved.items()},
        }
    )
    cached = cache.get(key)
    if cached is not None:
        STATS["cached"] += 1
        return _with_issues(_from_json(cached), composed.issues)
    plan_key = content_key({"plan": PLAN_FORMAT, "sections": sections})
    plan = cache.get(plan_key)
    if isinstance(plan, Mapping):
        result = run_planned(record, plan, _resolver(kb, resolved))
        if result is not None:
            STATS["planned"] += 1
            cache.put(key, _to_json(result))
            return _with_issues(result, composed.issues)
    pending[record.id] = (key, plan_key, resolved, record, composed.issues)
    return None


def _ambiguous(kb: KnowledgeBase, record: Record) -> bool:
    """Whether the record has a repeated key (LD005): which value did the author mean.

    Its maths is checked once the key is not repeated; until then the LD005 error is
    its one finding (checked against the value YAML kept, every derivation that used
    the other could be refuted: findings of a cause they do not name).
    """
    return any(f.code == "LD005" and f.location.path == record.path for f in kb.load_findings)


def _with_issues(result: RecordResult, issues: tuple[Issue, ...]) -> RecordResult:
    """Add compose.py's issues (recomputed every run, never cached) to a result."""
    result.issues[:0] = issues
    return result


def _resolver(kb: KnowledgeBase, resolved: Mapping[str, Bound | BindError]) -> Any:
    """Resolve bindings, taking `id#field` specs already resolved for the cache key."""

    def resolver(spec: Any) -> Bound | BindError:
        known = resolved.get(spec) if isinstance(spec, str) else None
        return known if known is not None else resolve(kb, spec)

    return resolver


def run_record(record: Record, resolver: Any, shared: bool = False) -> RecordResult:
    """Run every symbolic check of one record (no cache)."""
    return run_record_with_plan(record, resolver, shared)[0]


def run_record_with_plan(
    record: Record, resolver: Any, shared: bool = False
) -> tuple[RecordResult, Any]:
    """Run every symbolic check of one record; also return its plan (None if it has none).

    `record` has its `uses` equations resolved (compose.compose; analyse() does it):
    an unresolved `uses` entry is skipped here, since compose.py reports it.

    `shared`: reuse what records with the same maths left this process (shared.py);
    without it every check runs afresh (the tests compare both).
    """
    from kb.equations.planbuild import check_record

    system, plan = check_record(record.data, resolver, shared)
    return RecordResult(record.id, record.path, system.items, system.issues), plan


def run_planned(record: Record, plan: Mapping[str, Any], resolver: Any) -> RecordResult | None:
    """Re-check a record from its plan, without SymPy; None if the plan cannot answer."""
    found = run_plan(plan, record.data, resolver)
    return None if found is None else RecordResult(record.id, record.path, *found)


def binding_specs(record: Record) -> Iterator[tuple[str, str, Any]]:
    """(claim id, field, spec) for every binding in the record's claims (`measured` too)."""
    claims = record.data.get("claims")
    for index, claim in enumerate(claims if isinstance(claims, list) else []):
        if not isinstance(claim, Mapping):
            continue
        if "measured" in claim:  # a prediction's measurement: its value keys the result too
            yield str(claim.get("id", index)), "measured", claim["measured"]
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
    for eq_id, spec in uses_specs(record):  # a composed equation depends on the used one
        if isinstance(spec, str) and referenced_records(spec) is not None:
            analysis.bound_by.setdefault(spec, []).append((record.id, eq_id))


def _to_json(result: RecordResult) -> dict[str, Any]:
    return {
        "record_id": result.record_id,
        "path": result.path,
        "items": [item_json(i) for i in result.items],
        "issues": [issue_json(i) for i in result.issues],
    }


def _from_json(data: Mapping[str, Any]) -> RecordResult:
    issues = [issue_from(i) for i in data["issues"]]
    items = [item_from(i) for i in data["items"]]
    return RecordResult(data["record_id"], data["path"], items, issues)
