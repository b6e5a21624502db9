"""The snapshot strategy of `kb validate` (kb.api): a pure planner of what a run re-checks.

Every run lists every file and compares it with the last run's snapshot
(kb.snapshot): a file whose `stat` is what the snapshot recorded, safely older
than that run, is taken as unchanged (`Snapshot.trusted`: the assumption is
spelled out there); every other file is read and its SHA-256 compared, and
the digest decides. Then:

- nothing changed: the snapshot's findings are the answer;
- some files changed: the files whose findings the change may change are
  re-checked, on a knowledge base of just them and every file their checks
  read; every other file keeps the findings it had;
- no valid snapshot (first run, kb or the schemas changed, another working
  directory) or `--full`: every record is checked (and every file read).

A run is three steps, and only the middle one decides: `observe` (the stats, and
the hashes of the files a stat cannot vouch for), `changes` and `plan` (pure: the
last snapshot and what is on disk now -> a `Plan`: which files to read anew, which
to re-check, which to load for those checks, whose findings carry over; nothing
is read, checked or cached), then kb.checker.execute runs the plan on one
knowledge base, built once (the changed files are loaded once, before the plan,
since their references now are what the plan follows). A full run is the plan
`EVERYTHING`.

A symlink whose target moved to a file with the same bytes is a changed file:
its record id comes from the path it resolves to (kb.loader).

Why this is exact: what a check reads is declared once, by every rule's `READS`,
and kb.reads turns the declarations into one dependency graph: `affected` is the
set of files whose declared inputs hold a changed file (before or after the
change), `load_set` the files those inputs name for the values the registered
rules declare: the records a re-checked file binds, templates or `uses:` (READS =
"bound", one step), and only for a placement or a proposal everything it reaches
("ledger"); what it merely names must exist ("all-ids"), which the ids of the
tree answer without loading it. A rule
whose messages may name any id (READS = "all-ids") is re-run wherever it
reported, when an id comes or goes. tests/run/test_reads.py holds every rule to its declaration, and
tests/run/test_incremental.py edits trees at random (symlinks, duplicates, renames
and kind swaps too) and checks that the findings always equal a full run's.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from kb import fileread, fingerprint
from kb.loader import MAX_FILE_BYTES, record_names
from kb.overlay import NONE, Overlay
from kb.reads import DependencyGraph, checked_paths, codes_reading, declared_reads, file_nodes
from kb.recordcache import RecordCache, content_digest
from kb.run import RunStats
from kb.snapshot import (
    UNREAD,
    FileState,
    Seen,
    Snapshot,
    probe,
    probe_folders,
    read_snapshot,
    settled,
    write_snapshot,
)
from kb.store import cache_dir

if TYPE_CHECKING:
    from kb.checker import Ran
    from kb.findings import Finding
    from kb.model import KnowledgeBase


@dataclass(frozen=True)
class Observed:
    """The tree on disk as this run found it, before anything is checked (`observe`).

    `shown`: every record file's name (kb.loader.record_names) by display path, in
    record_files' order; `seen`, its stat; `digests`, its content hash (the snapshot's
    for a trusted stat; UNREAD for a symlink that resolves elsewhere now). A run with no
    snapshot lists and hashes nothing more than the stats: `shown` and `digests` are
    empty (the loader lists).
    """

    taken: int  # time.time_ns() before any folder or file was probed
    folders: dict[str, Seen]
    shown: dict[str, str]
    seen: dict[str, Seen | None]
    digests: dict[str, str]


@dataclass(frozen=True)
class Plan:
    """What a run does, decided before any check runs (`plan`; kb.checker.execute runs it).

    `changed`: the files read anew (changed, new or gone); `files`, the tree after the
    change; `rerun`, the files whose findings are computed; `load`, those and every
    file their checks read; `carried`, the files that keep the findings they had;
    `ids`, every record id of the tree (a loaded check sees those not loaded as
    outside ids). `everything`: no snapshot to go by, every file is checked.
    """

    changed: frozenset[str] = frozenset()
    files: Mapping[str, FileState] | None = None
    rerun: frozenset[str] = frozenset()
    load: frozenset[str] = frozenset()
    carried: frozenset[str] = frozenset()
    ids: frozenset[str] = frozenset()
    everything: bool = False

    @property
    def focus(self) -> frozenset[str] | None:
        """The files whose findings the run wants (None: every file)."""
        return None if self.everything else self.rerun


EVERYTHING = Plan(everything=True)


def refresh(root: Path, *, full: bool = False) -> tuple[Snapshot, RunStats]:
    """The snapshot of `root` as it is now, and how the run went.

    The last run's snapshot is served as it is when no folder's and no file's stat
    changed ("snapshot", nothing read), else brought up to date and saved
    ("incremental"; "snapshot" if the files read were unchanged), or made anew ("full").
    """
    salt = fingerprint.salt()
    snapshot = None if full else read_snapshot(cache_dir(root), salt, root)
    if snapshot is not None and snapshot.unchanged():
        return snapshot, RunStats("snapshot", 0, 0)
    now = observe(root, snapshot)
    changed = changes(snapshot, now.digests) if snapshot is not None else frozenset()
    if snapshot is not None and not changed:
        if not _restamps(snapshot, now.seen, now.taken, now.folders):
            return snapshot, RunStats("snapshot", 0, 0)
        stats = RunStats("snapshot", 0, 0)
    else:
        snapshot, stats = _run(root, salt, snapshot, now, changed)
    snapshot.seen = {name: seen or () for name, seen in now.seen.items()}
    snapshot.taken, snapshot.folders = now.taken, now.folders
    snapshot.checked = checked_paths(snapshot.files)
    write_snapshot(cache_dir(root), salt, root, snapshot)
    return snapshot, stats


def observe(root: Path, snapshot: Snapshot | None) -> Observed:
    """Probe every folder and file, and hash the files whose stat the snapshot cannot vouch for."""
    taken = time.time_ns()  # before any folder or file is probed, and every probe before a read
    folders = probe_folders(root)
    shown = dict(record_names(root))
    seen = {name: probe(path) for name, path in shown.items()}
    if snapshot is None:  # a full check lists the tree itself: ~50 MB of Paths at 100,000 files
        return Observed(taken, folders, {}, seen, {})
    return Observed(taken, folders, shown, seen, _digests(snapshot, shown, seen))


def changes(snapshot: Snapshot, digests: Mapping[str, str]) -> frozenset[str]:
    """The files whose bytes differ from the snapshot's (new, gone or unread ones included)."""
    old = snapshot.files
    changed = {
        name
        for name, digest in digests.items()
        if digest == UNREAD or name not in old or old[name].digest != digest
    }
    return frozenset(changed | (old.keys() - digests.keys()))


