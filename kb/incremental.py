"""The snapshot strategy of `kb validate` (kb.api): re-check only what a change can reach.

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
reported, when an id comes or goes. tests/test_reads.py holds every rule to its declaration, and
tests/test_incremental.py edits trees at random (symlinks, duplicates, renames
and kind swaps too) and checks that the findings always equal a full run's.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from kb import fileread, fingerprint
from kb.loader import MAX_FILE_BYTES, display_path, record_files
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
    from kb.findings import Finding
    from kb.model import KnowledgeBase


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
    taken = time.time_ns()  # before any folder or file is probed, and every probe before a read
    folders = probe_folders(root)
    shown = {display_path(p): p for p in record_files(root)}
    seen = {name: probe(path) for name, path in shown.items()}
    if snapshot is None:
        shown.clear()  # a full check lists the tree itself: ~50 MB of Paths at 100,000 files
        snapshot, stats = _check_everything(root, salt)
    else:
        stats = _recheck_changes(root, salt, snapshot, shown, seen)
        if stats.mode == "snapshot" and not _restamps(snapshot, seen, taken, folders):
            return snapshot, stats
    snapshot.seen = {name: now or () for name, now in seen.items()}
    snapshot.taken, snapshot.folders = taken, folders
    snapshot.checked = checked_paths(snapshot.files)
    write_snapshot(cache_dir(root), salt, root, snapshot)
    return snapshot, stats


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
    snapshot: Snapshot, shown: dict[str, Path], seen: dict[str, Seen | None]
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


def _digest(path: Path) -> str:
    """The file's content hash, read as the loader reads it; UNREAD if the loader cannot."""
    try:  # a FIFO, a device or a file over the limit: the loader's finding, every run
        return content_digest(fileread.read_limited(path, MAX_FILE_BYTES))
    except OSError:
        return UNREAD


def _check_everything(root: Path, salt: str) -> tuple[Snapshot, RunStats]:
    from kb.checker import check_everything, open_cache, resolve_locations, waived

    kb, findings = check_everything(root, None, open_cache(root, salt))
    snapshot = Snapshot(file_states(kb), unsettled=_unsettled(kb))
    snapshot.put_findings(findings, resolve_locations(waived(kb, kb.run.schema or [])))
    return snapshot, replace(
        kb.run.stats, mode="full", rechecked=len(snapshot.files), loaded=len(kb)
    )


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


def _recheck_changes(
    root: Path, salt: str, snapshot: Snapshot, shown: dict[str, Path], seen: dict[str, Seen | None]
) -> RunStats:
    """Bring `snapshot` up to date with the files as they are now."""
    old = snapshot.files
    digests = _digests(snapshot, shown, seen)
    changed = {
        name
        for name, digest in digests.items()
        if digest == UNREAD or name not in old or old[name].digest != digest
    }
    changed |= old.keys() - digests.keys()
    if not changed:
        return RunStats("snapshot", 0, 0)
    from kb.checker import build_knowledge_base, open_cache, resolve_locations, run_rules, waived

    cache = open_cache(root, salt)  # only now: it is the biggest file kb reads
    files = {n: s for n, s in old.items() if n not in changed}
    files |= _states_of(root, cache, [p for n, p in shown.items() if n in changed])
    graph = DependencyGraph(files)
    affected = _affected(snapshot, graph, changed, files)
    load = graph.load_set(affected, declared_reads())
    kb = build_knowledge_base(
        root, None, cache, [p for n, p in shown.items() if n in load], True, digests
    )
    kb.run.outside_ids = kb.run.outside_ids | frozenset(_ids_of(files) - kb.records.keys())
    kb.run.focus = frozenset(affected)
    fresh = resolve_locations(f for f in run_rules(kb, cache) if f.location.path in affected)
    schema = (f for f in waived(kb, kb.run.schema or []) if f.location.path in affected)
    cache.save({RecordCache.key(n, digest, _link(seen[n])) for n, digest in digests.items()})
    files.update((name, state) for name, state in file_states(kb).items() if name in affected)
    snapshot.files = files
    snapshot.findings = {
        n: f for n, f in snapshot.findings.items() if n in files and n not in affected
    }
    snapshot.waived = {n: f for n, f in snapshot.waived.items() if n in files and n not in affected}
    snapshot.put_findings(fresh, resolve_locations(schema))
    snapshot.unsettled = _unsettled(kb) & affected
    return replace(kb.run.stats, mode="incremental", rechecked=len(affected), loaded=len(load))


def _unsettled(kb: KnowledgeBase) -> set[str]:
    """The files whose equations results a budget decided in this run (RecordResult.budgeted)."""
    from kb.equations.engine import analysed

    analysis = analysed(kb)
    results = analysis.results.values() if analysis is not None else ()
    return {result.path for result in results if result.budgeted}


def _affected(
    snapshot: Snapshot, graph: DependencyGraph, changed: set[str], files: dict[str, FileState]
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


def _ids_of(files: dict[str, FileState]) -> set[str]:
    """The ids of the tree: of its records, and those that files kb cannot read name."""
    return {state.record_id or state.unread_id for state in files.values()} - {""}


def _states_of(
    root: Path, cache: RecordCache, paths: list[Path], standing_in: Overlay = NONE
) -> dict[str, FileState]:
    """Load just these files and describe them (their references included)."""
    from kb.checker import build_knowledge_base

    kb = build_knowledge_base(root, None, cache, paths, listed=True, standing_in=standing_in)
    return file_states(kb)


# The language server's route (kb.lsp.engine): open buffers stand in for their files
# (kb.overlay) and are checked against the run snapshot by the steps above.


def states_of(
    root: Path, cache: RecordCache, paths: list[Path], standing_in: Overlay = NONE
) -> dict[str, FileState]:
    """The snapshot's view of just these files, loaded now (their references included)."""
    return _states_of(root, cache, paths, standing_in)


def affected_by(
    snapshot: Snapshot, graph: DependencyGraph, changed: set[str], files: dict[str, FileState]
) -> set[str]:
    """The files whose findings `changed` may change (`graph`, `files`: the tree after it)."""
    return _affected(snapshot, graph, changed, files)


def ids_of(files: Mapping[str, FileState]) -> set[str]:
    """The ids of the tree `files` describes (those of files kb cannot read included)."""
    return {state.record_id or state.unread_id for state in files.values()} - {""}


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
    (kb.overlay: the language server's buffers). As `_recheck_changes` checks the files
    it re-checks.
    """
    from kb.checker import build_knowledge_base, resolve_locations, run_rules

    kb = build_knowledge_base(root, None, cache, paths, True, known, standing_in)
    kb.run.outside_ids = kb.run.outside_ids | frozenset(set(ids) - kb.records.keys())
    kb.run.focus = frozenset(focus)
    found = (f for f in run_rules(kb, cache) if f.location.path in focus)
    return resolve_locations(found, standing_in)
