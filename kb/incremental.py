"""`kb validate` that re-checks only what a change can reach.

Every run reads and hashes every file (the only honest way to know what
changed) and compares them with the last run's snapshot (kb.snapshot):

- nothing changed: the snapshot's findings are the answer;
- some files changed: the *affected* records are re-checked — the changed
  files; every record whose references reach a changed record id, directly or
  through others (a proposal depends on its placements' hardware); every
  record claiming the same `id:` as a changed one; and, because the ledger
  finds receipts by interconnect, every placement (and all that reaches it)
  whose references reach what a changed receipt measures. They are checked on
  a knowledge base of just them, everything their references reach and, for
  placements, the receipts on their interconnects; every other record keeps
  the findings it had;
- no valid snapshot (first run, kb or the schemas changed, another working
  directory) or `--full`: every record is checked, as kb.checker does.

Why this is exact: a rule's findings on a record depend only on that record,
the records its references reach and (for placements) those receipts, never
on records that merely point at it — except that a dangling reference's hint
("did you mean ...?") looks at every id: the knowledge base of a partial run
knows the ids it did not load, and records with dangling references are
re-checked whenever an id comes or goes. tests/test_incremental.py edits knowledge bases at random
and checks that the findings always equal a full run's.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from kb.checker import (
    build_knowledge_base,
    cache_salt,
    open_cache,
    resolve_locations,
    run_rules,
    selected,
)
from kb.findings import Finding
from kb.loader import display_path, record_files
from kb.model import KnowledgeBase
from kb.recordcache import RecordCache, content_digest
from kb.snapshot import UNREAD, FileState, Snapshot, read_snapshot, write_snapshot
from kb.store import cache_dir

# The ledger reads everything a placement or a proposal reaches; it also finds a
# placement's receipts by interconnect, not by reference (kb.ledger.transfers).
LEDGER_KINDS = ("placement", "proposal")
REVERSE_READ_KINDS = ("receipt",)
STATS: dict[str, object] = {}  # how the last run went: mode, rechecked, loaded (tests, bench)


@dataclass
class Checked:
    """What `kb validate` reports: located, sorted findings and the paths they cover."""

    findings: list[Finding]
    checked_paths: list[str]


def validate(
    root: Path,
    paths: Sequence[Path] | None = None,
    *,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    full: bool = False,
) -> Checked:
    """Check `root`, reusing the last run wherever nothing changed; report on `paths`."""
    salt = cache_salt()
    snapshot = None if full else read_snapshot(cache_dir(root), salt, root)
    if snapshot is None:
        snapshot = _check_everything(root, open_cache(root, salt))
        write_snapshot(cache_dir(root), salt, root, snapshot)
    else:
        shown = {display_path(p): p for p in record_files(root)}
        digests = {name: _digest(path) for name, path in shown.items()}
        if _recheck_changes(root, salt, snapshot, shown, digests):
            write_snapshot(cache_dir(root), salt, root, snapshot)
    findings = [
        f
        for f in snapshot.findings_of(sorted(snapshot.findings))
        if selected(f.code, select, ignore)
    ]
    scope = _scope(snapshot, paths) if paths else None
    if scope is not None:
        findings = [f for f in findings if f.location.path in scope]
    loaded = sorted(path for path, state in snapshot.files.items() if state.record_id)
    checked = sorted(scope) if scope is not None else loaded
    return Checked(sorted(findings, key=Finding.sort_key), checked)


def _digest(path: Path) -> str:
    try:
        return content_digest(path.read_bytes())
    except OSError:
        return UNREAD


def _check_everything(root: Path, cache: RecordCache) -> Snapshot:
    kb = build_knowledge_base(root, None, cache)
    findings = resolve_locations(run_rules(kb))
    cache.save()
    snapshot = Snapshot(_file_states(kb))
    snapshot.put_findings(findings)
    STATS.update(mode="full", rechecked=len(snapshot.files), loaded=len(kb))
    return snapshot


def _file_states(kb: KnowledgeBase) -> dict[str, FileState]:
    """The snapshot's view of every file `kb` was loaded from (in its focus, if it has one)."""
    targets: dict[str, set[str]] = {}
    reads: dict[str, set[str]] = {}
    for ref in kb.references:
        target, _, field = ref.target.partition("#")
        targets.setdefault(ref.source_id, set()).add(target)
        if field:  # a binding: the equations engine reads the value there
            reads.setdefault(ref.source_id, set()).add(target)
    states = {f.location.path: FileState(UNREAD, "", "", "", (), ()) for f in kb.load_findings}
    for record in kb.records.values():
        if kb.in_focus(record):
            claimed = record.data.get("id")
            read = targets if record.kind in LEDGER_KINDS else reads
            states[record.path] = FileState(
                record.digest,
                record.id,
                claimed if isinstance(claimed, str) else "",
                record.kind,
                tuple(sorted(targets.get(record.id, ()))),
                tuple(sorted(read.get(record.id, ()))),
            )
    return states