def plan(snapshot: Snapshot, changed: Iterable[str], states: Mapping[str, FileState]) -> Plan:
    """What a run re-checks after `changed`, whose files are now `states` (pure: reads nothing).

    `states`: the changed files that exist now, as loading them described them
    (kb.checker.loaded_states). The rest of the tree is the snapshot's.
    """
    changed = frozenset(changed)
    files = {n: s for n, s in snapshot.files.items() if n not in changed} | dict(states)
    graph = DependencyGraph(files)
    rerun = frozenset(_affected(snapshot, graph, set(changed), files))
    load = frozenset(graph.load_set(rerun, declared_reads()))
    carried = frozenset(files.keys() - rerun)
    return Plan(changed, files, rerun, load, carried, frozenset(_ids_of(files)))


def _run(
    root: Path, salt: str, snapshot: Snapshot | None, now: Observed, changed: frozenset[str]
) -> tuple[Snapshot, RunStats]:
    """Plan the run (EVERYTHING without a snapshot), execute it and record what it found."""
    from kb.checker import execute, load_stage, loaded_states, open_cache

    cache = open_cache(root, salt)  # only now: it is the biggest file kb reads
    done, chosen = EVERYTHING, None
    pre = load_stage(root, cache, _listed(now, changed), True, now.digests) if changed else []
    if snapshot is not None:
        done = plan(snapshot, changed, loaded_states(pre))
        chosen = _listed(now, done.load)
    ran = execute(
        root, cache, chosen, focus=done.focus, ids=done.ids, digests=now.digests, preloaded=pre
    )
    cache.save(None if done.everything else _live_keys(now))
    recorded = _recorded(snapshot, done, ran)
    if done.everything:
        stats = (len(recorded.files), len(ran.kb))
    else:
        stats = (len(done.rerun), len(done.load))
    mode = "full" if done.everything else "incremental"
    return recorded, replace(ran.kb.run.stats, mode=mode, rechecked=stats[0], loaded=stats[1])


def _listed(now: Observed, names: Collection[str]) -> list[Path]:
    """The paths of `names`, in record_files' order (as the loader would list them)."""
    return [Path(path) for name, path in now.shown.items() if name in names]


def _live_keys(now: Observed) -> set[str]:
    """The record cache's keys of every file of the tree (a partial run keeps their entries)."""
    return {RecordCache.key(n, digest, _link(now.seen[n])) for n, digest in now.digests.items()}


def _recorded(snapshot: Snapshot | None, done: Plan, ran: Ran) -> Snapshot:
    """The snapshot after `ran`: the plan's files and carried findings, and what the run found."""
    states = file_states(ran.kb)
    if snapshot is None or done.files is None:
        snapshot = Snapshot(states)
    else:
        snapshot.files = dict(done.files) | {n: s for n, s in states.items() if n in done.rerun}
        carried = done.carried
        snapshot.findings = {n: f for n, f in snapshot.findings.items() if n in carried}
        snapshot.waived = {n: f for n, f in snapshot.waived.items() if n in carried}
    snapshot.put_findings(ran.findings, ran.waived_schema)
    unsettled = _unsettled(ran.kb)
    snapshot.unsettled = unsettled if done.focus is None else unsettled & done.focus
    return snapshot


