"""What the last run saw and found, so the next run can re-check only what changed.

A view of kb's one store (kb.store: `run.kbstore` in the cache folder, under
the one salt of kb.fingerprint), holding one entry. For every file of the
records tree it keeps the SHA-256 of the bytes that were checked, the record id
its path gives (empty if the file did not load; such a file keeps the id its
place names instead: the tree has that record, unreadable), the `id:` it
claims, its kind, the record ids its references point at; what its `stat` said just before it was
read (`probe`, in `seen`); the located findings of the whole run, by file;
and when the files were probed (`taken`). kb.incremental reads it.

A file whose stat is what the snapshot recorded is not read again (`trusted`),
as git's index, mypy and ruff do: device, inode, size, modification and change
time in nanoseconds, and for a symlink its target's stat and real path. The
change time cannot be set from user space (`os.utime` sets only the access and
modification times), so every write, rename or `chmod` moves it. A file whose
timestamps are not at least `MARGIN_NS` older than the moment it was probed is
*racily clean* (git's word: a write in the same tick of a coarse clock would
leave its stat as it was) and is read and hashed anyway. So a changed file
keeps its recorded stat only if the clock was set back, the filesystem's clock
runs more than the margin behind this machine's, or its timestamps are coarser
than the margin (on Windows `st_ctime` is the creation time: there, also only if
the modification time was put back); `kb validate --full` reads every file
whatever its stat says.

The entry names the records folder and the working directory (findings print
paths relative to it); another folder, another directory, another salt, a
damaged file or a read error gives no snapshot, and the run is a full one.
A file whose equations result a budget decided (`unsettled`, from the
engine's `RecordResult.budgeted`: a check that ran out of its steps or past its
guard) is kept as unread, so the next run checks it again instead of replaying
the timeout; what its findings say plays no part.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from kb.findings import Finding
from kb.recordcache import finding_from_tuple, finding_to_tuple
from kb.store import ShardedStore

STORE, KEY = "run", "snapshot"
UNREAD = ""  # the digest of a file that did not load: such a file is re-checked every run
MARGIN_NS = 3_000_000_000  # timestamps this close to the probe are not trusted (FAT: 2 s)
Seen = tuple[int, int, int, int, int, str]  # dev, inode, size, mtime_ns, ctime_ns, real path


class FileState(NamedTuple):
    """One file as a run saw it: a node of kb.reads' dependency graph, as the snapshot keeps it."""

    record_id: str  # "" when the file did not load as a record
    claimed_id: str  # its `id:` field ("" if none)
    kind: str
    targets: tuple[str, ...]  # record ids its references point at, sorted, unique
    bound: tuple[str, ...] = ()  # of `targets`, those whose contents it reads (kb.reads.bound_of)
    digest: str = UNREAD  # the SHA-256 of the bytes checked (the snapshot's; a full run's: none)
    # When it did not load: the id its place names (kb.loader's unread_id), else "". The
    # tree has that record all the same: a reference to it does not dangle (kb.checker).
    unread_id: str = ""


