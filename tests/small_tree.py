"""A small tree cut from the shipped records, for properties that hold for any tree.

`incremental = full` (tests/run/test_incremental.py's random edits) must hold for every
tree, so a per-push run need not pay for all of records/: the sample keeps, from
each folder, the record whose reference closure is smallest (with that closure), and
for every kind of reference the shipped tree holds (the referring record's kind, the
kind it expects, a binding `id#field` or a plain id, the target's folder) one
referring record with its closure. Closed under references, the sample checks clean
as the shipped tree does (a dangling id costs a did-you-mean search over every id).
A test holds that the sample covers every folder and every kind of reference of the
shipped tree; `KB_FULL=1` runs the same properties on the whole shipped tree.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from kb.model import KnowledgeBase, Record
from tests.conftest import SHIPPED_RECORDS

FULL = os.environ.get("KB_FULL") == "1"  # the whole shipped tree on request

Category = tuple[str, str, bool, str]


@cache
def _loaded() -> tuple[KnowledgeBase, dict[str, Path]]:
    from kb.api import open_kb

    kb = open_kb(SHIPPED_RECORDS)  # its paths are relative to the working directory of now
    return kb, {rid: (Path.cwd() / record.path).resolve() for rid, record in kb.records.items()}


def shipped_kb() -> KnowledgeBase:
    """The shipped records, loaded once per worker."""
    return _loaded()[0]


def shipped_file(record_id: str) -> Path:
    """The shipped file of `record_id`, relative to records/ (whatever the working directory)."""
    return _loaded()[1][record_id].relative_to(SHIPPED_RECORDS.resolve())


def _targets(record: Record) -> Iterable[tuple[Category, str]]:
    from kb.references import record_references

    for ref in record_references(record):
        target = ref.target.split("#")[0]
        yield (record.kind, ref.expected_kind, "#" in ref.target, target.split("/")[0]), target


def categories(ids: Iterable[str]) -> set[Category]:
    """The kinds of reference the records `ids` make."""
    records = shipped_kb().records
    return {category for rid in ids for category, _ in _targets(records[rid])}


def closure(seeds: Iterable[str]) -> set[str]:
    """The shipped ids `seeds` with every shipped record they reach by reference."""
    records = shipped_kb().records
    seen: set[str] = set()
    todo = list(seeds)
    while todo:
        rid = todo.pop()
        if rid in seen or rid not in records:
            continue
        seen.add(rid)
        todo += [target for _, target in _targets(records[rid])]
    return seen


@cache
def sample_ids() -> frozenset[str]:
    """The ids of the sample (see the module's docstring); the same for the same tree."""
    records = shipped_kb().records
    folders: dict[str, list[str]] = {}
    for rid in sorted(records):
        folders.setdefault(rid.split("/")[0], []).append(rid)
    chosen = closure(
        min(ids, key=lambda rid: (len(closure([rid])), rid)) for ids in folders.values()
    )
    missing = categories(records) - categories(chosen)
    for rid in sorted(records):
        found = [(c, t) for c, t in _targets(records[rid]) if c in missing]
        if found:
            chosen |= closure([rid])
            missing -= {c for c, _ in found}
    return frozenset(chosen)


def copy_sample(target: Path, also: Iterable[str] = ()) -> Path:
    """Write the sample's record files under `target` (a records folder); returns it.

    `also`: shipped ids a test names, added with their closure (the tree stays closed)."""
    also = tuple(also)
    assert set(also) <= set(shipped_kb().records), sorted(set(also) - set(shipped_kb().records))
    for rid in sorted(sample_ids() | closure(also)):
        relative = shipped_file(rid)
        (target / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(SHIPPED_RECORDS / relative, target / relative)
    return target
