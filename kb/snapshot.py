"""What the last run saw and found, so the next run can re-check only what changed.

One file, `<cache dir>/run-v1.marshal` beside the record cache (kb.recordcache).
For every file of the records tree it keeps the SHA-256 of the bytes that were
checked, the record id its path gives (empty if the file did not load), the
`id:` it claims, its kind, the record ids its references point at and those
whose contents its checks read; and
the located findings of the whole run, by file. kb.incremental reads it.

It is tied to the same salt as the record cache (kb's code, the schemas, the
libraries), to the records folder and to the working directory (findings
print paths relative to it); anything else, a corrupt file or a read error
gives no snapshot, and the run is a full one. Written atomically.
"""

from __future__ import annotations

import marshal
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from kb.findings import Finding
from kb.recordcache import (
    atomic_write_marshal,
    finding_from_tuple,
    finding_to_tuple,
    make_cache_dir,
)

FORMAT = "kb-run-snapshot-3"  # 3: the EQ017-EQ020 findings
FILE_NAME = "run-v1.marshal"
UNREAD = ""  # the digest of a file that did not load: such a file is re-checked every run


@dataclass(frozen=True)
class FileState:
    """One file as the last run saw it."""

    digest: str
    record_id: str  # "" when the file did not load as a record
    claimed_id: str  # its `id:` field ("" if none)
    kind: str
    targets: tuple[str, ...]  # record ids its references point at, sorted, unique
    reads: tuple[str, ...]  # those whose contents its checks read (kb.incremental), sorted


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
    return directory / FILE_NAME


def _context(salt: str, root: Path) -> tuple[str, str, str, str]:
    return (FORMAT, salt, str(root.resolve()), os.getcwd())


def read_snapshot(directory: Path, salt: str, root: Path) -> Snapshot | None:
    """The last run's snapshot for this records folder, or None if there is no valid one."""
    try:
        with open(snapshot_path(directory), "rb") as stream:
            header = marshal.load(stream)
            if header != _context(salt, root):
                return None
            files, findings = marshal.load(stream), marshal.load(stream)
        return Snapshot({path: FileState(*state) for path, state in files.items()}, findings)
    except (OSError, EOFError, ValueError, TypeError, AttributeError):
        return None


def write_snapshot(directory: Path, salt: str, root: Path, snapshot: Snapshot) -> None:
    """Save atomically; a read-only tree still validates, it just is not remembered."""
    files = {
        path: (s.digest, s.record_id, s.claimed_id, s.kind, s.targets, s.reads)
        for path, s in snapshot.files.items()
    }
    try:
        make_cache_dir(directory)
        atomic_write_marshal(
            snapshot_path(directory), [_context(salt, root), files, snapshot.findings]
        )
    except (OSError, ValueError):
        pass
