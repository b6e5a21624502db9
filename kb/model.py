"""Typed, frozen records and the KnowledgeBase index. No I/O happens here."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing_extensions import Self

KIND_BY_FOLDER: Mapping[str, str] = {
    "flops": "flop_class",
    "hardware": "accelerator",
    "interconnects": "interconnect",
    "models": "model",
    "receipts": "receipt",
    "sources": "source",
    "strategies": "strategy",
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
    """True when `text` is a well-formed record id (never `..`, never absolute)."""
    if not ID_RE.fullmatch(text):
        return False
    return all(seg not in (".", "..") and not seg.startswith(".") for seg in text.split("/"))


def split_binding(text: str) -> tuple[str, str]:
    """`hardware/x#memory.bandwidth` -> (`hardware/x`, `memory.bandwidth`)."""
    record_id, _, path = text.partition("#")
    return record_id, path


@dataclass(frozen=True)
class Record:
    """One loaded record: common fields typed, the whole document kept in `data`."""

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


@dataclass(frozen=True)
class Reference:
    """A reference from one record to another, found through the schema's `x-kb-ref`."""

    source_id: str
    pointer: str
    target: str
    expected_kind: str


class RecordIndex(dict[str, "Record"]):
    """A dict of records that counts its changes, so sorted views can be reused safely."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.changes = 0

    def _changed(self) -> None:
        self.changes = getattr(self, "changes", 0) + 1

    def __setitem__(self, key: str, value: Record) -> None:
        self._changed()
        super().__setitem__(key, value)

    def __delitem__(self, key: str) -> None:
        self._changed()
        super().__delitem__(key)

    # mypy refuses any dict subclass's __ior__ as incompatible with dict.__or__ (whose result
    # is a plain dict); the override is still sound, so only that check is silenced.
    def __ior__(self, other: Any, /) -> Self:  # type: ignore[override,misc]
        self._changed()
        super().update(other)
        return self

    def clear(self) -> None:
        self._changed()
        super().clear()

    def pop(self, *args: Any) -> Any:
        self._changed()
        return super().pop(*args)

    def popitem(self) -> tuple[str, Record]:
        self._changed()
        return super().popitem()

    def setdefault(self, *args: Any) -> Any:
        self._changed()
        return super().setdefault(*args)

    def update(self, *args: Any, **kwargs: Any) -> None:
        self._changed()
        super().update(*args, **kwargs)


@dataclass
class KnowledgeBase:
    """All records of one validation run, indexed by id. Built by the loader.

    `load_findings` holds what the loader refused (the LD rules report them);
    `base` holds the records as they were at `--base REV` (changed ones only) and
    `deleted` the records removed since then; `memo` lets expensive per-run
    analyses (schema validation, equations) run once and serve several rules.
    `outside_ids` names the records of the tree that were not loaded, when only
    part of it was (kb.incremental): a rule that looks at every id sees them too.
    `focus`, when set, holds the display paths whose findings are wanted; the
    other records are there as context (what the focus references), and costly
    per-record work may skip them (see `in_focus`).
    """

    root: str
    records: dict[str, Record] = field(default_factory=RecordIndex)
    duplicates: list[Record] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)
    load_findings: list[Any] = field(default_factory=list)
    base: dict[str, Record] | None = None
    deleted: dict[str, Record] = field(default_factory=dict)
    memo: dict[str, Any] = field(default_factory=dict)
    outside_ids: frozenset[str] = frozenset()
    focus: frozenset[str] | None = None
    # Sorted views, rebuilt only when `records` changed (rules iterate many times per run).
    _ordered: list[Record] = field(default_factory=list, init=False, repr=False, compare=False)
    _by_kind: dict[str, list[Record]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _stamp: tuple[int, int, int] = field(default=(0, -1, -1), init=False, repr=False, compare=False)

    def add(self, record: Record) -> None:
        if record.id in self.records:
            self.duplicates.append(record)
        else:
            self.records[record.id] = record

    def __iter__(self) -> Iterator[Record]:
        return iter(self._sorted())

    def _sorted(self) -> list[Record]:
        """Records by id; the cached order is reused while the records are unchanged.

        A RecordIndex (the default) says when it changed; any other mapping is
        checked record by record.
        """
        ordered, records = self._ordered, self.records
        changes = getattr(records, "changes", None)
        stamp = (id(records), len(records), changes if changes is not None else -1)
        if changes is not None and stamp == self._stamp:
            return ordered
        if (
            changes is None
            and len(ordered) == len(records)
            and all(records.get(r.id) is r for r in ordered)
        ):
            return ordered
        self._ordered = sorted(records.values(), key=lambda r: r.id)
        self._by_kind = {}
        self._stamp = stamp
        return self._ordered

    def __len__(self) -> int:
        return len(self.records)

    def get(self, record_id: str) -> Record | None:
        return self.records.get(record_id)

    def of_kind(self, kind: str) -> list[Record]:
        ordered = self._sorted()
        if kind not in self._by_kind:
            self._by_kind[kind] = [r for r in ordered if r.kind == kind]
        return list(self._by_kind[kind])

    def exists(self, record_id: str) -> bool:
        """True when the tree has this record, loaded or not (see `outside_ids`)."""
        return record_id in self.records or record_id in self.outside_ids

    def kind_of(self, record_id: str) -> str | None:
        """The kind of an existing record, loaded or not; None when there is no such record."""
        record = self.records.get(record_id)
        if record is not None:
            return record.kind
        if record_id in self.outside_ids:  # a record's kind is its id's first folder
            return KIND_BY_FOLDER.get(record_id.split("/")[0], "") if "/" in record_id else ""
        return None

    def in_focus(self, record: Record) -> bool:
        """True when this run wants findings on `record` (always, unless `focus` is set)."""
        return self.focus is None or record.path in self.focus

    def focused_references(self) -> Iterator[Reference]:
        """The references made by records in focus (all of them, unless `focus` is set)."""
        if self.focus is None:
            return iter(self.references)
        return (ref for ref in self.references if self.records[ref.source_id].path in self.focus)

    def referrers(self, record_id: str) -> list[Reference]:
        """Every reference that points at `record_id` (the "used by" relation)."""
        return [ref for ref in self.references if ref.target.partition("#")[0] == record_id]
