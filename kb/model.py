"""Typed, frozen records and the KnowledgeBase index. No I/O happens here."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from kb.run import RunContext  # below this module: it names no type above kb.findings

KIND_BY_FOLDER: Mapping[str, str] = {
    "flops": "flop_class",
    "hardware": "accelerator",
    "interconnects": "interconnect",
    "models": "model",
    "receipts": "receipt",
    "sources": "source",
    "strategies": "strategy",
    "engines": "engine",
    "placements": "placement",
    "proposals": "proposal",
}
FOLDER_BY_KIND: Mapping[str, str] = {k: f for f, k in KIND_BY_FOLDER.items()}
KINDS: tuple[str, ...] = tuple(FOLDER_BY_KIND)
KIND_NAMES: tuple[str, ...] = (*KINDS, *KIND_BY_FOLDER)  # every name a command accepts


def kind_named(name: str) -> str | None:
    """The kind `name` means: a kind (`flop_class`) or its folder (`flops`, `flops/`), any case."""
    text = name.strip().lower().rstrip("/")
    return text if text in FOLDER_BY_KIND else KIND_BY_FOLDER.get(text)


ID_SEGMENT = r"[a-z0-9][a-z0-9._-]*"
ID_RE = re.compile(rf"{ID_SEGMENT}(?:/{ID_SEGMENT})+")
QUANTITY_BASES = ("vendor-spec", "measured", "derived", "estimated", "assumed", "unverified")
UNSOURCED_BASES = ("assumed", "unverified")


def is_valid_id(text: str) -> bool:
    """True when `text` is a well-formed record id (never `..`, never absolute).

    ID_RE says it all: a segment starts with a letter or digit, so none is `.` or `..`
    or starts with a dot (tests/checker/test_references.py holds that on any text).
    """
    return ID_RE.fullmatch(text) is not None


def split_binding(text: str) -> tuple[str, str]:
    """`hardware/x#memory.bandwidth` -> (`hardware/x`, `memory.bandwidth`)."""
    record_id, _, path = text.partition("#")
    return record_id, path


@dataclass(frozen=True, slots=True)
class Record:
    """One loaded record: common fields typed, the whole document kept in `data`.

    Slotted, as is Reference: a knowledge base holds one per file and ~8 references
    per record, and an instance without a `__dict__` is about half the size.
    """

    id: str
    kind: str
    path: str
    data: Mapping[str, Any]
    digest: str = ""

    @property
    def title(self) -> str:
        return str(self.data.get("title", ""))

    @property
    def version(self) -> int:
        value = self.data.get("version")
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    @property
    def status(self) -> str:
        return str(self.data.get("status", ""))

    @property
    def history(self) -> list[Mapping[str, Any]]:
        items = self.data.get("history")
        return [h for h in items if isinstance(h, Mapping)] if isinstance(items, list) else []

    @property
    def waivers(self) -> list[Mapping[str, Any]]:
        items = self.data.get("waivers")
        return [w for w in items if isinstance(w, Mapping)] if isinstance(items, list) else []

    def get(self, dotted: str) -> Any:
        """The value at a dotted path (`memory.bandwidth`, `links.0.count`) or None."""
        node: Any = self.data
        for part in dotted.split("."):
            if isinstance(node, Mapping):
                node = node.get(part)
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                return None
        return node


@dataclass(frozen=True, slots=True)
class Reference:
    """A reference from one record to another, found through the schema's `x-kb-ref`."""

    source_id: str
    pointer: str
    target: str
    expected_kind: str


@dataclass
class KnowledgeBase:
    """All records of one validation run, indexed by id. Built by the checker, then frozen.

    `load_findings` holds what the loader refused (the LD rules report them);
    `base` holds the records as they were at `--base REV` (changed ones only) and
    `deleted` the records removed since then. `run` is the typed per-run context
    (kb.run): stage results, focus, the ids outside a partial load.

    `freeze()` ends the building: the sorted views are
    computed once, and `add` refuses afterwards. An unfrozen knowledge base (a
    test's, or one being built) computes its views on every call instead.
    """

    root: str
    records: dict[str, Record] = field(default_factory=dict)
    duplicates: list[Record] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)
    load_findings: list[Any] = field(default_factory=list)
    base: dict[str, Record] | None = None
    deleted: dict[str, Record] = field(default_factory=dict)
    run: RunContext = field(default_factory=RunContext, repr=False, compare=False)
    _frozen: _Views | None = field(default=None, init=False, repr=False, compare=False)

    def add(self, record: Record) -> None:
        if self._frozen is not None:
            raise TypeError("this KnowledgeBase is frozen: build a new one to add records")
        if record.id in self.records:
            self.duplicates.append(record)
        else:
            self.records[record.id] = record

    def freeze(self) -> KnowledgeBase:
        """Fix the records and references; compute the sorted views once."""
        if self._frozen is None:
            self._frozen = _Views.of(self.records, self.references)
        return self

    @property
    def frozen(self) -> bool:
        return self._frozen is not None

    def __iter__(self) -> Iterator[Record]:
        return iter(self._ordered())

    def _ordered(self) -> list[Record]:
        if self._frozen is not None:
            return self._frozen.ordered
        return sorted(self.records.values(), key=lambda r: r.id)

    def __len__(self) -> int:
        return len(self.records)

    def get(self, record_id: str) -> Record | None:
        return self.records.get(record_id)

    def of_kind(self, kind: str) -> list[Record]:
        if self._frozen is not None:
            return list(self._frozen.by_kind.get(kind, ()))
        return [r for r in self._ordered() if r.kind == kind]

    def exists(self, record_id: str) -> bool:
        """True when the tree has this record, loaded or not (see RunContext.outside_ids)."""
        return record_id in self.records or record_id in self.run.outside_ids

    def kind_of(self, record_id: str) -> str | None:
        """The kind of an existing record, loaded or not; None when there is no such record."""
        record = self.records.get(record_id)
        if record is not None:
            return record.kind
        if record_id in self.run.outside_ids:  # a record's kind is its id's first folder
            return KIND_BY_FOLDER.get(record_id.split("/")[0], "") if "/" in record_id else ""
        return None

    def in_focus(self, record: Record) -> bool:
        """True when this run wants findings on `record` (always, unless a focus is set)."""
        focus = self.run.focus
        return focus is None or record.path in focus

    def focused_references(self) -> Iterator[Reference]:
        """The references made by records in focus (all of them, unless a focus is set)."""
        focus = self.run.focus
        if focus is None:
            return iter(self.references)
        return (ref for ref in self.references if self.records[ref.source_id].path in focus)


@dataclass(frozen=True)
class _Views:
    """What a frozen KnowledgeBase computes once: records in order and by kind.

    Who references whom is kb.reads.DependencyGraph's to answer (one index).
    """

    ordered: list[Record]
    by_kind: dict[str, list[Record]]

    @classmethod
    def of(cls, records: Mapping[str, Record], references: list[Reference]) -> _Views:
        ordered = sorted(records.values(), key=lambda r: r.id)
        by_kind: dict[str, list[Record]] = {}
        for record in ordered:
            by_kind.setdefault(record.kind, []).append(record)
        return cls(ordered, by_kind)
