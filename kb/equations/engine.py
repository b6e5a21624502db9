"""Analyse a whole KnowledgeBase once per run: equations, derivations, claims, figures.

`analyse(kb)` runs once per run: the checker's equations stage calls it and the analysis
is kept in the knowledge base's run context (`analysed(kb)`), where the EQ rules,
the site and `kb show` find it. Per record the result is cached by content hash (see
cache.py); on a hit nothing symbolic runs and SymPy is not even imported. On a miss
whose equation sections are unchanged (only the values its claims bind changed), the
record's plan, cached by the content of those sections alone, re-checks it with
fractions (plan.py), still without SymPy; only records without a usable plan take the
symbolic path, where records with the same maths share the run's symbolic work
(`Analysis.shared`, shared.py: systems, derivations and claims built once per distinct
text). The run's statistics (kb.run.RunStats, returned as `Analysis.stats`) count
records served from the cache (`cached`), from plans (`planned`) and checked on the
symbolic path (`symbolic`), and what the run built for it, in this process and in its
workers (`built_systems`, `built_claims`, `built_derivations`); the tests assert on them.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from kb import fingerprint
from kb.equations.bind import BindError, Bound, resolve
from kb.equations.cache import ResultCache, canonical, content_key
from kb.equations.claimbase import claim_specs
from kb.equations.compose import compose
from kb.equations.figures import check_model
from kb.equations.plan import PLAN_FORMAT, run_plan
from kb.equations.results import (
    Issue,
    Item,
    issue_from,
    issue_json,
    item_from,
    item_json,
)
from kb.equations.shared import SharedWork, family_key
from kb.equations.timeout import default_budget, default_work, record_budget
from kb.model import KnowledgeBase, Record
from kb.run import Kept, RunStats
from kb.store import cache_dir
from kb.workers import map_forked

SECTIONS = ("symbols", "equations", "derivations", "claims")
FORK_FAMILIES = 6  # fewer families are checked in this process


@dataclass
class RecordResult:
    """Everything checked in one record: items (for the site) and issues (for rules)."""

    record_id: str
    path: str
    items: list[Item] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)
    # A budget decided part of it (kb.equations.timeout.budgets_stopped): no store keeps it.
    budgeted: bool = False


@dataclass
class Analysis:
    """The per-run result: per-record results (who binds whom: kb.reads.DependencyGraph).

    `shared`: the run's symbolic work by text (shared.py), for readers after the run.
    """

    results: dict[str, RecordResult] = field(default_factory=dict)
    stats: RunStats = field(default_factory=RunStats)
    shared: SharedWork = field(default_factory=SharedWork)

    def issues(self, code: str) -> Iterator[tuple[RecordResult, Issue]]:
        for record_id in sorted(self.results):
            result = self.results[record_id]
            for issue in result.issues:
                if issue.code == code:
                    yield result, issue


# result key, plan key, bindings, the record with its `uses` resolved, compose.py's issues
Pending = tuple[str, str, dict[str, "Bound | BindError"], Record, tuple[Issue, ...]]


EQUATIONS: Kept[Analysis] = Kept("equations analysis")  # analyse(kb), once per run


def analyse(kb: KnowledgeBase, use_cache: bool = True) -> Analysis:
    """Analyse `kb`, once per run (the analysis is kept in its run context, EQUATIONS)."""
    default_budget(), default_work()  # a bad $KB_EQ_BUDGET/$KB_EQ_WORK: UsageProblem (exit 2)
    done = kb.run.kept(EQUATIONS)
    if done is not None:
        return done
    salt = fingerprint.salt()  # a result's key names its record's id (from the path under the root)
    cache = ResultCache(cache_dir(kb.root), salt) if use_cache else ResultCache(None)
    # this run's checks spend from its own budget (kb.run.budget), through its shared work
    analysis = Analysis(stats=kb.run.stats, shared=SharedWork(kb.run.budget))
    pending: dict[str, Pending] = {}
    specs: dict[str, Bound | BindError] = {}  # `id#field` bindings resolved, for every record
    for record in kb:
        if not kb.in_focus(record):
            continue  # context of a partial run (kb.incremental): nobody reads its findings
        result = _analyse_record(kb, record, cache, pending, specs)
        if result is not None:
            analysis.results[record.id] = result
    _run_pending(kb, pending, cache, analysis)
    cache.flush(prune=kb.run.focus is None)  # every record analysed: what was not used goes
    return kb.run.keep(EQUATIONS, analysis)


def analysed(kb: KnowledgeBase) -> Analysis | None:
    """The analysis of `kb` if this process has made it (never starts one)."""
    return kb.run.kept(EQUATIONS)


def _run_pending(
    kb: KnowledgeBase, pending: dict[str, Pending], cache: ResultCache, analysis: Analysis
) -> None:
    """Check the records the cache could not answer, on several cores when worth it.

    Records with the same maths share their symbolic work (analysis.shared), so the
    cost is about one symbolic check per distinct text plus exact arithmetic per record.
    A family (records of one symbols-and-equations text) stays in one process, and
    workers are forked (kb.workers) only for FORK_FAMILIES families or more (each
    works on its copy of analysis.shared and returns what it built): forking
    for many cheap records of a few families cost more than it saved (BENCHMARKS.md:
    at 10,000 records in 2 families it doubled the engine's wall time, 1.0 -> 1.9 s).
    """
    if not pending:
        return
    from kb.equations import planbuild  # noqa: F401  # SymPy imported once, before any fork

    families: dict[str, list[str]] = {}
    work = analysis.shared
    for record_id in sorted(pending):
        key = family_key(pending[record_id][3].data, record_id, work)
        families.setdefault(key, []).append(record_id)
    members = list(families.values())

    def checks(family: int) -> Iterator[tuple[str, dict[str, Any], Any]]:
        for record_id in members[family]:
            resolver = _resolver(kb, pending[record_id][2])
            with record_budget(kb.run.budget):
                result, plan = run_record(pending[record_id][3], resolver, work)
            yield record_id, _to_json(result), plan

    def counted(family: int, each: Callable[[str, dict[str, Any], Any], None]) -> dict[str, int]:
        """Check one family, `each` record's JSON handed on as it is made; what was built."""
        built = dict(work.built)
        for record_id, data, plan in checks(family):
            each(record_id, data, plan)
        return {name: work.built[name] - count for name, count in built.items()}

    def job(family: int) -> tuple[list[tuple[str, dict[str, Any], Any]], dict[str, int]]:
        checked: list[tuple[str, dict[str, Any], Any]] = []
        return checked, counted(family, lambda *row: checked.append(row))

    made: dict[str, RecordResult] = {}

    def keep(record_id: str, data: dict[str, Any], plan: Any) -> None:
        analysis.stats.symbolic += 1
        result_key, plan_key, _, record, issues = pending.pop(record_id)
        result = made[record_id] = _with_issues(_from_json(data), issues)
        later = functools.partial(_stored, result, len(issues))  # `data` again, when saved
        cache.put(result_key, data, slot=record.path, plan=plan_key, later=later)
        if plan is not None:
            cache.put(plan_key, plan)

    def add(built: dict[str, int]) -> None:
        for name, count in built.items():
            setattr(analysis.stats, name, getattr(analysis.stats, name) + count)

    # In this process each record's JSON is stored as it is made (at 100,000 records all of
    # them held at once were ~100 MB); from workers, as each family's list arrives.
    forked = map_forked(job, range(len(members)), FORK_FAMILIES, chunk=1)
    if forked is None:
        for family in range(len(members)):
            add(counted(family, keep))
    else:
        for checked, built in forked:
            for row in checked:
                keep(*row)
            add(built)
    work.records.clear()  # the checked records' data is not held by the analysis after the run
    for record_id in sorted(made):  # in id order, as the results were always added
        analysis.results[record_id] = made.pop(record_id)


def has_equations(record: Record) -> bool:
    return any(section in record.data for section in SECTIONS)


def _analyse_record(
    kb: KnowledgeBase,
    record: Record,
    cache: ResultCache,
    pending: dict[str, Pending],
    specs: dict[str, Bound | BindError] | None = None,
) -> RecordResult | None:
    """Return a cheap or cached result now; queue the record in `pending` otherwise.

    `specs`: the run's `id#field` bindings already resolved (a family binds the same
    few records' fields again and again), filled as they are met.
    """
    if record.kind == "model":
        items, issues = check_model(record.data)
        return RecordResult(record.id, record.path, items, issues) if items or issues else None
    if not has_equations(record) or _ambiguous(kb, record):
        return None
    composed = compose(kb, record)  # `uses` resolved: the used text enters every key below
    record = composed.record
    resolved = _resolve_all(kb, record, {} if specs is None else specs)
    sections = canonical({s: record.data.get(s) for s in SECTIONS})  # once, for both keys
    bindings = canonical({spec: _bound_key(b) for spec, b in resolved.items()})
    key = content_key("result", record.path, record.id, sections, bindings)  # id: from the root
    cached = cache.get(key, slot=record.path)
    if cached is not None:
        kb.run.stats.cached += 1
        return _with_issues(_from_json(cached), composed.issues)
    plan_key = content_key("plan", str(PLAN_FORMAT), sections)
    plan = cache.get(plan_key)
    if isinstance(plan, Mapping):
        result = run_planned(record, plan, _resolver(kb, resolved))
        if result is not None:
            kb.run.stats.planned += 1
            cache.put(key, _to_json(result), slot=record.path, plan=plan_key)
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


def run_record(
    record: Record, resolver: Any, work: SharedWork | None = None
) -> tuple[RecordResult, Any]:
    """Run every symbolic check of one record; also return its plan (None if it has none).

    `record` has its `uses` equations resolved (compose.compose; analyse() does it):
    an unresolved `uses` entry is skipped here, since compose.py reports it. `work`:
    the run's shared symbolic work (None: the record is checked as if alone).
    """
    from kb.equations.planbuild import check_record

    system, plan, budgeted = check_record(record.data, resolver, work or SharedWork())
    return RecordResult(record.id, record.path, system.items, system.issues, budgeted), plan


def run_planned(record: Record, plan: Mapping[str, Any], resolver: Any) -> RecordResult | None:
    """Re-check a record from its plan, without SymPy; None if the plan cannot answer."""
    found = run_plan(plan, record.data, resolver)
    return None if found is None else RecordResult(record.id, record.path, *found)


def binding_specs(record: Record) -> Iterator[tuple[str, str, Any]]:
    """(claim id, field, spec) for every binding in the record's claims (`measured` too)."""
    claims = record.data.get("claims")
    for index, claim in enumerate(claims if isinstance(claims, list) else []):
        if isinstance(claim, Mapping):  # a prediction's measurement keys the result too
            for field_name, spec in claim_specs(claim):
                yield str(claim.get("id", index)), field_name, spec


def _spec_key(spec: Any) -> str:
    return spec if isinstance(spec, str) else json.dumps(spec, sort_keys=True, default=str)


def _resolve_all(
    kb: KnowledgeBase, record: Record, specs: dict[str, Bound | BindError]
) -> dict[str, Bound | BindError]:
    """The record's bindings resolved, an `id#field` text once a run (through `specs`).

    resolve() is pure (the knowledge base is frozen; a Bound or BindError is immutable).
    """
    found: dict[str, Bound | BindError] = {}
    for _, _, spec in binding_specs(record):
        if isinstance(spec, str):
            known = specs.get(spec)
            if known is None:
                known = specs[spec] = resolve(kb, spec)
            found.setdefault(spec, known)
        elif isinstance(spec, Mapping):
            found.setdefault(_spec_key(spec), resolve(kb, spec))
    return found


def _bound_key(bound: Bound | BindError) -> str:
    return bound.key() if isinstance(bound, Bound) else f"error:{bound.code}:{bound.message}"


def _to_json(result: RecordResult) -> dict[str, Any]:
    data: dict[str, Any] = {
        "record_id": result.record_id,
        "path": result.path,
        "items": [item_json(i) for i in result.items],
        "issues": [issue_json(i) for i in result.issues],
    }
    if result.budgeted:  # only then: a kept result's text is what it always was
        data["budgeted"] = True
    return data


def _stored(result: RecordResult, composed: int) -> dict[str, Any]:
    """The JSON a result was made from (`_from_json`), without compose.py's `composed` issues.

    The JSON round trip is exact (`_to_json(_from_json(data)) == data`), so this is what
    the cache kept when it held the JSON itself.
    """
    data = _to_json(result)
    data["issues"] = data["issues"][composed:]
    return data


def _from_json(data: Mapping[str, Any]) -> RecordResult:
    issues = [issue_from(i) for i in data["issues"]]
    items = [item_from(i) for i in data["items"]]
    return RecordResult(
        data["record_id"], data["path"], items, issues, data.get("budgeted") is True
    )
