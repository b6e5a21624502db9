"""The equations results kept between runs: a view of kb's one store (kb.store).

`equations-<x>.kbstore` in the cache folder, under the one salt of
kb.fingerprint (kb's code, SymPy's and the other libraries' versions, the
schemas). A record's result is kept in its file's slot (`slot`: the record's
path), with the SHA-256 of everything its checks read (its equation sections,
the values its bindings resolve to: `content_key`): a result is served only when
that key matches, and a new result replaces the slot's old one, so the store
holds one result per record, not one per version ever checked. A plan (the
compiled checks of one maths text, kb.equations.plan) is kept under its own
content key, shared by every record with that text. The value is the JSON
text, so what comes back is exactly what a JSON round trip gives. A damaged
entry is a miss (the store checks every entry), so a corrupt or stale cache can
never change a result. A run that checks every record (`flush(prune=True)`)
keeps only the entries it used: the slots of deleted records and the plans of
maths no record has any more go.

A result a budget decided (its `budgeted` field, which the engine sets from the
budget's own count of the checks it stopped, kb.equations.timeout.budgets_stopped:
a check that ran out of steps, EQ014, or past the wall-clock guard, EQ029, or an
identity whose simplification did) is never kept: the guard depends on how busy
the machine was, and a count of steps may differ by a fraction of a percent
between processes (kb.equations.work), so the next run checks it again. What a
result's messages say plays no part.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kb.store import ShardedStore

STORE = "equations"


def canonical(payload: Any) -> str:
    """JSON-able input as one text: sorted keys, no spaces (what a key hashes)."""
    return json.dumps(payload, sort_keys=True, default=str, separators=(",", ":"))


def content_key(*parts: str) -> str:
    """Hash texts (`canonical` ones; the store's salt covers the engine's code and SymPy).

    The parts are joined with NUL, which neither a path nor JSON text holds.
    """
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def is_final(value: Any) -> bool:
    """False for a result (RecordResult JSON) that a budget decided: its `budgeted` field."""
    return not (isinstance(value, dict) and value.get("budgeted") is True)


class ResultCache:
    """Get and put JSON results by key (a record's in its slot); `flush()` writes what was put.

    `directory=None` (analyse without a cache) answers nothing and keeps nothing.
    """

    def __init__(self, directory: Path | None, salt: str = "") -> None:
        self.store = None if directory is None else ShardedStore(directory, STORE, salt)

    def get(self, key: str, slot: str | None = None) -> Any | None:
        """The value under `key`; with `slot`, the slot's value if it was kept under `key`."""
        if self.store is None:
            return None
        if slot is None:
            return _loads(self.store.get(key))
        stored = self.store.get(_slot_key(slot))
        if not isinstance(stored, tuple) or len(stored) != 3 or stored[0] != key:
            return None
        self.store.keep(stored[2])  # its plan stays while a result made with it is served
        return _loads(stored[1])

    def put(
        self,
        key: str,
        value: Any,
        slot: str | None = None,
        plan: str = "",
        later: Callable[[], Any] | None = None,
    ) -> None:
        """Keep `value` unless a time budget decided part of it (see `is_final`).

        With `slot`, it replaces whatever the slot held; `plan` is the key of the plan
        the record's maths compiles to. `later` (with `slot`): a function that gives
        `value` again, called only when the store is written, so that the text of
        every result is not held until the flush (~40 MB at 100,000 records).
        """
        if self.store is None or not is_final(value):
            return
        if slot is not None and later is not None:
            self.store.put_later([_slot_key(slot)], lambda _: (key, _text(later()), plan))
        elif slot is None:
            self.store.put(key, _text(value))
        else:
            self.store.put(_slot_key(slot), (key, _text(value), plan))

    def flush(self, prune: bool = False) -> None:
        """Write the shards that changed (each atomically); errors are ignored.

        `prune` (a run that analysed every record): keep only the entries this run used.
        """
        if self.store is not None:
            self.store.save(() if prune else None)


def _text(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _slot_key(slot: str) -> str:
    return f"{slot}\0result"  # never a content key (those are hex digests)


def _loads(text: Any) -> Any | None:
    if not isinstance(text, str):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None