def _recheck_changes(
    root: Path, salt: str, snapshot: Snapshot, shown: dict[str, Path], digests: dict[str, str]
) -> bool:
    """Bring `snapshot` up to date with the files as they are now; False if nothing changed."""
    old = snapshot.files
    changed = {
        name
        for name, digest in digests.items()
        if digest == UNREAD or name not in old or old[name].digest != digest
    }
    changed |= old.keys() - digests.keys()
    if not changed:
        STATS.update(mode="snapshot", rechecked=0, loaded=0)
        return False
    cache = open_cache(root, salt)  # only now: it is the biggest file kb reads
    files = {n: s for n, s in old.items() if n not in changed}
    files |= _states_of(root, cache, [p for n, p in shown.items() if n in changed])
    affected = _affected(snapshot, files, changed)
    load = _Graph(files).closure(affected)
    kb = build_knowledge_base(
        root, None, cache, [p for n, p in shown.items() if n in load], listed=True
    )
    kb.outside_ids = kb.outside_ids | frozenset(_ids_of(files) - kb.records.keys())
    kb.focus = frozenset(affected)
    fresh = resolve_locations(f for f in run_rules(kb) if f.location.path in affected)
    cache.save({RecordCache.key(name, digest) for name, digest in digests.items()})
    files.update((name, state) for name, state in _file_states(kb).items() if name in affected)
    snapshot.files = files
    snapshot.findings = {
        n: f for n, f in snapshot.findings.items() if n in files and n not in affected
    }
    snapshot.put_findings(fresh)
    STATS.update(mode="incremental", rechecked=len(affected), loaded=len(load))
    return True


def _affected(snapshot: Snapshot, files: dict[str, FileState], changed: set[str]) -> set[str]:
    """The files whose findings `changed` may change (`files`: the tree as it is now)."""
    touched, links = _touched_ids(changed, snapshot.files, files)
    graph = _Graph(files)
    affected = graph.affected(touched | graph.ledgers_on(links), changed & files.keys())
    if any(_id_in(snapshot.files, n) != _id_in(files, n) for n in changed):
        # an id came or went: every dangling reference's "did you mean" may change
        affected |= {
            name
            for name, rows in snapshot.findings.items()
            if name in files and any(row[0] == "RF001" for row in rows)
        }
    return affected


def _id_in(files: dict[str, FileState], name: str) -> str:
    state = files.get(name)
    return state.record_id if state is not None else ""


def _ids_of(files: dict[str, FileState]) -> set[str]:
    return {state.record_id for state in files.values() if state.record_id}


def _states_of(root: Path, cache: RecordCache, paths: list[Path]) -> dict[str, FileState]:
    """Load just these files and describe them (their references included)."""
    return _file_states(build_knowledge_base(root, None, cache, paths, listed=True))


