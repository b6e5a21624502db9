"""The validation pipeline: load -> schema -> rules -> waivers -> located, sorted findings.

No printing and no exit codes here (that is the command line's job).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kb import fingerprint, overlay
from kb.findings import Finding, Location
from kb.loader import display_path, load_knowledge_base
from kb.model import KnowledgeBase, Record, Reference
from kb.positions import locate, locate_in_string
from kb.recordcache import RecordCache
from kb.references import index_references, record_references
from kb.rules import all_rules
from kb.rules._base import Rule
from kb.store import cache_dir

_LATE_FAMILIES = ("WV",)  # rules that need every other finding first


@dataclass
class CheckResult:
    """What one run found, and the knowledge base it checked."""

    findings: list[Finding]
    kb: KnowledgeBase
    checked_paths: list[str] = field(default_factory=list)


def run_checks(root: Path, paths: Sequence[Path] | None = None, **options: object) -> list[Finding]:
    """The located, sorted findings of a run (see `check` for the knowledge base too)."""
    return check(root, paths, **options).findings  # type: ignore[arg-type]


def check(
    root: Path,
    paths: Sequence[Path] | None = None,
    *,
    base: str | None = None,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
) -> CheckResult:
    """Check the records under `root`; report only on `paths` (and records bound to them)."""
    cache = open_cache(root)
    kb = build_knowledge_base(root, base, cache)
    findings = run_rules(kb)
    cache.save()
    findings = [f for f in findings if selected(f.code, select, ignore)]
    shown = _report_scope(kb, paths)
    if shown is not None:
        findings = [f for f in findings if f.location.path in shown]
    located = sorted(resolve_locations(findings), key=Finding.sort_key)
    checked = sorted(shown) if shown is not None else [r.path for r in kb]
    return CheckResult(located, kb, checked)


def open_cache(root: Path, salt_value: str | None = None) -> RecordCache:
    """The per-file result cache of this records tree (see kb.recordcache)."""
    return RecordCache(cache_dir(root), salt_value or cache_salt())


def cache_salt() -> str:
    """What every cached result depends on besides its file: kb's code, schemas, libraries."""
    return fingerprint.salt()


def build_knowledge_base(
    root: Path,
    base: str | None = None,
    cache: RecordCache | None = None,
    paths: Sequence[Path] | None = None,
    listed: bool = False,
) -> KnowledgeBase:
    """Load every record (or those in `paths`) and index references (and the base revision).

    `listed`: `paths` are record files in record_files' order (kb.loader).
    """
    kb, load_findings = load_knowledge_base(root, paths, cache, listed, checked_alone)
    kb.load_findings = load_findings
    if cache is not None:
        kb.memo["record_cache"] = cache
        index_references_cached(kb, cache)
    else:
        index_references(kb)
    if base is not None:
        from kb.gitbase import attach_base  # only when asked: runs git

        attach_base(kb, root, base)
    return kb


def checked_alone(record: Record) -> tuple[list[tuple[str, str, str]], list[Finding]]:
    """What one file gives on its own: its references and the record-local rules' findings.

    The loader runs this where it parses the file (on all cores for many files) and
    keeps the result in the record cache, where the passes below find it.
    """
    references = [(r.pointer, r.target, r.expected_kind) for r in record_references(record)]
    alone = KnowledgeBase(root="")
    alone.add(record)
    return references, [f for rule in _local_rules() for f in rule.check(alone)]


@functools.cache
def _local_rules() -> tuple[Rule, ...]:
    return tuple(rule for rule in all_rules() if getattr(rule, "LOCAL", False))


def index_references_cached(kb: KnowledgeBase, cache: RecordCache) -> None:
    """index_references, reusing each unchanged file's references from the cache."""
    references: list[Reference] = []
    for record in kb:
        key = cache.key(record.path, record.digest)
        cached = cache.references(key)
        if cached is None:
            found = list(record_references(record))
            cache.put_references(key, [(r.pointer, r.target, r.expected_kind) for r in found])
        else:
            found = [Reference(record.id, *reference) for reference in cached]
        references.extend(found)
    kb.references = references


def run_rules(kb: KnowledgeBase) -> list[Finding]:
    """Run the catalogue; waivers are applied before the waiver rules run.

    With `kb.focus` set, record-local rules look only at the focus (the caller keeps
    only its findings: kb.incremental).
    """
    rules = all_rules()
    kb.memo["known_codes"] = {rule.CODE for rule in rules}
    early = [r for r in rules if not r.CODE.startswith(_LATE_FAMILIES)]
    late = [r for r in rules if r.CODE.startswith(_LATE_FAMILIES)]
    local = [r for r in early if r in _local_rules()]
    findings = local_findings(kb, local)
    findings += [f for rule in early if rule not in local for f in rule.check(kb)]
    findings, used = apply_waivers(kb, findings)
    kb.memo["waivers_used"] = used
    return findings + [f for rule in late for f in rule.check(kb)]


