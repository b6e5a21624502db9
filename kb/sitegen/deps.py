"""Which records each page renders from, and a key that changes when any of them does.

A page's key is a hash of the build fingerprint (kb's code, the templates, the
library versions) and of a stamp per input record: its kind, path and the exact
content of its data, or only its title where the page shows no more of it than
a link (`-` for an id that names no record, so a record appearing there changes
the key too). The inputs are computed fresh on every build, from the records as
they are now:

* a record's page: the record, every record that references it ("used by",
  kb.reads.DependencyGraph.referrers),
  every record it binds (`id#field`: its claims' values) or templates in its
  prose (`{id#field}`: the value shown; `{id#claim:c}`: that record's claim,
  so also every record *it* binds), and the titles of the other records it
  names (links, sources). A flop class's page draws a chart
  from the accelerators it names and their interconnects, and a placement's
  page computes a ledger from every record it reaches and from the records of
  the kinds its ledger scans (kb.reads.PAGE_SCANS: receipts, looked up by
  interconnect and pattern, and interconnects for the break-even): those pages
  take every record they reach in full;
* a record's JSON: the record;
* a kind's index, the hardware table: its records, and the titles of the
  records they name;
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
from kb.prose.fields import record_templates
from kb.prose.scan import templates
from kb.reads import graph_of, scanned_kinds

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


def _typed(value: Any) -> str:
    return f"{type(value).__name__}:{value}"


def named_ids(data: Any) -> tuple[set[str], set[str]]:
    """Return the ids a record's values could name (existing or not), and the bound ones.

    `id` and `id#field` both name `id`; the second kind (a binding, whose value the
    page shows) is returned apart as well, and so is a template's record
    (`{id#field}` in prose).
    """
    found: set[str] = set()
    bound: set[str] = set()
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            if "/" in node and " " not in node:
                record_id, _, field = node.partition("#")
                found.add(record_id)
                if field:
                    bound.add(record_id)
            elif "{" in node:
                ids = {t.record_id for t in templates(node) if t.target}
                found |= ids
                bound |= ids
        elif isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found, bound


class PageInputs:
    """The dependency graph of one build: page -> input record ids -> stamps -> key."""

    def __init__(self, kb: KnowledgeBase, fingerprint: str) -> None:
        self.kb = kb
        self.fingerprint = fingerprint
        self.stamps = {record.id: data_stamp(record) for record in kb}
        self.titles = {record.id: f"title:{record.title}" for record in kb}
        self.names: dict[str, set[str]] = {}
        self.bound: dict[str, set[str]] = {}
        for record in kb:
            self.names[record.id], self.bound[record.id] = named_ids(record.data)
        for record in kb:  # a claim of another record shows a value computed from its bindings
            for _, template in record_templates(record.data):
                if template.claim and template.record_id:
                    self.bound[record.id] |= self.bound.get(template.record_id, set())
        self.graph = graph_of(kb)
        self._kind_stamps: dict[str, str] = {}

    def record_inputs(self, record: Record) -> tuple[set[str], set[str]]:
        """Ids a record's page renders from in full, and those it shows only the title of."""
        names = self.names.get(record.id, set())
        full = {record.id} | self.bound.get(record.id, set()) | set(self.graph.referrers(record.id))
        if record.kind == "flop_class":
            full |= names
            for named in names:
                target = self.kb.get(named)
                if target is not None and target.kind == "accelerator":
                    full |= self.names.get(named, set())
        if record.kind == "placement":
            full |= self.reachable(record.id)
        return full, names - full

    def record_kinds(self, record: Record) -> tuple[str, ...]:
        """Kinds whose every record a page reads: the ledger's scans (kb.reads)."""
        return scanned_kinds(record.kind, page=True)

    def reachable(self, start: str) -> set[str]:
        """Every id reached by following named ids from `start` (its references' references)."""
        seen, todo = {start}, [start]
        while todo:
            for named in self.names.get(todo.pop(), ()):
                if named not in seen:
                    seen.add(named)
                    todo.append(named)
        return seen

    def record_key(self, record: Record) -> str:
        full, titles = self.record_inputs(record)
        return self.key("record", record.id, full, titles, self.record_kinds(record))

    def json_key(self, record: Record) -> str:
        return self.key("json", record.id, {record.id})

    def table_inputs(self, kind: str) -> set[str]:
        """Ids whose titles a table of all records of `kind` links (its cells' references)."""
        named: set[str] = set()
        for record in self.kb.of_kind(kind):
            named |= self.names.get(record.id, set())
        return named

    def table_key(self, page_type: str, kind: str) -> str:
        """The key of a page that tabulates every record of `kind` (an index, a comparison)."""
        return self.key(page_type, kind, (), self.table_inputs(kind), (kind,))

    def key(
        self,
        page_type: str,
        name: str,
        full: Iterable[str],
        titles: Iterable[str] = (),
        kinds: Iterable[str] = (),
    ) -> str:
        parts = [self.fingerprint, page_type, name]
        parts += [f"{i}={self.stamps.get(i, MISSING)}" for i in sorted(full)]
        parts += [f"{i}~{self.titles.get(i, MISSING)}" for i in sorted(titles)]
        parts += [f"kind:{k}={self.kind_stamp(k)}" for k in sorted(kinds)]
        return hashlib.blake2b("\n".join(parts).encode("utf-8"), digest_size=16).hexdigest()

    def kind_stamp(self, kind: str) -> str:
        """One stamp for the whole set of records of a kind (ids and contents)."""
        if kind not in self._kind_stamps:
            text = "\n".join(f"{r.id}={self.stamps[r.id]}" for r in self.kb.of_kind(kind))
            digest = hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()
            self._kind_stamps[kind] = digest
        return self._kind_stamps[kind]
