"""A content-addressed result cache in `.kb-cache/` (or $KB_CACHE_DIR); safe to delete.

The key is a SHA-256 over everything a record's checks depend on: the engine's
own source, SymPy's version, the record's equation sections and the values its
bindings resolve to. Writes are atomic (temp file + rename), reads that fail
for any reason are misses, so a corrupt or stale cache can never change a result.
Results live in 16 shard files (`eq-v3-<hex>.marshal`), tied to the engine's
fingerprint.
"""

from __future__ import annotations

import functools
import hashlib
import json
import marshal
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

from kb.recordcache import atomic_write_marshal, make_cache_dir

ENGINE_VERSION = "2"  # 2: the states say what was checked; predictions, errata
ENGINE_DIR = Path(__file__).resolve().parent


@lru_cache(maxsize=1)
@functools.cache  # once per process: it was read and hashed for every record (~1 s at 10,000)
def engine_fingerprint() -> str:
    """Hash the engine's source and its unit table, so editing either invalidates results."""
    digest = hashlib.sha256(ENGINE_VERSION.encode())
    for path in sorted([*ENGINE_DIR.glob("*.py"), ENGINE_DIR.parent / "quantities.py"]):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


@functools.cache  # importlib.metadata costs ~0.5 ms a call
def sympy_version() -> str:
    """SymPy's version without importing SymPy (a cache hit stays import-free)."""
    try:
        return metadata.version("sympy")
    except metadata.PackageNotFoundError:  # pragma: no cover - sympy is a dependency
        return "unknown"


def content_key(payload: Any) -> str:
    """Hash JSON-able input together with the engine and SymPy versions."""
    text = json.dumps(
        {"engine": engine_fingerprint(), "sympy": sympy_version(), "input": payload},
        sort_keys=True,
        default=str,
        separators=(",", ":"),
    )
    return hashlib.sha256(text.encode()).hexdigest()


SHARDS = 16  # by the key's first hex digit


class ResultCache:
    """Get and put JSON results by key, kept in 16 marshal shards under one directory.

    A shard is read on first use and written once, at `flush()`, if something was put
    in it: a cold run of 10,000 records made ~4,000 small files before, one create and
    rename each (~1 s). Values are stored as their JSON text, so what comes back is
    exactly what a JSON round trip gives. Like the files before, entries are never
    evicted: `.kb-cache/` is safe to delete when it has grown.
    """

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory
        self.shards: dict[str, dict[str, str]] = {}
        self.touched: set[str] = set()

    def get(self, key: str) -> Any | None:
        if self.directory is None:
            return None
        text = self._shard(key[:1]).get(key)
        if text is None:
            return None
        try:
            return json.loads(text)
        except ValueError:
            return None

    def put(self, key: str, value: Any) -> None:
        if self.directory is None:
            return
        self._shard(key[:1])[key] = json.dumps(value, sort_keys=True)
        self.touched.add(key[:1])

    def flush(self) -> None:
        """Write the shards this run put something in (each atomically); errors are ignored."""
        if self.directory is None:
            return
        try:
            make_cache_dir(self.directory)
            for name in sorted(self.touched):
                atomic_write_marshal(
                    self.directory / _shard_file(name),
                    [(FORMAT, engine_fingerprint()), self.shards[name]],
                )
        except OSError:
            pass  # a read-only tree still validates; it just is not cached
        self.touched.clear()

    def _shard(self, name: str) -> dict[str, str]:
        shard = self.shards.get(name)
        if shard is None:
            shard = self.shards[name] = _read_shard(self.directory / _shard_file(name))  # type: ignore[operator]
        return shard


FORMAT = "kb-equations-cache-3"


def _shard_file(name: str) -> str:
    return f"eq-v3-{name}.marshal"


def _read_shard(path: Path) -> dict[str, str]:
    """A shard's entries; a missing, stale or damaged one holds none."""
    try:
        with open(path, "rb") as stream:
            header, entries = marshal.load(stream), marshal.load(stream)
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if header != (FORMAT, engine_fingerprint()) or not isinstance(entries, dict):
        return {}
    return entries
