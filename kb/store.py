"""kb's one store for everything kept between runs: keyed entries in shard files.

Every view uses it: the per-file record results (kb.recordcache), the equations
results (kb.equations.cache), the run snapshot (kb.snapshot), the site's
build manifest (kb.sitegen.manifest) and the priced end-to-end rows (kb.ledger.kept).
`ShardedStore(directory, name, salt)` keeps entries in `<name>-<nn>.kbstore` files
(one `<name>.kbstore` when it has one shard) under `directory`, each entry in the
shard `shard_of(key)` names.

Nothing read is trusted:

- a shard starts with a magic, the length and a BLAKE2b checksum of its index
  (the format, the store's name, its salt, and per key the offset, length and
  checksum of the entry); a shard whose index does not check out, or whose
  format, name or salt differ, holds nothing;
- every entry's checksum (over its key and bytes) is verified when it is read;
  a mismatch is a miss, and the caller computes the entry afresh. marshal only
  ever decodes bytes whose checksum matched, bytes kb itself wrote (marshal, not
  pickle: loading never runs code, though the Python docs warn it is not meant
  for untrusted data, which is why nothing unverified reaches it).

Writes are atomic and safe under concurrent runs: a shard is written to a
uniquely named temporary file in the same folder and renamed over the old one
(os.replace), so a reader sees the old shard or the new one, never half of one;
two runs saving at once each write whole shards, and the later rename wins (the
other run's new entries are recomputed when next needed). A shard is not flushed
to disk (no fsync: ~6 ms a file, most of a one-change run's writes): a crash may
leave it empty or cut, which its checksums turn into a miss, as for any damage.
A store that cannot be written (a read-only tree) still answers; it just keeps
nothing. The folder ignores itself in git.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import struct
import tempfile
import zlib
from collections.abc import Callable, Collection, Iterable, Iterator
from pathlib import Path
from typing import Any

from kb import fileread, settings

FORMAT = "kb-store-1"
MAGIC = b"KBSTORE1"
SUFFIX = ".kbstore"
_PREFIX = struct.Struct("<8sQ16s")  # magic, index length, index checksum
# Version 2: no back-references, whose use depends on reference counts, so equal values
# give equal bytes in every process (the site's manifest is part of a byte-identical build).
MARSHAL_VERSION = 2
GITIGNORE = "# Created by kb: its cache, safe to delete.\n*\n"


def shard_of(key: str, shards: int) -> int:
    """The shard an entry lives in: a CRC-32 of its key."""
    return zlib.crc32(_key_bytes(key)) % shards


def shard_file(name: str, shard: int, shards: int) -> str:
    return f"{name}{SUFFIX}" if shards == 1 else f"{name}-{shard:02x}{SUFFIX}"


def cache_dir(root: str | os.PathLike[str]) -> Path:
    """$KB_CACHE_DIR if set, else `.kb-cache` beside the records folder (the stores live there)."""
    override = settings.cache_dir()
    if override is not None:
        return override
    base = Path(root)
    return (base.parent if base.name == "records" else base) / ".kb-cache"


def root_salt(salt: str, root: str | os.PathLike[str]) -> str:
    """`salt` for the stores of one records root: another root's entries are misses there.

    The same file, at the same display path with the same bytes, is another record
    under another root (its id and kind come from its place under the root): two
    roots that share a cache folder ($KB_CACHE_DIR, or `.kb-cache` for `--root tree`
    and `--root tree/records`) never read each other's results. Sharing one folder,
    they take turns: each save replaces the other root's shards.
    """
    return f"{salt}\0{os.path.realpath(root)}"


def atomic_write(path: Path, data: bytes | Iterable[bytes | memoryview]) -> None:
    """Write `data` (or its parts, never joined: the snapshot at 100,000 files is 42 MB) whole."""
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    try:
        with os.fdopen(handle, "wb") as stream:
            for part in [data] if isinstance(data, bytes) else data:
                stream.write(part)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


class ShardedStore:
    """Keyed entries (marshal-able, never None), a shard read when first asked for.

    `directory=None` keeps entries in memory only.
    """

    def __init__(self, directory: Path | None, name: str, salt: str, shards: int = 16) -> None:
        self.directory, self.name, self.salt, self.shards = directory, name, salt, shards
        self._old: dict[int, _Shard] = {}
        self._new: dict[str, tuple[bytes, bytes]] = {}  # key -> (checksum, marshalled value)
        self._later: dict[str, tuple[int, Callable[[str], Any]]] = {}  # key -> (shard, maker)
        self._used: set[str] = set()  # keys this run read or wrote

    def get(self, key: str) -> Any | None:
        """The entry under `key`, or None if there is none or it does not check out."""
        later = self._later.get(key)
        if later is not None:
            payload = _marshalled(later[1](key))
            return None if payload is None else marshal.loads(payload)
        new = self._new.get(key)
        if new is not None:
            return marshal.loads(new[1])
        found = self._shard(shard_of(key, self.shards)).get(key)
        if found is None:
            return None
        try:
            value = marshal.loads(found)
        except Exception:  # noqa: BLE001 - unreachable for verified bytes; a miss regardless
            return None
        self._used.add(key)
        return value

    def empty(self) -> bool:
        """True when `get` finds nothing (a stat of each shard file not read yet, never a read)."""
        if self._new or self._later or any(found.index for found in self._old.values()):
            return False
        return self.directory is None or not any(
            os.path.exists(self.directory / shard_file(self.name, shard, self.shards))
            for shard in range(self.shards)
            if shard not in self._old
        )

    def put(self, key: str, value: Any) -> None:
        self._later.pop(key, None)
        payload = _marshalled(value)
        if payload is None:  # a type marshal cannot keep: not stored, computed again next time
            return
        self._new[key] = (_checksum(key, payload), payload)
        self._used.add(key)

    def put_later(self, keys: Iterable[str], value_of: Callable[[str], Any]) -> None:
        """put(key, value_of(key)) each, marshalled only as its shard is written.

        So a save never holds all the bytes at once (a cold record cache at 100,000 files:
        ~330 MB). `value_of` must give the same value until the save.
        """
        for key in keys:
            self._new.pop(key, None)
            self._later[key] = (shard_of(key, self.shards), value_of)
            self._used.add(key)

    def keep(self, key: str) -> None:
        """Count `key` as used by this run without reading it (`save` keeps what was used)."""
        self._used.add(key)

    def keys(self) -> set[str]:
        """Every key the store holds now (its saved shards and this run's entries)."""
        found = set(self._new) | self._later.keys()
        for shard in range(self.shards):
            found.update(self._shard(shard).index)
        return found

    def save(self, live_keys: Collection[str] | None = None) -> None:
        """Write the changed shards, keeping what this run used and `live_keys` (None: all)."""
        if self.directory is None:
            return
        live = None if live_keys is None else set(live_keys)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            ignore = self.directory / ".gitignore"  # the folder ignores itself in git
            if not ignore.exists():
                atomic_write(ignore, GITIGNORE.encode())
            for shard in self._changed(live):
                path = self.directory / shard_file(self.name, shard, self.shards)
                atomic_write(path, self.encode_parts(shard, live))
        except (OSError, ValueError):
            pass  # a read-only tree still validates; it just is not remembered

    def encode(self, shard: int, live: set[str] | None = None) -> bytes:
        """The bytes of one shard file as `save(live)` would write it now."""
        return b"".join(self.encode_parts(shard, live))

    def encode_parts(self, shard: int, live: set[str] | None = None) -> list[bytes | memoryview]:
        entries: dict[str, tuple[bytes, bytes | memoryview]] = {}
        if live is None or not (self._used | live) <= self._new.keys() | self._later.keys():
            old = self._shard(shard)
            for key in old.index:
                raw = old.raw(key) if self._keeps(key, live) else None
                if raw is not None:
                    entries[key] = raw
        entries.update(
            (key, entry) for key, entry in self._new.items() if shard_of(key, self.shards) == shard
        )
        for key, (its_shard, value_of) in self._later.items():
            if its_shard == shard:
                made = _marshalled(value_of(key))
                if made is not None:
                    entries[key] = (_checksum(key, made), made)
        index: dict[str, tuple[int, int, bytes]] = {}
        parts: list[bytes | memoryview] = []
        offset = 0
        for key in sorted(entries):
            checksum, payload = entries[key]
            index[key] = (offset, len(payload), checksum)
            parts.append(payload)
            offset += len(payload)
        header = marshal.dumps((FORMAT, self.name, self.salt, index), MARSHAL_VERSION)
        prefix = _PREFIX.pack(MAGIC, len(header), _digest(header))
        return [prefix, header, *parts]

    def _keeps(self, key: str, live: set[str] | None) -> bool:
        return live is None or key in self._used or key in live

    def _changed(self, live: set[str] | None) -> Iterator[int]:
        written = {shard_of(key, self.shards) for key in self._new}
        written.update(shard for shard, _ in self._later.values())
        for shard in range(self.shards):
            if shard in written:
                yield shard
            elif live is not None and any(
                not self._keeps(key, live) for key in self._shard(shard).index
            ):
                yield shard

    def _shard(self, shard: int) -> _Shard:
        found = self._old.get(shard)
        if found is None:
            data = None
            if self.directory is not None:  # a regular file only (not a FIFO, a device)
                with contextlib.suppress(OSError):
                    path = self.directory / shard_file(self.name, shard, self.shards)
                    data = fileread.read_limited(path, 1 << 62)
            expected = (FORMAT, self.name, self.salt)
            found = self._old[shard] = _Shard() if data is None else _Shard.parse(data, expected)
        return found


class _Shard:
    """One shard file as read: its verified index (entries are verified when read)."""

    def __init__(self, data: bytes = b"", start: int = 0, index: Any = None) -> None:
        self.data = memoryview(data)
        self.start = start
        self.index: dict[str, Any] = index if isinstance(index, dict) else {}

    @classmethod
    def parse(cls, data: bytes, expected: tuple[str, str, str]) -> _Shard:
        if len(data) < _PREFIX.size:
            return cls()
        magic, length, checksum = _PREFIX.unpack_from(data)
        start = _PREFIX.size + length
        if magic != MAGIC or start > len(data):
            return cls()
        header = data[_PREFIX.size : start]
        if _digest(header) != checksum:
            return cls()
        try:
            found = marshal.loads(header)
        except Exception:  # noqa: BLE001 - a checked header kb did not write: nothing
            return cls()
        if not isinstance(found, tuple) or len(found) != 4 or found[:3] != expected:
            return cls()
        return cls(data, start, found[3])

    def raw(self, key: str) -> tuple[bytes, memoryview] | None:
        slot = self.index.get(key)
        if slot is None:
            return None
        offset, length, checksum = slot
        begin = self.start + offset
        return checksum, self.data[begin : begin + length]

    def get(self, key: str) -> memoryview | None:
        raw = self.raw(key)
        return raw[1] if raw is not None and _checksum(key, raw[1]) == raw[0] else None


def _marshalled(value: Any) -> bytes | None:
    try:
        return marshal.dumps(value, MARSHAL_VERSION)
    except ValueError:
        return None


def _key_bytes(key: str) -> bytes:
    return key.encode("utf-8", "surrogatepass")


def _digest(data: bytes | memoryview) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def _checksum(key: str, payload: bytes | memoryview) -> bytes:
    digest = hashlib.blake2b(_key_bytes(key) + b"\0", digest_size=16)
    digest.update(payload)
    return digest.digest()
