"""The equations results kept between runs: a view of kb's one store (kb.store).

`equations-<x>.kbstore` in the cache folder, under the one salt of
kb.fingerprint (kb's code, SymPy's and the other libraries' versions, the
schemas). The key is a SHA-256 over everything a record's checks read (its
equation sections, the values its bindings resolve to: `content_key`); the
value is the result's JSON text, so what comes back is exactly what a JSON
round trip gives. A damaged entry is a miss (the store checks every entry), so
a corrupt or stale cache can never change a result; entries are never evicted:
`.kb-cache/` is safe to delete when it has grown.

A result a time budget decided (`timed_out`: a check that ran out of time, EQ014,
or an identity whose simplification did) is never kept: it depends on how busy
the machine was, so the next run checks it again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kb.equations import codes
from kb.store import ShardedStore

STORE = "equations"
_TIMEOUT_WORDS = ("(timeout)", "timed out")


def content_key(payload: Any) -> str:
    """Hash JSON-able input (the store's salt covers the engine's code and SymPy)."""
    text = json.dumps(payload, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def timed_out(code: str, text: str) -> bool:
    """True for a finding or item whose outcome a time budget decided."""
    return code == codes.CHECK_TIMEOUT or any(word in text for word in _TIMEOUT_WORDS)


def budgeted(issues: Iterable[tuple[str, str]], details: Iterable[str]) -> bool:
    """True when a time budget decided an issue (code, message) or an item (detail) of a result."""
    return any(timed_out(c, m) for c, m in issues) or any(timed_out("", d) for d in details)


def is_final(value: Any) -> bool:
    """False for a result (RecordResult JSON) with anything a time budget decided."""
    if not isinstance(value, dict):
        return True
    issues = [(str(i.get("code")), str(i.get("message"))) for i in value.get("issues", ())]
    return not budgeted(issues, [str(i.get("detail")) for i in value.get("items", ())])


class ResultCache:
    """Get and put JSON results by key; `flush()` writes what this run put.

    `directory=None` (analyse without a cache) answers nothing and keeps nothing.
    """

    def __init__(self, directory: Path | None, salt: str = "") -> None:
        self.store = None if directory is None else ShardedStore(directory, STORE, salt)

    def get(self, key: str) -> Any | None:
        text = self.store.get(key) if self.store is not None else None
        if not isinstance(text, str):
            return None
        try:
            return json.loads(text)
        except ValueError:
            return None

    def put(self, key: str, value: Any) -> None:
        """Keep `value` unless a time budget decided part of it (see `is_final`)."""
        if self.store is not None and is_final(value):
            self.store.put(key, json.dumps(value, sort_keys=True))

    def flush(self) -> None:
        """Write the shards this run put something in (each atomically); errors are ignored."""
        if self.store is not None:
            self.store.save()
