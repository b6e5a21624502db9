"""Per-file results kept between runs, keyed by content hash, so a warm `kb validate` skips parsing.

A typed view of kb's one store (kb.store: `records-<nn>.kbstore` in the cache
folder, under the one salt of kb.fingerprint). Each entry maps a file's display
path and the SHA-256 of its bytes to a `FileResult`: everything loading and
checking that file alone produced (all functions of the file's bytes, the schemas
and kb's code), written in one piece (`put_file`) and read in one piece (`get`).
An entry is decoded only when asked for, so a run that needs a few
hundred records (kb.incremental) does not pay for 10,000; a damaged entry is a
miss (the store checks every entry), so a stale or corrupt cache can never
change a result.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kb.findings import Finding, Location, Severity
from kb.store import ShardedStore

if TYPE_CHECKING:
    from kb import model

STORE = "records"
Reference = tuple[str, str, str]  # (pointer, target, expected kind), as the store keeps it
# An entry's references: rows as stored, or the knowledge base's own Reference objects
# (kb.checker hands them over: each reference held once, ~60 MB at 100,000 records).
References = Sequence[Reference] | Sequence["model.Reference"]


# The layout of an entry as stored; a store written with another layout is never read as
# this one (the salt changes with kb's code too, kb.fingerprint: this is the second guard).
LAYOUT = "file-result/2"


@dataclass(frozen=True, slots=True)
class FileResult:
    """Everything one file gave on its own: the record cache's one entry for it.

    `data`: the parsed document (None when it did not parse); `load`: its load
    findings; `schema`, `references`, `local`: its schema verdict (kb.schema), the
    references it makes and the record-local rules' findings (kb.checker.check_file),
    None when the file did not become a record, or for an entry that holds only
    its parse (then the checker computes them and writes the whole entry anew).
    """

    data: Any
    load: list[Finding]
    schema: list[Finding] | None = None
    references: References | None = None
    local: list[Finding] | None = None

    @property
    def checked(self) -> bool:
        """True when the entry holds the file's checks (every part but the parse's)."""
        return self.schema is not None and self.references is not None and self.local is not None

    def encoded(self) -> tuple[Any, ...]:
        return (LAYOUT, self.data, _tuples(self.load), _tuples(self.schema),
                _rows(self.references), _tuples(self.local))  # fmt: skip

    @classmethod
    def decoded(cls, value: Any) -> FileResult | None:
        """The entry a stored tuple holds, or None if it is not one (another layout included)."""
        if not isinstance(value, tuple) or len(value) != 6 or value[0] != LAYOUT:
            return None
        _, data, load, schema, references, local = value
        try:
            return cls(data, _findings(load) or [], _findings(schema), references, _findings(local))
        except (TypeError, ValueError):
            return None


def content_digest(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


class RecordCache:
    """Look up and store per-file results during a run, save once at its end."""

    def __init__(self, directory: Path | None, salt_value: str) -> None:
        self.store = ShardedStore(directory, STORE, salt_value)
        self.entries: dict[str, FileResult] = {}
        self.dirty: set[str] = set()  # keys whose entry this run wrote (put_file)
        self.keys: dict[tuple[str, str], str] = {}  # (display path, digest) -> key, this run

    @staticmethod
    def key(shown: str, digest: str, real: str | None = None) -> str:
        """The entry of these bytes at this path; a symlink's names where it resolves.

        A record's id and kind come from its resolved path (kb.loader), and its schema
        and record-local findings from those. `real`: where the path resolves if it
        is a symlink, "" if it is not, when the caller knows (kb.snapshot.probe).
        """
        if real is None:
            real = os.path.realpath(shown) if os.path.islink(shown) else ""
        return f"{shown}\0{digest}\0{real}" if real else f"{shown}\0{digest}"

    def key_of(self, shown: str, digest: str, real: str | None = None) -> str:
        """`key`, found once a run for each file and hash (the loader's, then the stages')."""
        found = self.keys.get((shown, digest))
        if found is None:
            found = self.keys[(shown, digest)] = self.key(shown, digest, real)
        return found

    def empty(self) -> bool:
        """True when no entry can be found (nothing kept yet: a cold run's loader reads once)."""
        return not self.entries and self.store.empty()

    def get(self, key: str) -> FileResult | None:
        """The file's entry (one read: every part of it), or None when there is none."""
        entry = self.entries.get(key)
        if entry is None:
            entry = FileResult.decoded(self.store.get(key))
            if entry is not None:
                self.entries[key] = entry
        return entry

    def put_file(self, key: str, result: FileResult) -> None:
        """Keep the file's whole result: its one write in a run (saved by `save`).

        The result is kept as given, not copied (its lists are the caller's to hold).
        """
        self.entries[key] = result
        self.dirty.add(key)

    def hold(self, key: str, result: FileResult) -> None:
        """The entry the cache holds for `key`, in another form: kept in memory, not saved.

        kb.checker hands over the knowledge base's Reference objects for the rows an
        entry read from disk holds, so that each reference is held once.
        """
        self.entries[key] = result

    def save(self, live_keys: set[str] | None = None) -> None:
        """Write what this run computed; errors are ignored (a read-only tree is not cached).

        Without `live_keys`, only the entries this run used are kept (deleted files drop
        out); with them, also every older entry whose key is live (a run that loaded
        only some files keeps the rest).
        """
        self.store.put_later(sorted(self.dirty), self._encoded)  # marshalled shard by shard
        self.dirty.clear()
        self.store.save(live_keys or ())

    def _encoded(self, key: str) -> tuple[Any, ...]:
        return self.entries[key].encoded()


def _rows(references: References | None) -> list[Reference] | None:
    """The references as the store keeps them: (pointer, target, expected kind) rows."""
    if references is None:
        return None
    return [
        r if isinstance(r, tuple) else (r.pointer, r.target, r.expected_kind) for r in references
    ]


def _tuples(findings: list[Finding] | None) -> list[tuple[Any, ...]] | None:
    return None if findings is None else [finding_to_tuple(f) for f in findings]


def _findings(rows: Any) -> list[Finding] | None:
    return None if rows is None else [finding_from_tuple(row) for row in rows]


def _location_tuple(location: Location) -> tuple[str, int, int, str, int]:
    return (location.path, location.line, location.col, location.pointer, location.offset)


def finding_to_tuple(finding: Finding) -> tuple[Any, ...]:
    related = tuple(_location_tuple(loc) for loc in finding.related)
    return (
        finding.code,
        finding.severity.value,
        _location_tuple(finding.location),
        finding.message,
        finding.hint,
        related,
    )


def finding_from_tuple(item: tuple[Any, ...]) -> Finding:
    code, severity, location, message, hint, related = item
    return Finding(
        code,
        Severity(severity),
        Location(*location),
        message,
        hint,
        tuple(Location(*loc) for loc in related),
    )
