"""The end-to-end rows kept between runs: `evaluate_all`'s result in kb's one store (kb.store).

Pricing every end-to-end receipt row (kb.ledger.endtoend.evaluate_all) takes ~5-7 CPU-s
on the shipped records; `kb list --end-to-end`, the site's explorer (each model's
receipt rows) and the tests read it. `end_to_end_rows(kb)` answers from
`end-to-end.kbstore` in the cache folder (kb.store.cache_dir) when the entry under
`content_key(kb)` is there, else prices the rows and keeps them there.

What the rows read is in the key or in the store's salt, so an edit to any of it prices
them again:

- the salt is kb.fingerprint's: kb's code (its `code_fingerprint`: every file of the
  package, kb/data/end-to-end.json among them), the library versions, the schemas;
- the key (`content_key`) hashes the end-to-end declaration in use (kb/data/end-to-end.json
  as kb.resources read it), and every record of the knowledge base, whichever the rows
  read: its kind, id, path, whether the schema stage passed it (only typed views are
  priced) and its data, exactly (`repr`: `1`, `1.0`, `"1"` and `true` differ); and the
  ids outside a partial load.

A row is kept as plain data (`encoded`): every field of RowResult but `outcome` (the
priced scenario's ledger, which no reader of the whole table uses and which is not
plain data: a kept row has `outcome=None`; its equality ignores that field). The store
keeps one entry: a save keeps only the entry this run used. A damaged entry is a miss
(the store checks every entry, and `decoded` refuses anything but the layout it
writes), so it is priced afresh; a store that cannot be written (a read-only tree)
still answers, it just keeps nothing. Within one run the rows are kept in the run
context (kb.run; `in_run`): a build that prices every model's pass asks for them once
(kb.sitegen.plan_pages), and each pass (a forked worker inherits them) shows its
model's receipt rows from there (kb.sitegen.explorer.receipt_rows). tests/ledger/test_kept.py
holds the kept rows equal to a cold pricing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from kb import fingerprint
from kb.kinds import Views, views
from kb.ledger.endtoend import RowResult, evaluate_all
from kb.model import KnowledgeBase
from kb.run import Kept
from kb.store import ShardedStore, cache_dir

STORE = "end-to-end"
LAYOUT = "end-to-end-rows/1"  # the layout of an entry as stored (`encoded`)
# This run's rows, with the views and the declaration they were priced from.
ROWS: Kept[tuple[Views, object, tuple[RowResult, ...]]] = Kept("end-to-end rows")


def end_to_end_rows(kb: KnowledgeBase) -> list[RowResult]:
    """`evaluate_all(kb)`'s rows: from this run, else from the store, else priced and kept.

    A frozen knowledge base keeps them in its run while its schema stage and the
    declaration in use are the same objects (the records cannot change).
    """
    memo = in_run(kb)
    if memo is not None:
        return memo
    checked, document = views(kb), _declaration()
    store = _store(kb)
    key = content_key(kb)
    found = decoded(store.get(key))
    if found is None:
        found = evaluate_all(kb)
        _save(store, key, found)
    if kb.frozen:
        kb.run.keep(ROWS, (checked, document, tuple(found)))
    return list(found)


def in_run(kb: KnowledgeBase) -> list[RowResult] | None:
    """The rows `end_to_end_rows` gave in this run (a frozen knowledge base's), or None."""
    memo = kb.run.kept(ROWS) if kb.frozen else None
    if memo is None or memo[0] is not views(kb) or memo[1] is not _declaration():
        return None
    return list(memo[2])


def stored(kb: KnowledgeBase) -> list[RowResult] | None:
    """The rows the store keeps for `kb` as it is now, or None (nothing kept, or damaged)."""
    return decoded(_store(kb).get(content_key(kb)))


def keep(kb: KnowledgeBase, rows: Sequence[RowResult]) -> None:
    """Keep `rows` as `kb`'s (they must be `evaluate_all(kb)`'s: a test's cold pricing)."""
    _save(_store(kb), content_key(kb), rows)


def content_key(kb: KnowledgeBase) -> str:
    """A hash of what the rows read besides kb's code: the declaration and every record."""
    checked = views(kb)
    digest = hashlib.blake2b(f"{LAYOUT}\n".encode(), digest_size=16)
    digest.update(repr(_declaration()).encode())
    for record in kb:
        stamp = (record.kind, record.id, record.path, checked.passed(record), record.data)
        digest.update(f"\n{stamp!r}".encode("utf-8", "surrogatepass"))
    digest.update(f"\noutside {sorted(kb.run.outside_ids)!r}".encode())
    return digest.hexdigest()


def encoded(rows: Sequence[RowResult]) -> tuple[Any, ...]:
    """The rows as plain data the store can keep (marshal-able)."""
    return (LAYOUT, tuple(_row(r) for r in rows))


def decoded(value: Any) -> list[RowResult] | None:
    """The rows an entry holds, or None if it is not one `encoded` wrote."""
    if not isinstance(value, tuple) or len(value) != 2 or value[0] != LAYOUT:
        return None
    try:
        return [_unrow(row) for row in value[1]]
    except (TypeError, ValueError, ZeroDivisionError):
        return None


def _declaration() -> Any:
    """kb/data/end-to-end.json as kb.resources read it (one object a process)."""
    from kb.resources import end_to_end

    return end_to_end(None, lambda document: document)


def _store(kb: KnowledgeBase) -> ShardedStore:
    return ShardedStore(cache_dir(kb.root), STORE, fingerprint.salt(), shards=1)


def _save(store: ShardedStore, key: str, rows: Sequence[RowResult]) -> None:
    store.put(key, encoded(rows))
    store.save(())  # only this entry stays: the rows of an older tree go


def _row(r: RowResult) -> tuple[Any, ...]:
    layouts = tuple((name, _row(row)) for name, row in r.layouts)
    return (r.receipt, r.index, r.label, r.metric, r.measures, dict(r.conditions),
            _fraction(r.predicted), _fraction(r.measured), r.unit, _fraction(r.error),
            r.state, r.reason, tuple(r.assumed), r.provenance, layouts)  # fmt: skip


def _unrow(row: Any) -> RowResult:
    (receipt, index, label, metric, measures, conditions, predicted, measured, unit, error,
     state, reason, assumed, provenance, layouts) = row  # fmt: skip
    texts = (receipt, label, metric, unit, state, reason, provenance, *assumed)
    if not (all(isinstance(t, str) for t in texts) and isinstance(conditions, Mapping)):
        raise TypeError("not a kept row")
    return RowResult(
        receipt=receipt,
        index=int(index),
        label=label,
        metric=metric,
        measures=measures,
        conditions=conditions,
        predicted=_unfraction(predicted),
        measured=_unfraction(measured),
        unit=unit,
        error=_unfraction(error),
        state=state,
        reason=reason,
        assumed=tuple(assumed),
        provenance=provenance,
        layouts=tuple((str(name), _unrow(each)) for name, each in layouts),
    )


def _fraction(value: Fraction | None) -> tuple[int, int] | None:
    return None if value is None else (value.numerator, value.denominator)


def _unfraction(value: Any) -> Fraction | None:
    if value is None:
        return None
    numerator, denominator = value
    if not (isinstance(numerator, int) and isinstance(denominator, int)):
        raise TypeError("not an exact fraction")
    return Fraction(numerator, denominator)
