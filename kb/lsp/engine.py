"""The server's checks: the tree on disk once, then only what the open buffers reach.

`Engine(root)` keeps the tree as `kb validate` last saw it on disk (kb.incremental's
run snapshot: the files' dependency nodes and their findings) and checks the open
buffers against it the way kb.incremental checks a changed file: the buffers that
differ from the disk are the changed files; kb.reads' DependencyGraph gives the
files whose findings they may change (`affected`: the buffer itself and every file
that binds, templates, claims or names it) and what checking those must load; just
those are loaded (the buffers standing in for their files, kb.overlay) and checked,
and every other file keeps the findings the snapshot holds. So a `check` answers,
for every file of the tree, what `kb validate` would say if the buffers were saved;
tests/lsp/test_engine.py holds it to a full run with the buffers saved.

The disk is read again (`stale()`, incremental too) when the editor says it
changed (a save, watched files); files changed on disk without a word from the
editor are seen at the next save.

With `freeze` (the server's engines), the snapshot, once read, is moved out of the
garbage collector's sight (gc.freeze): it lives until the disk changes, and without
this every full collection walked all of it, in the middle of an edit's check
(at 265 records, edit checks' CPU p95 72 ms with it walked, 43 ms frozen).
`stale()` gives it back (gc.unfreeze) so that what a new snapshot replaces can go.
"""

from __future__ import annotations

import gc
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from kb.findings import Finding
from kb.overlay import Overlay
from kb.reads import DependencyGraph
from kb.recordcache import RecordCache
from kb.snapshot import FileState, Snapshot

CACHE_CHECKS = 100


@dataclass
class Checked:
    """One check: the findings of the files it re-checked, and of the rest from the disk."""

    fresh: dict[str, list[Finding]]  # by display path: every file the buffers may affect
    disk: Snapshot
    rechecked: int = 0
    loaded: int = 0

    def findings(self, name: str) -> list[Finding]:
        """The findings on `name` (a display path) with the buffers as they are."""
        if name in self.fresh:
            return self.fresh[name]
        return self.disk.findings_of([name])

    def affected(self) -> set[str]:
        return set(self.fresh)


