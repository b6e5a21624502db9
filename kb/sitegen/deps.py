"""Which records each page renders from, and a key that changes when any of them does.

A page's key is a hash of the build fingerprint (kb's code, the templates, the
library versions) and of a stamp per input record: its kind, path and the exact
content of its data, or only its title where the page shows no more of it than
a link (`-` for an id that names no record, so a record appearing there changes
the key too). The content is the file's digest when the knowledge base comes
with the files its validation saw (kb.reads.checked_nodes: `kb build`; the bytes
determine the data, and the loader's code is in the fingerprint), else a hash of
the data itself (a knowledge base built or edited in memory). The inputs are
computed fresh on every build, from the records as they are now, by the one
dependency graph (kb.reads.DependencyGraph, built from the schemas' `x-kb-ref`,
bindings, prose templates and `uses:`):

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
from collections.abc import Iterable
from typing import Any

from kb.model import KnowledgeBase, Record
from kb.reads import PAGE_READS, checked_nodes, graph_of, scanned_kinds

MISSING = "-"


def data_stamp(record: Record) -> str:
    """Hash what a page can show of a record: kind, path and data in authored order.

    The data is hashed rather than the file's digest, so an in-memory change (a
    test, a tool) is seen; types stay apart (`1`, `1.0`, `true` and `"1"` differ).
    """
    try:
        text = json.dumps(
            [record.kind, record.path, record.data],
            ensure_ascii=False,
            separators=(",", ":"),
            default=_typed,
        )
    except (TypeError, ValueError):  # keys JSON cannot hold: repr is as exact, only slower
        text = repr((record.kind, record.path, record.data))
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def file_stamp(record: Record) -> str:
    """What a page can show of a record loaded from a file: kind, path and the file's digest."""
    return f"file:{record.kind}:{record.path}:{record.digest}"


def _typed(value: Any) -> str:
    return f"{type(value).__name__}:{value}"


class PageInputs:
    """The dependency graph of one build: page -> input record ids -> stamps -> key."""

    def __init__(self, kb: KnowledgeBase, fingerprint: str) -> None:
        self.kb = kb
        self.fingerprint = fingerprint
        stamp = file_stamp if checked_nodes(kb) is not None else data_stamp
        self.stamps = {record.id: stamp(record) for record in kb}
        self.titles = {record.id: f"title:{record.title}" for record in kb}
        self.graph = graph_of(kb)
        self._kind_stamps: dict[str, str] = {}
        self._bound: dict[str, frozenset[str]] = {}  # the page and the search entry share it
        self._record_keys: dict[str, str] = {}  # found once a build: the focus, then the pages
        self._search_keys: dict[str, str] = {}

    def bound(self, record_id: str) -> frozenset[str]:
        """The ids whose values the record shows (DependencyGraph.bound), found once a build."""
        found = self._bound.get(record_id)
        if found is None:
            found = self._bound[record_id] = frozenset(self.graph.bound(record_id))
        return found

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
        found = self._record_keys.get(record.id)
        if found is None:
            full, titles = self.record_inputs(record)
            found = self.key("record", record.id, full, titles, self.record_kinds(record))
            self._record_keys[record.id] = found
        return found

    def json_key(self, record: Record) -> str:
        return self.key("json", record.id, {record.id})

    def search_inputs(self, record: Record) -> set[str]:
        """Ids a record's search entry reads: it, and those its templates show values of."""
        return {record.id, *self.bound(record.id)}

    def search_key(self, record: Record) -> str:
        found = self._search_keys.get(record.id)
        if found is None:
            found = self._search_keys[record.id] = self.key(
                "search", record.id, self.search_inputs(record)
            )
        return found

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
        """The key of a page made of what it reads.

        The records in `full`, the `titles` of others, every record of `kinds`, and
        what other pages (by their keys, in order) show.
        """
        parts = [self.fingerprint, page_type, name]
        parts += [f"{i}={self.stamps.get(i, MISSING)}" for i in sorted(full)]
        parts += [f"{i}~{self.titles.get(i, MISSING)}" for i in sorted(titles)]
        parts += [f"kind:{k}={self.kind_stamp(k)}" for k in sorted(kinds)]
        parts += [f"page:{key}" for key in pages]
        return hashlib.blake2b("\n".join(parts).encode("utf-8"), digest_size=16).hexdigest()

    def kind_stamp(self, kind: str) -> str:
        """One stamp for the whole set of records of a kind (ids and contents)."""
        if kind not in self._kind_stamps:
            text = "\n".join(f"{r.id}={self.stamps[r.id]}" for r in self.kb.of_kind(kind))
            digest = hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()
            self._kind_stamps[kind] = digest
        return self._kind_stamps[kind]