@dataclass
class Snapshot:
    """The files and the located findings of one run, by display path."""

    files: dict[str, FileState] = field(default_factory=dict)
    findings: dict[str, list[tuple[object, ...]]] = field(default_factory=dict)
    seen: dict[str, Seen | tuple[()]] = field(default_factory=dict)  # `probe` before each read
    taken: int = 0  # time.time_ns() just before the folders and files were probed
    folders: dict[str, Seen] = field(default_factory=dict)  # every folder a listing enters
    checked: list[str] = field(default_factory=list)  # kb.reads.checked_paths(files)
    # The schema findings records waive, located (kb.api: such a record has no typed view).
    waived: dict[str, list[tuple[object, ...]]] = field(default_factory=dict)
    # Not kept: the files whose results a budget decided in this run (written as unread).
    unsettled: set[str] = field(default_factory=set)

    def trusted(self, name: str, now: Seen | None) -> bool:
        """True when the file's stat says it holds the bytes the snapshot hashed."""
        old = self.files.get(name)
        return (
            old is not None
            and old.digest != UNREAD
            and self.seen.get(name) == now
            and settled(now, self.taken)
        )

    def unchanged(self) -> bool:
        """True when no folder and no file changed, by their stats alone (nothing is read).

        A folder's stat changes when a name in it comes, goes or is renamed, so the same
        folders give the same listing.
        """
        return (
            bool(self.folders)
            and all(probe(f) == s and settled(s, self.taken) for f, s in self.folders.items())
            and all(self.trusted(name, probe(name)) for name in self.seen)
        )

    def put_findings(self, findings: Iterable[Finding], waived: Iterable[Finding] = ()) -> None:
        """Keep a run's reported findings and the schema findings records waived."""
        for kept, into in ((findings, self.findings), (waived, self.waived)):
            for finding in kept:
                into.setdefault(finding.location.path, []).append(finding_to_tuple(finding))

    def findings_of(self, paths: Iterable[str]) -> list[Finding]:
        return [finding_from_tuple(t) for path in paths for t in self.findings.get(path, ())]

    def waived_schema(self) -> list[Finding]:
        return [finding_from_tuple(t) for rows in self.waived.values() for t in rows]


def probe(path: Path | str) -> Seen | None:
    """What `stat` says of a file (of its target, for a symlink, with its real path)."""
    try:
        found, real = os.lstat(path), ""
        if stat.S_ISLNK(found.st_mode):
            found, real = os.stat(path), os.path.realpath(path)
    except (OSError, ValueError):
        return None
    return (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns, real)


def settled(seen: Seen | None, taken: int) -> bool:
    """True when both timestamps are at least the margin older than `taken` (not racy)."""
    return seen is not None and max(seen[3], seen[4]) < taken - MARGIN_NS


def probe_folders(root: Path) -> dict[str, Seen]:
    """The stat of `root` and of every folder under it (not through symlinks), as listed."""
    found: dict[str, Seen] = {}
    pending = [str(root)]
    while pending:
        folder = pending.pop()
        seen = probe(folder)
        if seen is None:
            return {}  # gone or unreadable meanwhile: no shortcut next run
        found[folder] = seen
        try:
            with os.scandir(folder) as scan:
                entries = list(scan)
        except OSError:
            continue  # unreadable: the loader skips it; making it readable moves its ctime
        try:
            pending.extend(e.path for e in entries if e.is_dir(follow_symlinks=False))
        except OSError:
            return {}  # an entry the loader lists as a file (kb.loader._entry_kind)
    return found


def _place(root: Path) -> tuple[str, str]:
    return (str(root.resolve()), os.getcwd())


def read_snapshot(directory: Path, salt: str, root: Path) -> Snapshot | None:
    """The last run's snapshot for this records folder, or None if there is no valid one."""
    stored = ShardedStore(directory, STORE, salt, shards=1).get(KEY)
    if not isinstance(stored, tuple) or len(stored) != 8 or stored[0] != _place(root):
        return None
    _, files, *rest = stored
    try:
        return Snapshot(dict(zip(files, map(FileState._make, files.values()), strict=True)), *rest)
    except (TypeError, AttributeError):
        return None


def write_snapshot(directory: Path, salt: str, root: Path, snapshot: Snapshot) -> None:
    """Save atomically; a read-only tree still validates, it just is not remembered."""
    files = {
        path: tuple(s._replace(digest=UNREAD) if path in snapshot.unsettled else s)
        for path, s in snapshot.files.items()
    }
    store = ShardedStore(directory, STORE, salt, shards=1)
    fields = (
        snapshot.findings,
        snapshot.seen,
        snapshot.taken,
        snapshot.folders,
        snapshot.checked,
        snapshot.waived,
    )
    store.put(KEY, (_place(root), files, *fields))
    del files  # its marshalled bytes are what is kept (~15 MB of tuples at 100,000 files)
    store.save(())
