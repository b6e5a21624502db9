"""What the last run saw and found, so the next run can re-check only what changed.

A view of kb's one store (kb.store: `run.kbstore` in the cache folder, under
the one salt of kb.fingerprint), holding one entry. For every file of the
records tree it keeps the SHA-256 of the bytes that were checked, the record id
its path gives (empty if the file did not load), the `id:` it claims, its kind
and the record ids its references point at; and the located findings of the
whole run, by file. kb.incremental reads it.

The entry names the records folder and the working directory (findings print
paths relative to it); another folder, another directory, another salt, a
damaged file or a read error gives no snapshot, and the run is a full one.
A file with a finding that a time budget decided (kb.equations.cache.
timed_out: a check that ran out of time) is kept as unread, so the next run
checks it again instead of replaying the timeout.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import astuple, dataclass, field, replace
from pathlib import Path

from kb.equations.cache import timed_out
from kb.findings import Finding
from kb.recordcache import finding_from_tuple, finding_to_tuple
from kb.store import ShardedStore, shard_file

STORE, KEY = "run", "snapshot"
UNREAD = ""  # the digest of a file that did not load: such a file is re-checked every run


@dataclass(frozen=True)
class FileState:
    """One file as the last run saw it."""

    digest: str
    record_id: str  # "" when the file did not load as a record
    claimed_id: str  # its `id:` field ("" if none)
    kind: str
    targets: tuple[str, ...]  # record ids its references point at, sorted, unique


@dataclass
class Snapshot:
    """The files and the located findings of one run, by display path."""

    files: dict[str, FileState] = field(default_factory=dict)
    findings: dict[str, list[tuple[object, ...]]] = field(default_factory=dict)

    def put_findings(self, findings: Iterable[Finding]) -> None:
        for finding in findings:
            self.findings.setdefault(finding.location.path, []).append(finding_to_tuple(finding))

    def findings_of(self, paths: Iterable[str]) -> list[Finding]:
        return [finding_from_tuple(t) for path in paths for t in self.findings.get(path, ())]


def snapshot_path(directory: Path) -> Path:
    return directory / shard_file(STORE, 0, 1)


def _place(root: Path) -> tuple[str, str]:
    return (str(root.resolve()), os.getcwd())


def read_snapshot(directory: Path, salt: str, root: Path) -> Snapshot | None:
    """The last run's snapshot for this records folder, or None if there is no valid one."""
    stored = ShardedStore(directory, STORE, salt, shards=1).get(KEY)
    if not isinstance(stored, tuple) or len(stored) != 3 or stored[0] != _place(root):
        return None
    _, files, findings = stored
    try:
        return Snapshot({path: FileState(*state) for path, state in files.items()}, findings)
    except (TypeError, AttributeError):
        return None


def write_snapshot(directory: Path, salt: str, root: Path, snapshot: Snapshot) -> None:
    """Save atomically; a read-only tree still validates, it just is not remembered."""
    again = {path for path, rows in snapshot.findings.items() if any(map(_budgeted, rows))}
    files = {
        path: astuple(replace(s, digest=UNREAD) if path in again else s)
        for path, s in snapshot.files.items()
    }
    store = ShardedStore(directory, STORE, salt, shards=1)
    store.put(KEY, (_place(root), files, snapshot.findings))
    store.save(())


def _budgeted(row: tuple[object, ...]) -> bool:
    return timed_out(str(row[0]), str(row[3]))
