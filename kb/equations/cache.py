"""A content-addressed result cache in `.kb-cache/` (or $KB_CACHE_DIR); safe to delete.

The key is a SHA-256 over everything a record's checks depend on: the engine's
own source, SymPy's version, the record's equation sections and the values its
bindings resolve to. Writes are atomic (temp file + rename), reads that fail
for any reason are misses, so a corrupt or stale cache can never change a result.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

ENGINE_VERSION = "1"
ENGINE_DIR = Path(__file__).resolve().parent


@lru_cache(maxsize=1)
@functools.cache  # once per process: it was read and hashed for every record (~1 s at 10,000)
def engine_fingerprint() -> str:
    """Hash the engine's own source, so editing kb/equations invalidates old results."""
    digest = hashlib.sha256(ENGINE_VERSION.encode())
    for path in sorted(ENGINE_DIR.glob("*.py")):
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
    text = json.dumps({"engine": engine_fingerprint(), "sympy": sympy_version(), "input": payload},
                      sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


class ResultCache:
    """Get and put JSON results by key under one directory."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory

    def get(self, key: str) -> Any | None:
        if self.directory is None:
            return None
        try:
            with open(self.directory / f"eq-{key}.json", encoding="utf-8") as handle:
                return json.load(handle)
        except (OSError, ValueError):
            return None

    def put(self, key: str, value: Any) -> None:
        if self.directory is None:
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            _atomic_write(self.directory / f"eq-{key}.json", json.dumps(value, sort_keys=True))
        except OSError:
            pass  # a read-only tree still validates; it just is not cached


def _atomic_write(path: Path, text: str) -> None:
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
