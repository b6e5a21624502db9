"""Items of a list inside a record must not repeat their id.

Why: claims, derivations, workarounds, `scales_with` rows and placement
candidates are addressed by their id (or name): a claim is reported and shown
by its id, a `scales_with` row names its claim, a proposal adopts a candidate
by its name. Two items under one id make the address ambiguous, and whichever
one a reader or a tool finds first wins in silence. Two waivers of the same
code at the same pointer are the same waiver twice. (Symbols and equations are
mappings: a repeated key there is LD005. A derivation step's `result` names an
equation, it does not define an id. Receipt result labels are not checked: a
sweep may repeat a label across message sizes, and results are cited by index.)

Bad:

    claims:
      - {id: ridge, kind: numeric, ...}
      - {id: ridge, kind: scaling, ...}

Good:

    claims:
      - {id: ridge, kind: numeric, ...}
      - {id: ridge-scaling, kind: scaling, ...}
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping, Sequence
from typing import Any

from kb.findings import Finding, Location, Severity
from kb.model import KnowledgeBase, Record
from kb.rules._base import found

READS = "record"
CODE = "ID004"
NAME = "duplicate-item-id"
SEVERITY = Severity.ERROR
HINT = "give each item its own id, or remove the copy"

# The list (top-level key) -> the field(s) that identify one of its items.
KEYED_LISTS: Mapping[str, tuple[str, ...]] = {
    "claims": ("id",),
    "derivations": ("id",),
    "workarounds": ("id",),
    "scales_with": ("name",),
    "candidates": ("name",),
    "waivers": ("code", "pointer"),
}


def repeats(keys: Sequence[Hashable | None]) -> Iterator[tuple[int, int]]:
    """(index of the first occurrence, index of a later one) for every repeated key.

    A `None` key (an item without an id) is never a repeat: the schema reports it.
    """
    first: dict[Hashable, int] = {}
    for index, key in enumerate(keys):
        if key is None:
            continue
        if key in first:
            yield first[key], index
        else:
            first[key] = index


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    for record in kb:
        for name, fields in KEYED_LISTS.items():
            yield from _list_findings(record, name, fields)


def _list_findings(record: Record, name: str, fields: tuple[str, ...]) -> Iterator[Finding]:
    items = record.data.get(name)
    if not isinstance(items, list):
        return
    keys = [_key(item, fields) for item in items]
    for first, later in repeats(keys):
        shown = _shown(keys[later], fields)
        where = f"/{name}/{first}/{fields[0]}"
        message = f"{name}[{later}] repeats {shown} of {name}[{first}]"
        hint = f"give each item of `{name}` its own {fields[0]}, or remove the copy"
        related = (Location(record.path, 0, 0, where),)
        pointer = f"/{name}/{later}/{fields[0]}"
        yield found(CODE, SEVERITY, record.path, pointer, message, hint, related)


def _key(item: Any, fields: tuple[str, ...]) -> tuple[str, ...] | None:
    if not isinstance(item, Mapping):
        return None
    first = item.get(fields[0])
    if not isinstance(first, str):
        return None
    return (first, *(str(item.get(f) or "") for f in fields[1:]))


def _shown(key: Any, fields: tuple[str, ...]) -> str:
    parts = [f"{field} {value!r}" for field, value in zip(fields, key, strict=True) if value]
    return " and ".join(parts)