def _restamps(
    snapshot: Snapshot, seen: dict[str, Seen | None], taken: int, folders: dict[str, Seen]
) -> bool:
    """True when saving now would let the next run trust a stat this one could not."""
    if any(settled(now, taken) and not snapshot.trusted(name, now) for name, now in seen.items()):
        return True
    was = all(settled(s, snapshot.taken) for s in snapshot.folders.values())
    now = all(settled(s, taken) for s in folders.values())
    return bool(folders) and now and (folders != snapshot.folders or not was)


def _digests(
    snapshot: Snapshot, shown: dict[str, str], seen: dict[str, Seen | None]
) -> dict[str, str]:
    """Every file's digest: the snapshot's for a trusted stat, else from its bytes read now."""
    digests = {}
    for name, path in shown.items():
        now = seen[name]
        if snapshot.trusted(name, now):
            digests[name] = snapshot.files[name].digest
        elif _link(now) == _link(snapshot.seen.get(name)):
            digests[name] = _digest(path)
        else:  # a symlink that resolves elsewhere now (or is new, or no longer one)
            digests[name] = UNREAD
    return digests


def _link(seen: Seen | tuple[()] | None) -> str | None:
    return seen[5] if seen else None


def _digest(path: str) -> str:
    """The file's content hash, read as the loader reads it; UNREAD if the loader cannot."""
    try:  # a FIFO, a device or a file over the limit: the loader's finding, every run
        return content_digest(fileread.read_limited(path, MAX_FILE_BYTES))
    except OSError:
        return UNREAD


def file_states(kb: KnowledgeBase) -> dict[str, FileState]:
    """The snapshot's view of every file `kb` was loaded from (in its focus, if it has one).

    Duplicates included: a file whose path gives the id of another is still a file.
    """
    digests = {record.path: record.digest for record in (*kb, *kb.duplicates)}
    unread = kb.run.unread_ids
    return {
        name: node._replace(digest=digests.get(name, UNREAD), unread_id=unread.get(name, ""))
        for name, node in file_nodes(kb, kb.run.focus).items()
        if kb.run.focus is None or name in kb.run.focus or not node.record_id
    }


def _unsettled(kb: KnowledgeBase) -> set[str]:
    """The files whose equations results a budget decided in this run (RecordResult.budgeted)."""
    from kb.equations.engine import analysed

    analysis = analysed(kb)
    results = analysis.results.values() if analysis is not None else ()
    return {result.path for result in results if result.budgeted}


def _affected(
    snapshot: Snapshot, graph: DependencyGraph, changed: set[str], files: Mapping[str, FileState]
) -> set[str]:
    """The files whose findings `changed` may change (`graph`, `files`: the tree as it is now)."""
    affected = graph.affected(changed, DependencyGraph(snapshot.files))
    before, after = _ids_of(snapshot.files), _ids_of(files)
    if before != after:
        # A record came or went; the graph knows the loaded ones, not an id named by a file
        # that did not load (it is read every run, its id moves only when the file does).
        affected |= graph.naming(before ^ after) | graph.dependents(before ^ after)
        # what an all-ids rule says may change wherever it said something
        codes = codes_reading("all-ids")
        affected |= {
            name
            for name, rows in snapshot.findings.items()
            if name in graph.files and any(row[0] in codes for row in rows)
        }
    return affected


def _ids_of(files: Mapping[str, FileState]) -> set[str]:
    """The ids of the tree: of its records, and those that files kb cannot read name."""
    return {state.record_id or state.unread_id for state in files.values()} - {""}


# The language server's route (kb.lsp.engine): open buffers stand in for their files
# (kb.overlay) and are checked against the run snapshot by the steps above.


def states_of(
    root: Path, cache: RecordCache, paths: list[Path], standing_in: Overlay = NONE
) -> dict[str, FileState]:
    """The snapshot's view of just these files, loaded now (their references included)."""
    from kb.checker import load_stage, loaded_states

    return loaded_states(load_stage(root, cache, paths, True, None, standing_in))


def affected_by(
    snapshot: Snapshot, graph: DependencyGraph, changed: set[str], files: dict[str, FileState]
) -> set[str]:
    """The files whose findings `changed` may change (`graph`, `files`: the tree after it)."""
    return _affected(snapshot, graph, changed, files)


def ids_of(files: Mapping[str, FileState]) -> set[str]:
    """The ids of the tree `files` describes (those of files kb cannot read included)."""
    return _ids_of(files)


def check_focus(
    root: Path,
    cache: RecordCache,
    paths: list[Path],
    focus: Collection[str],
    ids: Collection[str],
    known: Mapping[str, str],
    standing_in: Overlay = NONE,
) -> list[Finding]:
    """The located findings on `focus`, checked on a knowledge base of `paths` alone.

    `paths` (in record_files' order) must hold what the checks of `focus` read
    (DependencyGraph.load_set); `ids`, every id of the tree; `known`, the digests
    already known by display path; `standing_in`, the records standing in for files
    (kb.overlay: the language server's buffers). kb.checker.execute, as `refresh` runs it.
    """
    from kb.checker import execute

    wanted = frozenset(focus)
    return execute(
        root, cache, paths, focus=wanted, ids=ids, digests=known, standing_in=standing_in
    ).findings
