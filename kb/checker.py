"""The validation pipeline, stage by stage; `check_everything` reads as the list of stages.

    load -> per-file stage -> schema stage -> equations stage -> rules -> waivers -> locate

- load (kb.loader): files become records, or problems (LD codes); the record cache
  answers for files whose bytes it knows.
- per-file stage: what each file gives on its own, its references and the findings of
  the record-local (`READS = "record"`) rules, computed on all cores for many new files
  (kb.workers) and kept in the record cache.
- schema stage (kb.schema): JSON Schema problems of every record (SC001, LD009/LD010).
- equations stage (kb.equations.engine): one analysis of every equation and claim.
- rules: the catalogue in code order; rules that own a stage's codes forward them.
  Where each rule runs is decided by its READS alone (kb.reads.PLACES, `rules_at`):
  the schema stage and the rules that do not read the equations stage run beside it,
  in a forked child when a CPU is free (kb.workers.beside); this process keeps the
  child's new schema verdicts in the record cache, which the caller saves.
- waivers: findings a record waives are dropped; then the late rules (READS "codes"
  or "findings"), which read which codes exist and which waivers were used, run last.
- locate: JSON pointers become line:col, reading only files that have findings.

Stages emit problems (kb.findings.Problem); the checker turns each into a finding with
the severity and hint of the rule module that owns its code (kb.rules._base.finding_of).
Per-run state lives in the knowledge base's typed run context (kb.run), not in globals.
No printing and no exit codes here (that is the command line's job), and no entry
point: every caller goes through kb.api (`validate`, `open_kb`), which wraps
`check_everything` (every record) or kb.incremental (the snapshot route, which
plans what a change reaches and runs the same stages on part of the tree). One
function runs every check: `execute` (what to load, which files' findings are
wanted), on one knowledge base built once.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kb import fingerprint, progress
from kb import loader as _loader
from kb.findings import Finding, Location
from kb.loader import Loaded, display_path, load_files
from kb.model import KnowledgeBase, Record, Reference
from kb.overlay import NONE, Overlay
from kb.positions import locate, locate_in_string
from kb.prose.fields import record_templates, walked_once
from kb.prose.scan import Template
from kb.reads import PLACES, bound_of, rule_reads, targets_of
from kb.recordcache import RecordCache, References
from kb.references import record_references
from kb.rules import all_rules
from kb.rules._base import Rule, finding_of
from kb.rules._prose import TEMPLATES
from kb.run import RunContext
from kb.snapshot import FileState
from kb.store import cache_dir, root_salt
from kb.workers import beside, map_forked

# Fewer records in focus than this: the rules run after the equations stage, in this
# process (one hot change at 10,000 records re-checks ~1,100: forking cost it 7% of CPU).
BESIDE_MIN_RECORDS = _loader.PARALLEL_MIN_FILES
# What one file gives on its own: its references as (pointer, target, expected kind),
# and the findings of the record-local rules on it.
Alone = tuple[list[tuple[str, str, str]], list[Finding]]
Known = tuple[References, list[Finding]]  # the same, as the record cache holds it
# ... and, as the per-file stage computes it, the templates in its prose (kb.rules._prose).
Checked = tuple[list[tuple[str, str, str]], list[Finding], Sequence[tuple[str, Template]]]


@dataclass(frozen=True)
class Ran:
    """What a run gives (`execute`): its knowledge base and its located findings on the focus.

    `waived_schema`: the schema findings the records in focus waive, located (a record
    with one has no typed view: kb.api's schema verdict).
    """

    kb: KnowledgeBase
    findings: list[Finding]
    waived_schema: list[Finding]


def check_everything(
    root: Path, base: str | None, cache: RecordCache, standing_in: Overlay = NONE
) -> Ran:
    """Every record checked, stage by stage (`execute` with no focus); the cache saved.

    load -> per-file stage (build_knowledge_base) -> schema -> equations -> rules ->
    waivers -> waiver rules (run_rules) -> locate; then the record cache is saved,
    here, once every stage that fills it has run. `standing_in`: records that stand in
    for files in this run (kb.overlay).
    """
    ran = execute(root, cache, base=base, standing_in=standing_in)
    cache.save()
    return ran


def execute(
    root: Path,
    cache: RecordCache,
    paths: Sequence[Path] | None = None,
    *,
    focus: frozenset[str] | None = None,
    ids: Collection[str] = (),
    digests: Mapping[str, str] | None = None,
    preloaded: Sequence[Loaded] = (),
    base: str | None = None,
    standing_in: Overlay = NONE,
) -> Ran:
    """The one run of the checks: a plan's files loaded once, every stage, findings on `focus`.

    `paths`: the files to load, in record_files' order (None: every file of the tree);
    `focus`: the files whose findings are wanted (None: all), the others are what
    their checks read; `ids`: every id of the tree (those not loaded are outside ids);
    `digests`: the content hashes already known; `preloaded`: files of `paths` loaded
    already (kb.incremental loads the changed files to plan). The cache is not saved.
    """
    listed = paths is not None
    kb = build_knowledge_base(root, base, cache, paths, listed, digests, standing_in, preloaded)
    kb.run.outside_ids = kb.run.outside_ids | frozenset(set(ids) - kb.records.keys())
    kb.run.focus = focus
    found = [f for f in run_rules(kb, cache) if focus is None or f.location.path in focus]
    schema = waived(kb, kb.run.schema or [])
    schema = [f for f in schema if focus is None or f.location.path in focus]
    return Ran(kb, locate_stage(found, standing_in), locate_stage(schema, standing_in))


def open_cache(root: Path, salt_value: str | None = None) -> RecordCache:
    """The per-file result cache of this records tree (see kb.recordcache), keyed by its root."""
    return RecordCache(cache_dir(root), root_salt(salt_value or fingerprint.salt(), root))


def build_knowledge_base(
    root: Path,
    base: str | None = None,
    cache: RecordCache | None = None,
    paths: Sequence[Path] | None = None,
    listed: bool = False,
    digests: Mapping[str, str] | None = None,
    standing_in: Overlay = NONE,
    preloaded: Sequence[Loaded] = (),
) -> KnowledgeBase:
    """Load every record (or those in `paths`), run the per-file stage, add the base revision.

    The knowledge base comes back frozen, its run context (kb.run) started.

    `listed`: `paths` are record files in record_files' order (kb.loader); `digests`,
    the content hashes this run already knows (kb.loader.load_files); `standing_in`,
    the records standing in for files (kb.overlay); `preloaded`, files of `paths`
    the load stage has already loaded in this run (not loaded again).
    """
    run = RunContext()
    loaded = load_stage(root, cache, paths, listed, digests, standing_in, preloaded)
    return attach(per_file_stage(loaded, run, cache), root, base, standing_in)


@progress.stage("load", counts="result")
def load_stage(
    root: Path,
    cache: RecordCache | None,
    paths: Sequence[Path] | None = None,
    listed: bool = False,
    digests: Mapping[str, str] | None = None,
    standing_in: Overlay = NONE,
    preloaded: Sequence[Loaded] = (),
) -> list[Loaded]:
    """Read and parse the files; store what the cache did not know (parse and load findings).

    Each file parsed in this run is also checked on its own right after its parse, in
    the same worker (`checked_alone`: the per-file stage's work, done in one pass).
    `preloaded`: files of the listed `paths` loaded earlier in this run, taken as they are.
    """
    if not preloaded:
        return _load_new(root, cache, paths, listed, digests, standing_in)
    done = {item.shown: item for item in preloaded}
    named = [(display_path(path), path) for path in paths or ()]
    todo = [path for shown, path in named if shown not in done]
    rest = iter(_load_new(root, cache, todo, listed, digests, standing_in))
    return [done[shown] if shown in done else next(rest) for shown, _ in named]


def _load_new(
    root: Path,
    cache: RecordCache | None,
    paths: Sequence[Path] | None,
    listed: bool,
    digests: Mapping[str, str] | None,
    standing_in: Overlay,
) -> list[Loaded]:
    """load_files with the per-file stage beside each parse; the cache told what it did not know."""
    # _warm_up: while the workers parse, if any do
    loaded = load_files(root, paths, cache, listed, checked_alone, digests, _warm_up, standing_in)
    if cache is not None:
        for item in loaded:
            if item.fresh:
                data = item.record.data if item.record is not None else None
                cache.put_load(item.key, data, [finding_of(p) for p in item.problems])
    return loaded


def _warm_up() -> None:
    """Import what the stages after the load will need (SymPy: ~0.25 s of CPU)."""
    import kb.equations.planbuild  # noqa: F401
    import kb.ledger.inputs  # noqa: F401


def per_file_stage(
    loaded: list[Loaded], run: RunContext, cache: RecordCache | None
) -> KnowledgeBase:
    """Each record's references and record-local findings: from the cache, else computed.

    Records parsed in this run come with them (load_stage); the others the cache does
    not answer for are computed here, on all cores when they are many (kb.workers).
    Returns the knowledge base, frozen.
    """
    kb = KnowledgeBase(root="", run=run)
    load_findings: list[Finding] = []
    for item in loaded:
        load_findings.extend(finding_of(p) for p in item.problems)
        if item.record is not None:
            kb.add(item.record)
    keys = {item.record.path: item.key for item in loaded if item.record is not None}
    ready: dict[str, Checked] = {
        item.record.path: item.alongside
        for item in loaded
        if item.record is not None and item.alongside is not None
    }
    known, todo = _known_alone(kb, keys, cache)
    rest = [record for record in todo if record.path not in ready]
    computed = map_forked(checked_alone, rest, _loader.PARALLEL_MIN_FILES)
    ready.update(
        zip((r.path for r in rest), computed or [checked_alone(r) for r in rest], strict=True)
    )
    found = run.keep(TEMPLATES, {})
    for record in todo:
        references, local, templates = ready[record.path]
        alone = known[record.path] = (references, local)
        found[record.path] = templates
        if cache is not None:
            cache.put_local(keys[record.path], alone[1])
    kb.references = _references(kb, known, keys, {record.path for record in todo}, cache)
    kb.load_findings = load_findings
    # A record the tree has but kb could not read exists all the same: its own finding is
    # the root cause, and references to it are not also "dangling" (as in a partial run).
    run.unread_ids = {
        item.shown: item.unread_id for item in loaded if item.record is None and item.unread_id
    }
    run.outside_ids = run.outside_ids | frozenset(set(run.unread_ids.values()) - kb.records.keys())
    run.local = {path: alone[1] for path, alone in known.items()}
    return kb


def _references(
    kb: KnowledgeBase,
    known: Mapping[str, Alone | Known],
    keys: Mapping[str, str],
    fresh: set[str],
    cache: RecordCache | None,
) -> list[Reference]:
    """Every record's references as Reference objects, which its cache entry holds too.

    Each reference is held once (as rows beside the objects, 100,000 records held ~60 MB
    twice); the cache entry turns them back into rows when it is saved. `fresh`: the
    records whose references this run found (the others' entries hold them already).
    """
    references: list[Reference] = []
    for record in kb:
        made = [
            row if isinstance(row, Reference) else Reference(record.id, *row)
            for row in known[record.path][0]
        ]
        references += made
        if cache is not None:
            cache.put_references(keys[record.path], made, new=record.path in fresh)
    return references


def _known_alone(
    kb: KnowledgeBase, keys: dict[str, str], cache: RecordCache | None
) -> tuple[dict[str, Known], list[Record]]:
    """What the cache knows of each record on its own, and the records it does not know."""
    known: dict[str, Known] = {}
    todo: list[Record] = []
    for record in kb:
        key = keys[record.path]
        references = cache.references(key) if cache is not None else None
        local = cache.local(key) if cache is not None and references is not None else None
        if local is None or references is None:
            todo.append(record)
        else:
            known[record.path] = (references, local)
    return known, todo


def attach(
    kb: KnowledgeBase, root: Path, base: str | None, standing_in: Overlay = NONE
) -> KnowledgeBase:
    """Name the tree, add the base revision when asked (`--base`), and freeze."""
    kb.root = str(root)
    if base is not None:
        from kb.gitbase import attach_base  # only when asked: runs git

        attach_base(kb, root, base, standing_in)
    return kb.freeze()


def checked_alone(record: Record) -> Checked:
    """What one file gives on its own: references, record-local findings, prose templates.

    The templates are what the prose rules resolve (kb.rules._prose.TEMPLATES).
    All three read the record's prose: it is walked once for them (kb.prose.fields).
    """
    with walked_once(record.data):
        references = [(r.pointer, r.target, r.expected_kind) for r in record_references(record)]
        alone = KnowledgeBase(root="")
        alone.add(record)
        alone.freeze()  # its views once, not once per rule
        findings = [f for rule in rules_at("alone") for f in rule.check(alone)]
        return references, findings, tuple(record_templates(record.data))


def loaded_states(loaded: Sequence[Loaded], cache: RecordCache | None) -> dict[str, FileState]:
    """Each loaded file as a node of the dependency graph (kb.snapshot.FileState), by display path.

    What kb.reads.file_nodes says of a knowledge base built from `loaded`, without
    building one: a file that did not become a record is a node with no id (keeping
    the id its place names); a record's node has its ids, its kind and what its
    references name, from the per-file stage's work (done beside the parse, or known
    to the cache, else done now).
    """
    unread = {item.shown: item.unread_id for item in loaded if item.record is None}
    nodes = {p.location.path: FileState("", "", "", ()) for i in loaded for p in i.problems}
    for item in loaded:
        if item.record is not None:
            nodes[item.record.path] = _node(item.record, _references_alone(item, cache))
    return {
        name: node if node.record_id else node._replace(unread_id=unread.get(name, ""))
        for name, node in nodes.items()
    }


def _node(record: Record, rows: References) -> FileState:
    """A record as a node of the dependency graph (kb.reads.nodes_of), given its references."""
    references = [r if isinstance(r, Reference) else Reference(record.id, *r) for r in rows]
    claimed = record.data.get("id")
    return FileState(
        record.id,
        claimed if isinstance(claimed, str) else "",
        record.kind,
        targets_of(record, references),
        bound_of(record, references),
        record.digest,
    )


def _references_alone(item: Loaded, cache: RecordCache | None) -> References:
    """The references of a loaded record: beside its parse, from the cache, or found now."""
    assert item.record is not None
    if item.alongside is not None:
        return item.alongside[0]  # type: ignore[no-any-return]
    known = cache.references(item.key) if cache is not None and item.key else None
    return known if known is not None else checked_alone(item.record)[0]


@functools.cache
def rules_at(*places: str) -> tuple[Rule, ...]:
    """The registered rules that run at one of `places`, in code order: their READS decides.

    "alone": the per-file stage (READS "record"; the record cache keeps their findings
    per file); "beside": beside the equations stage (every READS value kb.reads.PLACES
    does not name: the stage forwarders, the rules reading typed views, the whole-tree
    ones); "after": after it (READS "equations"); "late": after the waivers stage
    (READS "codes" or "findings").
    """
    return tuple(r for r in all_rules() if PLACES.get(rule_reads(r), "beside") in places)


@progress.stage("schema", counts="first")
def schema_stage(
    kb: KnowledgeBase,
    cache: RecordCache | None = None,
    fresh: dict[str, list[Finding]] | None = None,
) -> list[Finding]:
    """The schema findings of every record, from `cache` for files it knows.

    The verdicts computed here go into `cache`, and into `fresh` (by cache key) when
    given: run in a forked child (run_rules), the child's cache is not the parent's.
    """
    from kb.schema import validate_record  # local: jsonschema loads only when checking

    findings: list[Finding] = []
    for record in kb:
        key = (
            RecordCache.key(record.path, record.digest)
            if cache is None
            else cache.key_of(record.path, record.digest)
        )
        known = cache.schema(key) if cache is not None else None
        if known is None:
            known = [finding_of(problem) for problem in validate_record(record)]
            if cache is not None:
                cache.put_schema(key, known)
            if fresh is not None:
                fresh[key] = known
        findings.extend(known)
    kb.run.schema = findings
    return findings


@progress.stage("equations", counts="first")
def equations_stage(kb: KnowledgeBase) -> None:
    """One analysis of every equation, derivation and claim (kept in the run: engine.analysed)."""
    from kb.equations.engine import analyse  # local: the engine loads only when checking

    analyse(kb)


def run_rules(kb: KnowledgeBase, cache: RecordCache | None) -> list[Finding]:
    """The stages after the per-file one: schema, equations, rules, waivers, waiver rules.

    The schema stage and the whole-tree rules that do not read the equations stage
    run beside it (in a forked child when a CPU is free and the tree is big:
    kb.workers.beside); the schema verdicts the child computed are put into `cache`
    here (the caller saves it).
    """
    worth_it = sum(kb.in_focus(record) for record in kb) >= BESIDE_MIN_RECORDS
    with beside(lambda: _before_equations(kb, cache), worth_it) as others:
        equations_stage(kb)
        kb.run.schema, fresh, found = others.result()  # the child's schema stage, if it ran there
        if cache is not None:
            for key, verdict in fresh.items():
                cache.put_schema(key, verdict)
        findings = rules_stage(kb, found)
    return waivers_stage(kb, findings) + waiver_rules_stage(kb)


def _before_equations(
    kb: KnowledgeBase, cache: RecordCache | None
) -> tuple[list[Finding], dict[str, list[Finding]], dict[str, list[Finding]]]:
    """What runs beside the equations stage: the schema stage and the rules that do not read it.

    Returns the schema findings, the verdicts computed now (by cache key) and the
    rules' findings (by code).
    """
    fresh: dict[str, list[Finding]] = {}
    schema = kb.run.schema if kb.run.schema is not None else schema_stage(kb, cache, fresh)
    return schema, fresh, {rule.CODE: list(rule.check(kb)) for rule in rules_at("beside")}


@progress.stage("rules", counts="first")
def rules_stage(kb: KnowledgeBase, found: dict[str, list[Finding]] | None = None) -> list[Finding]:
    """Run the catalogue but the waiver rules (they need every other finding first).

    `found`: the findings of some rules, by code, already computed on `kb` (run_rules).
    With a focus set (kb.run.focus), record-local rules look only at the focus (the
    caller keeps only its findings: kb.incremental).
    """
    kb.run.known_codes = frozenset(rule.CODE for rule in all_rules())
    done = found or {}
    findings = local_findings(kb)
    for rule in rules_at("beside", "after"):
        findings += done[rule.CODE] if rule.CODE in done else list(rule.check(kb))
    return findings


def waiver_rules_stage(kb: KnowledgeBase) -> list[Finding]:
    """The late rules (READS "codes", "findings"), after the waivers stage: they read its result."""
    return [f for rule in rules_at("late") for f in rule.check(kb)]


def local_findings(kb: KnowledgeBase) -> list[Finding]:
    """The record-local rules' findings on the records in focus, as the per-file stage left them."""
    local = kb.run.local
    if local is None:
        raise RuntimeError("the per-file stage has not run on this knowledge base")
    return [f for record in kb if kb.in_focus(record) for f in local[record.path]]


def waivers_stage(kb: KnowledgeBase, findings: Iterable[Finding]) -> list[Finding]:
    """Drop the findings records waive; keep which waivers were used (for WV001)."""
    kept, used = apply_waivers(kb, findings)
    kb.run.waivers_used = frozenset(used)
    return kept


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


def waived(kb: KnowledgeBase, findings: Iterable[Finding]) -> list[Finding]:
    """The findings among `findings` that their record waives (what apply_waivers drops)."""
    waiving = {record.path: record.waivers for record in kb if record.waivers}
    return [
        finding
        for finding in findings
        if finding.location.path in waiving
        and _waiver_for(waiving[finding.location.path], finding) is not None
    ]


def _waiver_for(waivers: list, finding: Finding) -> int | None:  # type: ignore[type-arg]
    for index, waiver in enumerate(waivers):
        pointer = str(waiver.get("pointer", ""))
        if waiver.get("code") == finding.code and finding.location.pointer.startswith(pointer):
            return index
    return None


@progress.stage("locate", counts="")
def locate_stage(findings: Iterable[Finding], standing_in: Overlay = NONE) -> list[Finding]:
    """Give every finding a line:col, reading only the files that have findings.

    A file a record stands in for (`standing_in`, kb.overlay) is located in that record.
    """
    texts: dict[str, str | None] = {}
    resolved = []
    for finding in findings:
        resolved.append(_resolved(finding, texts, standing_in))
    return resolved


resolve_locations = locate_stage  # the name kb.incremental and the commands use


def _resolved(finding: Finding, texts: dict[str, str | None], standing_in: Overlay) -> Finding:
    related = tuple(_locate(loc, texts, standing_in) for loc in finding.related)
    located = finding.at(_locate(finding.location, texts, standing_in))
    return Finding(
        located.code, located.severity, located.location, located.message, located.hint, related
    )


def _locate(location: Location, texts: dict[str, str | None], standing_in: Overlay) -> Location:
    if location.line:
        return location
    if location.path not in texts:
        texts[location.path] = _read(location.path, standing_in)
    text = texts[location.path]
    if text is None:
        return Location(location.path, 1, 1, location.pointer)
    if location.offset >= 0:
        line, col = locate_in_string(text, location.pointer, location.offset)
    else:
        line, col = locate(text, location.pointer)
    return Location(location.path, line, col, location.pointer)


def _read(path: str, standing_in: Overlay) -> str | None:
    instead = standing_in.read(path)  # `kb validate -`: the record came on stdin
    try:
        if instead is not None:
            return instead.decode("utf-8")
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
