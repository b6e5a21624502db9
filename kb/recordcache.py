"""Per-file results kept between runs, keyed by content hash, so a warm `kb validate` skips parsing.

Sixteen shard files, `<cache dir>/records-v2-<nn>.marshal` (the cache dir is
$KB_CACHE_DIR, else `.kb-cache` beside the records folder; safe to delete). Each
entry maps a file's display path and the SHA-256 of its bytes to what loading and
checking that file alone produced: the parsed document, the load findings, the
schema findings, the references it makes and the record-local rules' findings
(all functions of the file's bytes, the schemas and kb's code). Each entry is
kept as its own marshal blob and decoded only when asked for, so a run that
needs a few hundred records (kb.incremental) does not pay for 10,000; a run
rewrites only the shards whose entries changed.

The whole cache is tied to a salt: the versions of Python, kb, PyYAML, the
schema libraries, SymPy and mpmath, the schemas' bytes, and the size and mtime
of kb's own source files. Any change of those, a corrupt or foreign shard, or any read error makes
an empty shard, so a stale cache can never change a result. marshal (not
pickle: loading it never runs code) reads a 10,000-record cache in a few tens of ms.
Writes are atomic (temp file + rename) and happen only when something changed.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
import tempfile
import zlib
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

from kb.findings import Finding, Location, Severity

FORMAT = "kb-record-cache-5"
SHARDS = 16
FILE_PREFIX = "records-v2"
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


def make_cache_dir(directory: Path) -> None:
    """Create the cache folder so that it ignores itself: git never sees it (as ruff's does)."""
    directory.mkdir(parents=True, exist_ok=True)
    ignore = directory / ".gitignore"
    if not ignore.exists():
        handle, temp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".gitignore")
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write("# Created by kb: its cache, safe to delete.\n*\n")
        os.replace(temp, ignore)


def content_digest(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def salt(schema_files: list[Path]) -> str:
    """What every cached result depends on besides the file itself.

    The run snapshot (kb.snapshot) keeps whole findings, equations ones included,
    under this salt too: so SymPy's and mpmath's versions and Python's count.
    """
    digest = hashlib.sha256(FORMAT.encode())
    digest.update(sys.version.encode())
    for package in ("kb-placement-tax", "PyYAML", "jsonschema", "jsonschema-rs", "sympy", "mpmath"):
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
    """Load once per run, look up and store per-file results, save once if anything changed.

    Entries live in SHARDS files by a hash of their key, so a run that changed a few
    files rewrites a few shards, not the whole cache (270 MB at 100,000 records).
    """

    def __init__(self, directory: Path | None, salt_value: str) -> None:
        self.directory = directory
        self.salt = salt_value
        self.old: dict[str, bytes] = self._read() if directory is not None else {}
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
        self._touch(key)

    def schema(self, key: str) -> list[Finding] | None:
        return self._findings(key, 2)

    def put_schema(self, key: str, findings: list[Finding]) -> None:
        self._put(key, 2, [finding_to_tuple(f) for f in findings])

    def references(self, key: str) -> list[tuple[str, str, str]] | None:
        entry = self.new.get(key)
        return None if entry is None else entry[3]

    def put_references(self, key: str, references: list[tuple[str, str, str]]) -> None:
        self._put(key, 3, references)

    def local(self, key: str) -> list[Finding] | None:
        """The findings of the record-local rules (kb.checker) on this file, if known."""
        return self._findings(key, 4)

    def put_local(self, key: str, findings: list[Finding]) -> None:
        self._put(key, 4, [finding_to_tuple(f) for f in findings])

    def _findings(self, key: str, slot: int) -> list[Finding] | None:
        entry = self.new.get(key)
        if entry is None or entry[slot] is None:
            return None
        return [finding_from_tuple(t) for t in entry[slot]]

    def _put(self, key: str, slot: int, value: Any) -> None:
        entry = self.new.get(key)
        if entry is not None:
            entry[slot] = value
            self._touch(key)

    def _touch(self, key: str) -> None:
        self.dirty.add(key)
        self.changed = True

    def save(self, live_keys: set[str] | None = None) -> None:
        """Write the shards this run changed, each atomically; errors are ignored.

        Without `live_keys`, only the entries this run used are kept (deleted files drop
        out); with them, also every older entry whose key is live (a run that loaded
        only some files keeps the rest).
        """
        if self.directory is None:
            return
        kept = set(self.new) | (self.old.keys() & live_keys if live_keys is not None else set())
        stale = {shard_of(key) for key in self.dirty} | {
            shard_of(key) for key in self.old.keys() - kept
        }
        by_shard: dict[int, list[str]] = {shard: [] for shard in stale}
        for key in kept:
            by_shard.get(shard_of(key), []).append(key)
        try:
            make_cache_dir(self.directory)
            for shard, keys in sorted(by_shard.items()):  # one shard's blobs in memory at a time
                blobs = {key: self._blob(key) for key in sorted(keys)}
                path = self.directory / shard_name(shard)
                atomic_write_marshal(path, [(FORMAT, self.salt), blobs])
        except (OSError, ValueError):
            pass  # a read-only tree still validates; it just is not cached

    def _blob(self, key: str) -> bytes:
        entry = self.new.get(key)
        if entry is None or (key in self.old and key not in self.dirty):
            return self.old[key]
        return marshal.dumps(entry)

    def _read(self) -> dict[str, bytes]:
        entries: dict[str, bytes] = {}
        for shard in range(SHARDS):
            entries.update(_read_shard(self.directory / shard_name(shard), self.salt))  # type: ignore[operator]
        return entries


def shard_of(key: str) -> int:
    return zlib.crc32(key.encode()) % SHARDS


def shard_name(shard: int) -> str:
    return f"{FILE_PREFIX}-{shard:02x}.marshal"


def _read_shard(path: Path, salt_value: str) -> dict[str, bytes]:
    """One shard's entries; a missing, foreign, stale or damaged shard holds none."""
    try:
        with open(path, "rb") as stream:
            header, entries = marshal.load(stream), marshal.load(stream)
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if header != (FORMAT, salt_value) or not isinstance(entries, dict):
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
