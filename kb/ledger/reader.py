"""The placement reader: turns a record's figures into exact ones, a gap for each it cannot.

`InputReader` is what every resolver of kb.ledger hands down (inputs, transfers, the
workload, the engine's paging); it sits in a module of its own, below them, so that
naming its type creates no import cycle. It reads typed views and bindings only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kb.findings import pointer_join
from kb.kinds import Views, views
from kb.kinds.placement import DeviceView, FigureNode, Option
from kb.ledger.quantities import Figure, QuantityError, figure
from kb.model import KnowledgeBase, Record, split_binding


@dataclass(frozen=True)
class Gap:
    """An input the ledger needs but cannot resolve, at a pointer of the placement."""

    pointer: str
    message: str
    blocked_by: str = ""  # the id of a record the input needs that kb cannot compute from
    cause: str = ""  # why: CANNOT_READ or FAILS_SCHEMA


CANNOT_READ = "cannot be read"  # the tree has the record, but kb could not load it
FAILS_SCHEMA = "fails its schema"  # loaded, with a schema finding: it has no view


@dataclass(frozen=True)
class DeviceGroup:
    name: str
    count: int
    capacity: Figure
    reserve: Figure | None
    pointer: str


@dataclass(frozen=True)
class Overhead:
    time: Figure
    receipt: str


def one(count: int | None) -> int:
    """A count the schema made optional (and >= 1 when stated): 1 when not stated."""
    return 1 if count is None else count


class InputReader:
    """Turns a placement's figures into exact ones, collecting a gap for each it cannot."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb
        self.views: Views = views(kb)
        self.gaps: list[Gap] = []

    def gap(self, pointer: str, message: str) -> None:
        self.gaps.append(Gap(pointer, message))

    def blocked(self, pointer: str, record_id: str, what: str) -> None:
        """`what` needs `record_id`, which kb could not read or which fails its schema."""
        cause = CANNOT_READ if self.kb.get(record_id) is None else FAILS_SCHEMA
        self.gaps.append(Gap(pointer, f"{what} needs {record_id}, which {cause}", record_id, cause))

    def readable(self, record_id: str) -> Record | None:
        """The record, when kb can compute from it (loaded and schema-valid), else None."""
        record = self.kb.get(record_id)
        return record if record is not None and self.views.passed(record) else None

    def unusable(self, record_id: str) -> bool:
        """True when the tree has the record but kb cannot compute from it."""
        return self.kb.exists(record_id) and self.readable(record_id) is None

    def quantity(self, node: FigureNode | None, pointer: str, dim: str, what: str) -> Figure | None:
        """Resolve a quantity or a `record#path` binding to one, checked for dimension `dim`."""
        origin = "inline"
        target: Any = node
        if isinstance(node, str):  # a binding: the schema's `record#field` pattern
            origin = node
            record_id, path = split_binding(node)
            if self.unusable(record_id):
                self.blocked(pointer, record_id, f"{what} ({origin})")
                return None
            record = self.kb.get(record_id)
            target = record.get(path) if record else None  # any field: figure() checks it
            if target is None:
                self.gap(pointer, f"{what} binds to {origin}, which does not resolve")
                return None
        if target is None:
            self.gap(pointer, f"{what} is missing")
            return None
        try:
            result = figure(target, origin, pointer)
        except QuantityError as exc:
            self.gap(pointer, f"{what}: {exc}")
            return None
        if result.dim != dim:
            self.gap(pointer, f"{what} has dimension {result.dim}, expected {dim}")
            return None
        if result.value < 0 or (result.value == 0 and "/" in dim):
            self.gap(
                pointer,
                f"{what} is {result.value} {dim}, expected a "
                f"{'positive' if '/' in dim else 'non-negative'} figure",
            )
            return None
        return result

    def optional(self, node: FigureNode | None, pointer: str, dim: str, what: str) -> Figure | None:
        return None if node is None else self.quantity(node, pointer, dim, what)

    def device(self, group: DeviceView, pointer: str) -> DeviceGroup | None:
        capacity_node = group.capacity
        if capacity_node is None and group.hardware is not None:
            capacity_node = f"{group.hardware}#memory.capacity"
        capacity = self.quantity(
            capacity_node, pointer_join(pointer, "capacity"), "B", "device capacity"
        )
        reserve = self.optional(
            group.reserve, pointer_join(pointer, "reserve"), "B", "device reserve"
        )
        if capacity is None:
            return None
        return DeviceGroup(group.name, one(group.count), capacity, reserve, pointer)

    def overheads(self, option: Option, pointer: str) -> dict[str, Overhead]:
        result: dict[str, Overhead] = {}
        for name, entry in option.overheads:  # the schema allows only OVERHEADS' names
            time = self.quantity(
                entry.time, pointer_join(pointer, name, "time"), "s", f"overhead {name}"
            )
            if time is not None:
                result[name] = Overhead(time, entry.receipt)
        return result
