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
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from kb.findings import Finding
from kb.recordcache import RecordCache
from kb.snapshot import Snapshot

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

    def stale(self) -> None:
        """The disk may have changed: read it again (incrementally) before the next check."""
        self.disk = None
        self.cache = None

    def snapshot(self) -> Snapshot:
        """The tree on disk as `kb validate` sees it (its run snapshot, brought up to date)."""
        if self.disk is None:
            from kb.incremental import refresh
            from kb.loader import display_path, record_files

            self.disk, _ = refresh(self.root)
            self.listed = {display_path(p): p for p in record_files(self.root)}
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
        files = self.snapshot().files.values()
        return sorted({state.record_id for state in files if state.record_id})

    def check(self, buffers: Mapping[Path, bytes]) -> Checked:
        """The findings with `buffers` (canonical paths under root -> bytes) standing in."""
        from kb import overlay
        from kb.checker import build_knowledge_base, resolve_locations, run_rules
        from kb.incremental import _affected, _ids_of, file_states
        from kb.loader import display_path
        from kb.reads import DependencyGraph, declared_reads
        from kb.recordcache import content_digest

        disk = self.snapshot()
        names = {display_path(path): path for path in buffers}
        digests = {name: content_digest(buffers[path]) for name, path in names.items()}
        dirty = {
            name: path
            for name, path in names.items()
            if name not in disk.files or disk.files[name].digest != digests[name]
        }
        if not dirty:
            return Checked({}, disk)
        with ExitStack() as stack:
            for path in dirty.values():
                stack.enter_context(overlay.standing_in(path, buffers[path]))
            cache = self.record_cache()
            files = {n: s for n, s in disk.files.items() if n not in dirty}
            built = build_knowledge_base(self.root, None, cache, _ordered(dirty.values()), True)
            files |= file_states(built)
            graph = DependencyGraph(files)
            affected = _affected(disk, graph, set(dirty), files)
            load = graph.load_set(affected, declared_reads())
            paths = {**self.listed, **dirty}
            known = {n: s.digest for n, s in disk.files.items() if n in load and n not in dirty}
            known |= {name: digests[name] for name in dirty}  # parsed just above: in the cache
            chosen = _ordered(paths.get(n) or Path(n) for n in load)
            kb = build_knowledge_base(self.root, None, cache, chosen, True, known)
            kb.run.outside_ids = kb.run.outside_ids | frozenset(_ids_of(files) - kb.records.keys())
            kb.run.focus = frozenset(affected)
            found = resolve_locations(f for f in run_rules(kb) if f.location.path in affected)
        fresh: dict[str, list[Finding]] = {name: [] for name in affected}
        for finding in sorted(found, key=Finding.sort_key):
            fresh[finding.location.path].append(finding)
        return Checked(fresh, disk, len(affected), len(load))


def _ordered(paths: Iterable[Path]) -> list[Path]:
    """Paths in record_files' order (kb.loader: by their parts)."""
    return sorted(paths, key=lambda path: path.parts)
