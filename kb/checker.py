"""The validation pipeline, stage by stage; `check_everything` reads as the list of stages.

    load -> per-file stage -> schema stage -> equations stage -> rules -> waivers -> locate

- load (kb.loader): files become records, or problems (LD codes); the record cache
  answers for files whose bytes it knows, with its whole entry for each.
- per-file stage: what each file gives on its own (`check_file`: its schema verdict,
  its references, the findings of the record-local `READS = "record"` rules), done
  after its parse in the worker that parsed it (kb.workers), or read from the
  file's cache entry; each file's result is written to the record cache once, whole.
- schema stage (kb.schema): the per-file verdicts gathered in tree order (SC001,
  LD009/LD010); it validates only records no per-file stage saw.
- equations stage (kb.equations.engine): one analysis of every equation and claim.
- rules: the catalogue in code order; rules that own a stage's codes forward them.
  Where each rule runs is decided by its READS alone (kb.reads.PLACES, `rules_at`):
  the rules that do not read the equations stage run beside it, in a forked child
  when a CPU is free (kb.workers.beside), which returns their findings.
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
from dataclasses import dataclass, replace
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
from kb.recordcache import FileResult, RecordCache, References
from kb.references import reference_rows
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


@dataclass(frozen=True)
class FileChecks:
    """What one record gives on its own (`check_file`), or what its cache entry says of it.

    `schema`: its schema findings (kb.schema); `references`: the references it makes,
    as (pointer, target, expected kind) rows or Reference objects; `local`: the
    record-local rules' findings; `templates`: the templates in its prose
    (kb.rules._prose), None when read from the cache (which does not keep them).
    """

    schema: list[Finding]
    references: References
    local: list[Finding]
    templates: Sequence[tuple[str, Template]] | None = None


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
    found = [f for f in run_rules(kb) if focus is None or f.location.path in focus]
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
    """Read and parse the files the cache does not know; it answers for the others.

    Each file parsed in this run is also checked on its own after its parse, in the
    same worker (`check_file`: the per-file stage's work, done in one pass); the
    per-file stage writes each file's result to the cache. `preloaded`: files of the
    listed `paths` loaded earlier in this run, taken as they are.
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
    """load_files with the per-file function beside each parse (`check_file`)."""
    # _warm_up: while the workers parse, if any do; _ready_to_fork: before they fork
    return load_files(
        root, paths, cache, listed, check_file, digests, _warm_up, standing_in, _ready_to_fork
    )


def _warm_up() -> None:
    """Import what the stages after the load will need (SymPy: ~0.25 s of CPU)."""
    import kb.equations.planbuild  # noqa: F401
    import kb.ledger.inputs  # noqa: F401


def _ready_to_fork() -> None:
    """What every worker's first `check_file` would do, done here once before they fork.

    The rule modules (this process and the child beside the equations stage import them
    later too) and the compiled schema validators of every kind: each worker inherits
    them instead of importing and compiling its own (kb.workers.map_forked's `before`).
    """
    from kb.model import KIND_BY_FOLDER
    from kb.schema import fast_validator

    rules_at("alone")
    for kind in sorted(set(KIND_BY_FOLDER.values())):
        fast_validator(kind)


def per_file_stage(
    loaded: list[Loaded], run: RunContext, cache: RecordCache | None
) -> KnowledgeBase:
    """Each record's schema verdict, references and record-local findings; each file cached once.

    Records parsed in this run come with them (load_stage: `check_file` ran beside the
    parse), records the cache knew with its entry; the others are checked here, on all
    cores when they are many (kb.workers). Every file parsed or checked in this run is
    then written to the record cache, one whole entry each (`_keep`). Returns the
    knowledge base, frozen.
    """
    kb = KnowledgeBase(root="", run=run)
    load_findings = [[finding_of(problem) for problem in item.problems] for item in loaded]
    for item in loaded:
        if item.record is not None:
            kb.add(item.record)
    checks = {i.shown: c for i in loaded if (c := _checks_known(i)) is not None}
    todo = [i.record for i in loaded if i.record is not None and i.shown not in checks]
    computed = map_forked(check_file, todo, _loader.PARALLEL_MIN_FILES, before=_ready_to_fork)
    checks.update(zip((r.path for r in todo), computed or map(check_file, todo), strict=True))
    run.keep(TEMPLATES, {p: c.templates for p, c in checks.items() if c.templates is not None})
    kb.references = _references(kb, checks)
    if cache is not None:
        _keep(cache, loaded, load_findings, checks, {record.path for record in todo})
    kb.load_findings = [finding for found in load_findings for finding in found]
    # A record the tree has but kb could not read exists all the same: its own finding is
    # the root cause, and references to it are not also "dangling" (as in a partial run).
    run.unread_ids = {
        item.shown: item.unread_id for item in loaded if item.record is None and item.unread_id
    }
    run.outside_ids = run.outside_ids | frozenset(set(run.unread_ids.values()) - kb.records.keys())
    run.local = {record.path: checks[record.path].local for record in kb}
    run.file_schema = {record.path: checks[record.path].schema for record in kb}
    return kb


def _checks_known(item: Loaded) -> FileChecks | None:
    """A loaded record's own checks: done beside its parse, or its cache entry's; else None."""
    if item.record is None:
        return None
    if isinstance(item.alongside, FileChecks):
        return item.alongside
    entry = item.cached
    if entry is None or entry.schema is None or entry.references is None or entry.local is None:
        return None  # an entry that holds only the parse: checked now
    return FileChecks(entry.schema, entry.references, entry.local)


def _keep(
    cache: RecordCache,
    loaded: Sequence[Loaded],
    load_findings: Sequence[list[Finding]],
    checks: Mapping[str, FileChecks],
    checked: set[str],
) -> None:
    """Write each file parsed or checked in this run to the cache: one whole entry per file.

    A file the cache answered for whole is not written again; its entry is held with the
    knowledge base's Reference objects in place of its rows (each reference held once).
    `checked`: the files whose checks were done in the per-file stage itself.
    """
    for item, found in zip(loaded, load_findings, strict=True):
        done = checks.get(item.shown) if item.record is not None else None
        data = item.record.data if item.record is not None else None
        parts = (done.schema, done.references, done.local) if done is not None else ()
        result = FileResult(data, found, *parts)
        if item.fresh or item.shown in checked:
            cache.put_file(item.key, result)
        elif done is not None and item.key:
            cache.hold(item.key, result)


def _references(kb: KnowledgeBase, checks: dict[str, FileChecks]) -> list[Reference]:
    """Every record's references as Reference objects, which its cache entry then holds.

    Each reference is held once (as rows beside the objects, 100,000 records held ~60 MB
    twice): the file's checks take the objects in place of their rows, and the cache
    entry turns them back into rows when it is saved.
    """
    references: list[Reference] = []
    for record in kb:
        done = checks[record.path]
        made = [
            row if isinstance(row, Reference) else Reference(record.id, *row)
            for row in done.references
        ]
        references += made
        checks[record.path] = replace(done, references=made)
    return references


def attach(
    kb: KnowledgeBase, root: Path, base: str | None, standing_in: Overlay = NONE
) -> KnowledgeBase:
    """Name the tree, add the base revision when asked (`--base`), and freeze."""
    kb.root = str(root)
    if base is not None:
        from kb.gitbase import attach_base  # only when asked: runs git

        attach_base(kb, root, base, standing_in)
    return kb.freeze()


def check_file(record: Record) -> FileChecks:
    """One record's whole work after its parse: schema verdict, references, record-local findings.

    Each depends on the record alone (its data, and its id and kind from its path), so
    this runs right after the parse, in the worker that parsed the file (kb.loader's
    `alongside`). The templates are what the prose rules resolve (kb.rules._prose);
    the references, the record-local rules and the templates read the record's prose:
    it is walked once for them (kb.prose.fields).
    """
    from kb.schema import validate_record  # local: jsonschema loads only when checking

    schema = [finding_of(problem) for problem in validate_record(record)]
    with walked_once(record.data):
        written = tuple(record_templates(record.data))
        references = list(reference_rows(record, written))
        alone = KnowledgeBase(root="")
        alone.add(record)
        alone.freeze()  # its views once, not once per rule
        findings = [f for rule in rules_at("alone") for f in rule.check(alone)]
        return FileChecks(schema, references, findings, written)


def loaded_states(loaded: Sequence[Loaded]) -> dict[str, FileState]:
    """Each loaded file as a node of the dependency graph (kb.snapshot.FileState), by display path.

    What kb.reads.file_nodes says of a knowledge base built from `loaded`, without
    building one: a file that did not become a record is a node with no id (keeping
    the id its place names); a record's node has its ids, its kind and what its
    references name, from the per-file stage's work (done beside the parse, or in
    the file's cache entry, else done now).
    """
    unread = {item.shown: item.unread_id for item in loaded if item.record is None}
    nodes = {p.location.path: FileState("", "", "", ()) for i in loaded for p in i.problems}
    for item in loaded:
        if item.record is not None:
            nodes[item.record.path] = _node(item.record, _own_references(item))
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


def _own_references(item: Loaded) -> References:
    """The references of a loaded record: beside its parse, in its cache entry, or found now."""
    assert item.record is not None
    known = _checks_known(item)
    return (known if known is not None else check_file(item.record)).references


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
def schema_stage(kb: KnowledgeBase) -> list[Finding]:
    """The schema findings of every record, in tree order: the per-file stage's verdicts.

    A record no per-file stage checked (a knowledge base loaded for reading,
    kb.loader.load_knowledge_base, then given typed views) is validated here.
    """
    from kb.schema import validate_record  # local: jsonschema loads only when checking

    verdicts = kb.run.file_schema or {}
    findings: list[Finding] = []
    for record in kb:
        known = verdicts.get(record.path)
        if known is None:
            known = [finding_of(problem) for problem in validate_record(record)]
        findings.extend(known)
    kb.run.schema = findings
    return findings


@progress.stage("equations", counts="first")
def equations_stage(kb: KnowledgeBase) -> None:
    """One analysis of every equation, derivation and claim (kept in the run: engine.analysed)."""
    from kb.equations.engine import analyse  # local: the engine loads only when checking

    analyse(kb)


def run_rules(kb: KnowledgeBase) -> list[Finding]:
    """The stages after the per-file one: schema, equations, rules, waivers, waiver rules.

    The schema stage gathers the per-file verdicts first (the typed views read them);
    the whole-tree rules that do not read the equations stage run beside it (in a
    forked child when a CPU is free and the tree is big: kb.workers.beside), which
    returns their findings by code.
    """
    if kb.run.schema is None:  # kb.api may hand over a validation's verdict
        schema_stage(kb)
    worth_it = sum(kb.in_focus(record) for record in kb) >= BESIDE_MIN_RECORDS
    with beside(lambda: _before_equations(kb), worth_it) as others:
        equations_stage(kb)
        findings = rules_stage(kb, others.result())
    return waivers_stage(kb, findings) + waiver_rules_stage(kb)


def _before_equations(kb: KnowledgeBase) -> dict[str, list[Finding]]:
    """What runs beside the equations stage: the rules that do not read it (findings by code)."""
    return {rule.CODE: list(rule.check(kb)) for rule in rules_at("beside")}


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
