"""Per-file results kept between runs, keyed by content hash, so a warm `kb validate` skips parsing.

One file, `<cache dir>/records-v1.marshal` (the cache dir is $KB_CACHE_DIR, else
`.kb-cache` beside the records folder; safe to delete). Each entry maps a file's display
path and the SHA-256 of its bytes to what loading and schema-checking that file
produced: the parsed document, the load findings, the schema findings and the
references it makes (all functions of the file's bytes and the schemas). Each
entry is kept as its own marshal blob and decoded only when asked for, so a run
that needs a few hundred records (kb.incremental) does not pay for 10,000.

The whole cache is tied to a salt: the versions of kb, PyYAML and the schema
libraries, the schemas' bytes, and the size and mtime of kb's own source
files. Any change of those, a corrupt or foreign file, or any read error makes
an empty cache, so a stale cache can never change a result. marshal (not
pickle: loading it never runs code) reads a 10,000-record cache in a few tens of ms.
Writes are atomic (temp file + rename) and happen only when something changed.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import tempfile
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

from kb.findings import Finding, Location, Severity

FORMAT = "kb-record-cache-4"
CHUNK = 2_000  # entries per marshal chunk: saving never holds the whole file in one bytes object
FILE_NAME = "records-v1.marshal"
# [data, load findings, schema findings or None, references or None, findings of the
# record-local rules or None]; findings as tuples, references as (pointer, target, expected
# kind). Stored marshalled, one blob per entry.
Entry = list[Any]


def cache_dir(root: str | os.PathLike[str]) -> Path:
    """$KB_CACHE_DIR if set, else `.kb-cache` beside the records folder (both caches live there)."""
    override = os.environ.get("KB_CACHE_DIR")
    if override:
        return Path(override)
    base = Path(root)
    return (base.parent if base.name == "records" else base) / ".kb-cache"


def content_digest(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def salt(schema_files: list[Path]) -> str:
    """What every cached result depends on besides the file itself."""
    digest = hashlib.sha256(FORMAT.encode())
    for package in ("kb", "PyYAML", "jsonschema", "jsonschema-rs"):
        digest.update(f"{package}={_version(package)};".encode())
    for path in sorted(schema_files):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    digest.update(code_fingerprint().encode())
    return digest.hexdigest()


def code_fingerprint() -> str:
    """Size and mtime of every kb source file: editing kb's code empties the cache."""
    package = Path(__file__).resolve().parent
    stamps = []
    for path in sorted(package.rglob("*.py")):
        stat = path.stat()
        stamps.append(f"{path.relative_to(package)}:{stat.st_size}:{stat.st_mtime_ns}")
    return ";".join(stamps)


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "-"


class RecordCache:
    """Load once per run, look up and store per-file results, save once if anything changed."""

    def __init__(self, path: Path | None, salt_value: str) -> None:
        self.path = path
        self.salt = salt_value
        self.old: dict[str, bytes] = self._read() if path is not None else {}
        self.new: dict[str, Entry] = {}
        self.dirty: set[str] = set()  # keys whose entry this run created or completed
        self.changed = False

    @staticmethod
    def key(shown: str, digest: str) -> str:
        return f"{shown}\0{digest}"

    def get(self, key: str) -> Entry | None:
        entry = self.new.get(key)
        if entry is None:
            blob = self.old.get(key)
            if blob is None:
                return None
            try:
                entry = marshal.loads(blob)
            except (EOFError, ValueError, TypeError):
                return None
            self.new[key] = entry
        return entry

    def put_load(self, key: str, data: Any, findings: list[Finding]) -> None:
        self.new[key] = [data, [finding_to_tuple(f) for f in findings], None, None, None]
        self.dirty.add(key)
        self.changed = True

    def schema(self, key: str) -> list[Finding] | None:
        entry = self.new.get(key)
        if entry is None or entry[2] is None:
            return None
        return [finding_from_tuple(t) for t in entry[2]]

    def put_schema(self, key: str, findings: list[Finding]) -> None:
        entry = self.new.get(key)
        if entry is not None:
            entry[2] = [finding_to_tuple(f) for f in findings]
            self.dirty.add(key)
            self.changed = True

    def references(self, key: str) -> list[tuple[str, str, str]] | None:
        entry = self.new.get(key)
        return None if entry is None else entry[3]

    def put_references(self, key: str, references: list[tuple[str, str, str]]) -> None:
        entry = self.new.get(key)
        if entry is not None:
            entry[3] = references
            self.dirty.add(key)
            self.changed = True

    def local(self, key: str) -> list[Finding] | None:
        """The findings of the record-local rules (kb.checker) on this file, if known."""
        entry = self.new.get(key)
        if entry is None or entry[4] is None:
            return None
        return [finding_from_tuple(t) for t in entry[4]]

    def put_local(self, key: str, findings: list[Finding]) -> None:
        entry = self.new.get(key)
        if entry is not None:
            entry[4] = [finding_to_tuple(f) for f in findings]
            self.dirty.add(key)
            self.changed = True

    def save(self, live_keys: set[str] | None = None) -> None:
        """Write this run's entries, atomically; errors are ignored.

        Without `live_keys`, only the entries this run used are kept (deleted files drop
        out); with them, also every older entry whose key is live (a run that loaded
        only some files keeps the rest).
        """
        if self.path is None:
            return
        blobs = {key: self.old[key] if key in self.old and key not in self.dirty
                 else marshal.dumps(entry) for key, entry in self.new.items()}
        kept = self.old.keys() & live_keys - blobs.keys() if live_keys is not None else set()
        if not self.changed and len(blobs) + len(kept) == len(self.old):
            return
        blobs.update((key, self.old[key]) for key in kept)
        items = sorted(blobs.items())
        chunks = [dict(items[start:start + CHUNK]) for start in range(0, len(items), CHUNK)]
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_marshal(self.path, [(FORMAT, self.salt, len(chunks)), *chunks])
        except (OSError, ValueError):
            pass  # a read-only tree still validates; it just is not cached

    def _read(self) -> dict[str, bytes]:
        entries: dict[str, bytes] = {}
        try:
            with open(self.path, "rb") as stream:  # type: ignore[arg-type]
                header = marshal.load(stream)
                valid = isinstance(header, tuple) and len(header) == 3
                if not valid or header[:2] != (FORMAT, self.salt) or not isinstance(header[2], int):
                    return {}
                for _ in range(header[2]):
                    chunk = marshal.load(stream)
                    if not isinstance(chunk, dict):
                        return {}
                    entries.update(chunk)
        except (OSError, EOFError, ValueError, TypeError):
            return {}
        return entries


def atomic_write_marshal(path: Path, objects: Iterable[Any]) -> None:
    """Write marshalled objects one after another to `path`: all of them, or nothing."""
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".marshal")
    try:
        with os.fdopen(handle, "wb") as stream:
            for item in objects:
                stream.write(marshal.dumps(item))
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _location_tuple(location: Location) -> tuple[str, int, int, str]:
    return (location.path, location.line, location.col, location.pointer)


def finding_to_tuple(finding: Finding) -> tuple[Any, ...]:
    related = tuple(_location_tuple(loc) for loc in finding.related)
    return (finding.code, finding.severity.value, _location_tuple(finding.location),
            finding.message, finding.hint, related)


def finding_from_tuple(item: tuple[Any, ...]) -> Finding:
    code, severity, location, message, hint, related = item
    return Finding(code, Severity(severity), Location(*location), message, hint,
                   tuple(Location(*loc) for loc in related))