def local_findings(kb: KnowledgeBase, rules: Sequence[Rule]) -> list[Finding]:
    """The record-local rules' findings, from the record cache for files it knows."""
    cache: RecordCache | None = kb.memo.get("record_cache")
    findings: list[Finding] = []
    unknown = KnowledgeBase(root=kb.root)
    for record in kb:
        if not kb.in_focus(record):
            continue
        cached = cache.local(cache.key(record.path, record.digest)) if cache else None
        if cached is None:
            unknown.add(record)
        else:
            findings.extend(cached)
    fresh = [f for rule in rules for f in rule.check(unknown)]
    findings.extend(fresh)
    if cache is not None:
        by_path: dict[str, list[Finding]] = {record.path: [] for record in unknown}
        for finding in fresh:
            by_path[finding.location.path].append(finding)
        for record in unknown:
            cache.put_local(cache.key(record.path, record.digest), by_path[record.path])
    return findings


def apply_waivers(
    kb: KnowledgeBase, findings: Iterable[Finding]
) -> tuple[list[Finding], set[tuple[str, int]]]:
    """Drop findings a record waives; return the rest and which waivers were used."""
    by_path = {record.path: record for record in kb}
    kept: list[Finding] = []
    used: set[tuple[str, int]] = set()
    for finding in findings:
        record = by_path.get(finding.location.path)
        index = _waiver_for(record.waivers, finding) if record else None
        if index is None:
            kept.append(finding)
        else:
            used.add((record.id, index))  # type: ignore[union-attr]
    return kept, used


def _waiver_for(waivers: list, finding: Finding) -> int | None:  # type: ignore[type-arg]
    for index, waiver in enumerate(waivers):
        pointer = str(waiver.get("pointer", ""))
        if waiver.get("code") == finding.code and finding.location.pointer.startswith(pointer):
            return index
    return None


def resolve_locations(findings: Iterable[Finding]) -> list[Finding]:
    """Give every finding a line:col, reading only the files that have findings."""
    texts: dict[str, str | None] = {}
    resolved = []
    for finding in findings:
        resolved.append(_resolved(finding, texts))
    return resolved


def _resolved(finding: Finding, texts: dict[str, str | None]) -> Finding:
    related = tuple(_locate(loc, texts) for loc in finding.related)
    located = finding.at(_locate(finding.location, texts))
    return Finding(
        located.code, located.severity, located.location, located.message, located.hint, related
    )


def _locate(location: Location, texts: dict[str, str | None]) -> Location:
    if location.line:
        return location
    if location.path not in texts:
        texts[location.path] = _read(location.path)
    text = texts[location.path]
    if text is None:
        return Location(location.path, 1, 1, location.pointer)
    if location.offset >= 0:
        line, col = locate_in_string(text, location.pointer, location.offset)
    else:
        line, col = locate(text, location.pointer)
    return Location(location.path, line, col, location.pointer)


def _read(path: str) -> str | None:
    standing_in = overlay.read(path)  # `kb validate -`: the record came on stdin
    try:
        if standing_in is not None:
            return standing_in.decode("utf-8")
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def selected(code: str, select: Sequence[str], ignore: Sequence[str]) -> bool:
    """True when --select/--ignore let `code` through (prefixes, any case)."""
    if select and not any(code.startswith(s.upper()) for s in select):
        return False
    return not any(code.startswith(i.upper()) for i in ignore)


def _report_scope(kb: KnowledgeBase, paths: Sequence[Path] | None) -> set[str] | None:
    """Display paths to report on: the given files, plus records that reference them."""
    if not paths:
        return None
    wanted = [p.resolve() for p in paths]
    scope = {
        display_path(Path(f.location.path))
        for f in kb.load_findings
        if _under(Path(f.location.path).resolve(), wanted)
    }
    chosen = {r.id for r in kb if _under(Path(r.path).resolve(), wanted)}
    scope.update(r.path for r in kb if r.id in chosen)
    for ref in kb.references:
        if ref.target.partition("#")[0] in chosen:
            scope.add(kb.records[ref.source_id].path)
    return scope


def _under(path: Path, roots: list[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)
