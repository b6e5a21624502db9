"""Which records each page renders from, and a key that changes when any of them does.

A page's key is a hash of the build fingerprint (kb's code, the templates, the
library versions) and of a stamp per input record: its kind, path and exact data,
or only its title where the page shows no more than a link (`-` for an id that
names no record, so a record appearing there changes the key too). The data is
the file's digest when the knowledge base comes with the files its validation saw
(kb.reads.checked_nodes: `kb build`; the loader's code is in the fingerprint),
else a hash of the data itself (built or edited in memory). The inputs are
computed fresh on every build by the one dependency graph (kb.reads):

* a record's page: what kb.reads declares for its kind (PAGE_READS, PAGE_SCANS):
  in full the record, its referrers, the records whose values it shows and
  those its kind's page reaches; the titles of the other records it references;
* a record's JSON: the record;
* a record's search-index entry (kb.sitegen.search): the record and the records
  whose values its prose templates show (`DependencyGraph.bound`);
* a kind's index, the hardware table: its records, and the titles of the
  records they reference;
* the calculators' pickers (calc-records.js, kb.sitegen.calc_records): every
  record of the picker kinds and every flop class (which fields they bind). A
  flop-class page offers every accelerator, interconnect and model through that
  one shared file, so its own bytes read none of them beyond those it binds.

tests/site/test_rebuild.py checks these sets against what rendering a page
actually reads.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from kb.model import KnowledgeBase, Record
from kb.reads import PAGE_READS, checked_nodes, graph_of, scanned_kinds

MISSING = "-"
T = TypeVar("T")


def data_stamp(record: Record) -> str:
    """A hash of kind, path and data in authored order (`1`, `1.0`, `true`, `"1"` differ)."""
    try:
        text = json.dumps(
            [record.kind, record.path, record.data],
            ensure_ascii=False,
            separators=(",", ":"),
            default=lambda value: f"{type(value).__name__}:{value}",
        )
    except (TypeError, ValueError):  # keys JSON cannot hold: repr is as exact, only slower
        text = repr((record.kind, record.path, record.data))
    return _hash(text)


def file_stamp(record: Record) -> str:
    return f"file:{record.kind}:{record.path}:{record.digest}"


def _hash(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


class PageInputs:
    """The dependency graph of one build: page -> input record ids -> stamps -> key.

    Keys and the bound sets (the page and the search entry share them) are found once
    a build, for the focus and then for the pages.
    """

    def __init__(self, kb: KnowledgeBase, fingerprint: str) -> None:
        self.kb = kb
        self.fingerprint = fingerprint
        stamp = file_stamp if checked_nodes(kb) is not None else data_stamp
        self.stamps = {record.id: stamp(record) for record in kb}
        self.titles = {record.id: f"title:{record.title}" for record in kb}
        self.graph = graph_of(kb)
        self._memo: dict[tuple[str, str], Any] = {}

    def _once(self, what: str, name: str, make: Callable[[], T]) -> T:
        found: T | None = self._memo.get((what, name))
        if found is None:
            found = self._memo[what, name] = make()
        return found

    def bound(self, record_id: str) -> frozenset[str]:
        """The ids whose values the record shows (DependencyGraph.bound)."""
        return self._once("bound", record_id, lambda: frozenset(self.graph.bound(record_id)))

    def record_inputs(self, record: Record) -> tuple[set[str], set[str]]:
        """Ids a record's page renders from in full, and those it shows only the title of."""
        graph = self.graph
        full = {record.id, *self.bound(record.id), *graph.referrers(record.id)}
        full |= graph.along(record.id, PAGE_READS.get(record.kind, ()))
        return full, graph.targets(record.id) - full

    def record_kinds(self, record: Record) -> tuple[str, ...]:
        """Kinds whose every record a page reads (kb.reads.PAGE_SCANS)."""
        return scanned_kinds(record.kind, page=True)

    def record_key(self, record: Record) -> str:
        def make() -> str:
            full, titles = self.record_inputs(record)
            return self.key("record", record.id, full, titles, self.record_kinds(record))

        return self._once("record", record.id, make)

    def json_key(self, record: Record) -> str:
        return self.key("json", record.id, {record.id})

    def search_inputs(self, record: Record) -> set[str]:
        """Ids a record's search entry reads: it, and those its templates show values of."""
        return {record.id, *self.bound(record.id)}

    def search_key(self, record: Record) -> str:
        inputs = self.search_inputs
        return self._once(
            "search", record.id, lambda: self.key("search", record.id, inputs(record))
        )

    def table_inputs(self, kind: str) -> set[str]:
        """Ids whose titles a table of all records of `kind` links (its cells' references)."""
        return {t for record in self.kb.of_kind(kind) for t in self.graph.targets(record.id)}

    def table_key(self, page_type: str, kind: str) -> str:
        """The key of a page that tabulates every record of `kind` (an index, a comparison)."""
        return self.key(page_type, kind, (), self.table_inputs(kind), (kind,))

    def key(
        self,
        page_type: str,
        name: str,
        full: Iterable[str] = (),
        titles: Iterable[str] = (),
        kinds: Iterable[str] = (),
        pages: Iterable[str] = (),
    ) -> str:
        """The key of a page from `full` records, others' `titles`, `kinds`, other `pages`' keys."""
        parts = [self.fingerprint, page_type, name]
        parts += [f"{i}={self.stamps.get(i, MISSING)}" for i in sorted(full)]
        parts += [f"{i}~{self.titles.get(i, MISSING)}" for i in sorted(titles)]
        parts += [f"kind:{k}={self.kind_stamp(k)}" for k in sorted(kinds)]
        parts += [f"page:{key}" for key in pages]
        return _hash("\n".join(parts))

    def kind_stamp(self, kind: str) -> str:
        """One stamp for the whole set of records of a kind (ids and contents)."""
        stamps, records = self.stamps, self.kb.of_kind
        return self._once(
            "kind", kind, lambda: _hash("\n".join(f"{r.id}={stamps[r.id]}" for r in records(kind)))
        )