@dataclass
class Engine:
    """One records tree: its disk snapshot, and checks of open buffers against it."""

    root: Path
    disk: Snapshot | None = None
    listed: dict[str, Path] = field(default_factory=dict)  # display path -> the loader's Path
    # The record cache, kept between checks: what a check parsed (a buffer's text too,
    # by its hash) answers the next one from memory. Never saved; dropped with the disk
    # snapshot and every CACHE_CHECKS checks, so memory stays bounded.
    cache: RecordCache | None = None
    checks: int = 0
    graph: DependencyGraph | None = None  # of the disk snapshot; each plan patches a copy
    sorted_ids: list[str] | None = None
    freeze: bool = False  # gc.freeze the snapshot once read (the server's engines)

    def stale(self) -> None:
        """The disk may have changed: read it again (incrementally) before the next check."""
        if self.freeze and self.disk is not None:
            gc.unfreeze()  # what the next snapshot replaces can be collected
        self.disk = None
        self.cache = None
        self.graph = None
        self.sorted_ids = None

    def snapshot(self) -> Snapshot:
        """The tree on disk as `kb validate` sees it (its run snapshot, brought up to date)."""
        if self.disk is None:
            from kb.incremental import refresh
            from kb.loader import display_path, record_files

            self.disk, _ = refresh(self.root)
            self.listed = {display_path(p): p for p in record_files(self.root)}
            self.graph = DependencyGraph(self.disk.files)
            self.graph.patched(self.disk.files, ())  # index the disk once, now, not on an edit
            if self.freeze:
                gc.freeze()  # long-lived until the disk changes: no collection walks it
        return self.disk

    def record_cache(self) -> RecordCache:
        """The record cache this engine's checks share (see `cache`)."""
        from kb import fingerprint
        from kb.checker import open_cache

        self.checks += 1
        if self.cache is None or self.checks % CACHE_CHECKS == 0:
            self.cache = open_cache(self.root, fingerprint.salt())
        return self.cache

    def ids(self) -> list[str]:
        """The record ids of the tree on disk, sorted."""
        if self.sorted_ids is None:
            files = self.snapshot().files.values()
            self.sorted_ids = sorted({state.record_id for state in files if state.record_id})
        return self.sorted_ids

    def plan(self, buffers: Mapping[Path, bytes]) -> Plan:
        """What `buffers` (canonical paths under root -> bytes) change: the files to re-check."""
        from kb.incremental import affected_by, states_of
        from kb.loader import display_path
        from kb.recordcache import content_digest

        disk = self.snapshot()
        names = {display_path(path): path for path in buffers}
        digests = {name: content_digest(buffers[path]) for name, path in names.items()}
        dirty = {
            name: path
            for name, path in names.items()
            if name not in disk.files or disk.files[name].digest != digests[name]
        }
        plan = Plan(disk, {name: buffers[path] for name, path in dirty.items()}, dirty, digests)
        if not dirty:
            return plan
        cache, paths = self.record_cache(), _ordered(dirty.values())
        built = states_of(self.root, cache, paths, plan.standing_in())
        plan.files = {n: s for n, s in disk.files.items() if n not in dirty} | built
        assert self.graph is not None
        plan.graph = self.graph.patched(plan.files, dirty)
        plan.affected = affected_by(disk, plan.graph, set(dirty), plan.files)
        return plan

    def run(self, plan: Plan, names: Collection[str]) -> dict[str, list[Finding]]:
        """The findings on `names` (of `plan.affected`), checked with the buffers standing in.

        Exact for each file checked whatever else is: what its checks read is loaded
        (kb.reads: `load_set`), as kb.incremental loads it for every affected file.
        """
        from kb.incremental import check_focus, ids_of
        from kb.reads import declared_reads

        focus = set(names) & plan.affected
        if not focus or plan.graph is None:
            return {}
        load = plan.graph.load_set(focus, declared_reads())
        paths = {**self.listed, **plan.dirty}
        disk = plan.disk.files
        known = {n: disk[n].digest for n in load if n in disk}
        known |= {name: plan.digests[name] for name in plan.dirty}  # parsed by `plan`: cached
        if plan.ids is None:
            plan.ids = frozenset(ids_of(plan.files))
        chosen = _ordered(paths.get(n) or Path(n) for n in load)
        cache, standing_in = self.record_cache(), plan.standing_in()
        found = check_focus(self.root, cache, chosen, focus, plan.ids, known, standing_in)
        plan.loaded += len(load)
        fresh: dict[str, list[Finding]] = {name: [] for name in focus}
        for finding in sorted(found, key=Finding.sort_key):
            fresh[finding.location.path].append(finding)
        return fresh

    def check(self, buffers: Mapping[Path, bytes]) -> Checked:
        """The findings with `buffers` standing in: every affected file re-checked at once."""
        plan = self.plan(buffers)
        fresh = self.run(plan, plan.affected)
        return Checked(fresh, plan.disk, len(plan.affected), plan.loaded)


@dataclass
class Plan:
    """A check to make: the buffers that differ from the disk and the files they affect."""

    disk: Snapshot
    buffers: dict[str, bytes]  # display path -> bytes, the dirty buffers only
    dirty: dict[str, Path]
    digests: dict[str, str]
    files: dict[str, FileState] = field(default_factory=dict)
    graph: DependencyGraph | None = None
    affected: set[str] = field(default_factory=set)
    loaded: int = 0
    ids: frozenset[str] | None = None  # the tree's ids with the buffers (kb.incremental.ids_of)

    def standing_in(self) -> Overlay:
        """The dirty buffers standing in for their files (kb.overlay)."""
        from kb.overlay import NONE

        overlay = NONE
        for name, path in self.dirty.items():
            overlay = overlay.standing_in(path, self.buffers[name])
        return overlay


def _ordered(paths: Iterable[Path]) -> list[Path]:
    """Paths in record_files' order (kb.loader: by their parts)."""
    return sorted(paths, key=lambda path: path.parts)