def _touched_ids(
    changed: set[str], old: dict[str, FileState], new: dict[str, FileState]
) -> tuple[set[str], set[str]]:
    """Every id whose meaning a change may have changed, and the links of changed receipts."""
    touched: set[str] = set()
    links: set[str] = set()
    for name in changed:
        for state in (old.get(name), new.get(name)):
            if state is not None:
                touched.update(i for i in (state.record_id, state.claimed_id) if i)
                if state.kind in REVERSE_READ_KINDS:
                    links.update(state.targets)
    return touched, links


class _Graph:
    """The reference graph of the records tree as the snapshot and the changes describe it."""

    def __init__(self, files: dict[str, FileState]) -> None:
        self.files = files
        self.by_id: dict[str, list[str]] = {}
        self.referrers: dict[str, list[str]] = {}
        for name, state in files.items():
            for key in {state.record_id, state.claimed_id} - {""}:
                self.by_id.setdefault(key, []).append(name)
            for target in state.targets:
                self.referrers.setdefault(target, []).append(name)

    def affected(self, touched: set[str], changed: set[str]) -> set[str]:
        """The changed files, the files holding a touched id, and all that reach them."""
        found = set(changed)
        for record_id in touched:
            found.update(self.by_id.get(record_id, ()))
        return found | self._reaching(touched)

    def ledgers_on(self, links: set[str]) -> set[str]:
        """Ids of the placements whose references reach one of `links`."""
        return {
            self.files[name].record_id
            for name in self._reaching(links)
            if self.files[name].kind in LEDGER_KINDS
        }

    def _reaching(self, ids: set[str]) -> set[str]:
        found: set[str] = set()
        pending = list(ids)
        while pending:
            for name in self.referrers.get(pending.pop(), ()):
                if name not in found:
                    found.add(name)
                    pending.append(self.files[name].record_id)
        return found

    def closure(self, names: Iterable[str]) -> set[str]:
        """`names` and every record whose contents their checks read.

        The equations engine reads the records a binding names; the ledger reads all a
        placement or proposal reaches, and the receipts on the links among them. Records
        only pointed at need not be loaded: the knowledge base knows they exist.
        """
        names = set(names)
        ledger = self._forward(n for n in names if self.files[n].kind in LEDGER_KINDS)
        links = {self.files[n].record_id for n in ledger if self.files[n].kind == "interconnect"}
        receipts = {
            n
            for link in links
            for n in self.referrers.get(link, ())
            if self.files[n].kind in REVERSE_READ_KINDS
        }
        found = names | ledger | receipts
        return found | {
            n
            for name in found
            for target in self.files[name].reads
            for n in self.by_id.get(target, ())
        }

    def _forward(self, names: Iterable[str]) -> set[str]:
        found: set[str] = set()
        pending = list(names)
        while pending:
            name = pending.pop()
            if name not in found:
                found.add(name)
                for target in self.files[name].targets:
                    pending.extend(self.by_id.get(target, ()))
        return found


def _scope(snapshot: Snapshot, paths: Sequence[Path]) -> set[str]:
    """Display paths to report on: the files under `paths`, and the records that reference them."""
    wanted = [str(p.resolve()) for p in paths]
    resolve = _Resolver()
    chosen = {name for name in snapshot.files if _under(resolve(name), wanted)}
    ids = {snapshot.files[name].record_id for name in chosen} - {""}
    return chosen | {name for name, state in snapshot.files.items() if ids & set(state.targets)}


class _Resolver:
    """Path.resolve for many files, resolving each folder once (a symlinked file on its own)."""

    def __init__(self) -> None:
        self.folders: dict[str, str] = {}

    def __call__(self, name: str) -> str:
        path = Path(name)
        if path.is_symlink():
            return str(path.resolve())
        folder, base = os.path.split(name)
        resolved = self.folders.get(folder)
        if resolved is None:
            resolved = self.folders[folder] = str(Path(folder).resolve())
        return os.path.join(resolved, base)


def _under(path: str, roots: list[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)
