"""Resolve a placement record into typed specs, listing every input that is missing.

Resolution is where records meet: the envelope's figures, each option's devices
(capacity from an accelerator record or an explicit figure), useful-work rate, transfers
(line rate and latency from interconnect records, effective bandwidth from receipts) and
overheads. Nothing here computes a time; gaps become `Gap`s that rule LG004 reports.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from kb.findings import pointer_join
from kb.ledger.quantities import Figure, QuantityError, figure
from kb.ledger.transfers import TransferSpec, resolve_transfer
from kb.model import KnowledgeBase, Record, split_binding

OVERHEADS = (
    "sync",
    "input_imbalance",
    "replication_or_migration",
    "remote_memory_or_paging",
    "orchestration_or_recovery",
)


@dataclass(frozen=True)
class Gap:
    """An input the ledger needs but cannot resolve, at a pointer of the placement."""

    pointer: str
    message: str
    unreadable: str = ""  # the id of a record the tree has but kb could not read


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


@dataclass(frozen=True)
class OptionSpec:
    """One side of a comparison: where state and work go, and what that placement pays."""

    name: str
    pointer: str
    devices: tuple[DeviceGroup, ...]
    state_shards: int
    replicated: Figure | None
    useful_rate: Figure
    useful_parallel: int
    transfers: tuple[TransferSpec, ...]
    overheads: Mapping[str, Overhead]
    cost_rate: Figure | None = None
    power: Figure | None = None
    strategies: tuple[str, ...] = ()
    compute_rate: Figure | None = None  # FLOP/s per device, for the roofline's compute term
    links: tuple[str, ...] = ()  # declared links plus every link a transfer uses


@dataclass(frozen=True)
class Envelope:
    """The workload held fixed across every option of one comparison."""

    model: str
    precision: str
    quality: str
    batch: Fraction
    state_bytes: Figure
    useful_work: Figure
    slo: Figure | None
    flops_per_item: Figure | None = None  # FLOP per batch item per step (roofline)


@dataclass(frozen=True)
class PlacementSpec:
    id: str
    path: str
    envelope: Envelope
    reference: OptionSpec
    candidates: tuple[OptionSpec, ...]
    gaps: tuple[Gap, ...] = field(default=())

    @property
    def options(self) -> tuple[OptionSpec, ...]:
        return (self.reference, *self.candidates)


def as_mapping(node: Any) -> Mapping[str, Any]:
    """`node` if it is a mapping, else an empty one (the schema reports the wrong type)."""
    return node if isinstance(node, Mapping) else {}


def as_list(node: Any) -> list[Any]:
    """`node` if it is a list, else an empty one (the schema reports the wrong type)."""
    return node if isinstance(node, list) else []


class InputReader:
    """Turns a placement's fragments into figures, collecting a gap for each it cannot."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb
        self.gaps: list[Gap] = []

    def gap(self, pointer: str, message: str, unreadable: str = "") -> None:
        self.gaps.append(Gap(pointer, message, unreadable))

    def quantity(self, node: Any, pointer: str, dim: str, what: str) -> Figure | None:
        """Resolve a quantity or a `record#path` binding to one, checked for dimension `dim`."""
        origin = "inline"
        if isinstance(node, str) and "#" in node:
            origin = node
            record_id, path = split_binding(node)
            record = self.kb.get(record_id)
            node = record.get(path) if record else None
            if node is None:
                unreadable = record_id if record is None and self.kb.exists(record_id) else ""
                self.gap(pointer, f"{what} binds to {origin}, which does not resolve", unreadable)
                return None
        if node is None:
            self.gap(pointer, f"{what} is missing")
            return None
        try:
            result = figure(node, origin, pointer)
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

    def optional(self, node: Any, pointer: str, dim: str, what: str) -> Figure | None:
        return None if node is None else self.quantity(node, pointer, dim, what)

    def count(self, node: Any, pointer: str, what: str, default: int | None = None) -> int:
        if node is None and default is not None:
            return default
        if isinstance(node, bool) or not isinstance(node, int) or node < 1:
            self.gap(pointer, f"{what} is {node!r}, expected an integer >= 1")
            return 1
        return node

    def device(self, node: Mapping[str, Any], pointer: str) -> DeviceGroup | None:
        hardware = node.get("hardware")
        capacity_node = node.get("capacity")
        if capacity_node is None and isinstance(hardware, str):
            capacity_node = f"{hardware}#memory.capacity"
        capacity = self.quantity(
            capacity_node, pointer_join(pointer, "capacity"), "B", "device capacity"
        )
        reserve = self.optional(
            node.get("reserve"), pointer_join(pointer, "reserve"), "B", "device reserve"
        )
        count = self.count(node.get("count"), pointer_join(pointer, "count"), "count", 1)
        if capacity is None:
            return None
        return DeviceGroup(
            str(node.get("name", hardware or "device")), count, capacity, reserve, pointer
        )

    def overheads(self, node: Any, pointer: str) -> dict[str, Overhead]:
        result: dict[str, Overhead] = {}
        for name, entry in as_mapping(node).items():
            if name not in OVERHEADS or not isinstance(entry, Mapping):
                self.gap(
                    pointer_join(pointer, name),
                    f"overhead {name!r} is not one of {', '.join(OVERHEADS)} with a time",
                )
                continue
            time = self.quantity(
                entry.get("time"), pointer_join(pointer, name, "time"), "s", f"overhead {name}"
            )
            if time is not None:
                result[name] = Overhead(time, str(entry.get("receipt", "")))
        return result


def _option(
    res: InputReader,
    node: Any,
    pointer: str,
    envelope: Envelope | None,
) -> OptionSpec | None:
    if not isinstance(node, Mapping):
        res.gap(pointer, "placement option is missing")
        return None
    devices = [
        res.device(d, pointer_join(pointer, "devices", i))
        for i, d in enumerate(as_list(node.get("devices")))
        if isinstance(d, Mapping)
    ]
    if not devices:
        res.gap(pointer_join(pointer, "devices"), "option names no devices")
    useful = as_mapping(node.get("useful"))
    work_dim = envelope.useful_work.dim if envelope else "B"
    batch = envelope.batch if envelope else Fraction(1)
    rate = res.quantity(
        useful.get("rate"),
        pointer_join(pointer, "useful", "rate"),
        f"{work_dim}/s",
        "useful-work rate",
    )
    compute = res.optional(
        useful.get("compute_rate"),
        pointer_join(pointer, "useful", "compute_rate"),
        "FLOP/s",
        "compute rate",
    )
    if envelope and envelope.flops_per_item and compute is None:
        res.gap(
            pointer_join(pointer, "useful"),
            "the envelope states flops_per_item but "
            "this option has no useful.compute_rate for the roofline's compute term",
        )
    hardware = frozenset(
        str(d["hardware"])
        for d in as_list(node.get("devices"))
        if isinstance(d, Mapping) and isinstance(d.get("hardware"), str)
    )
    transfers = [
        resolve_transfer(res, res.kb, t, pointer_join(pointer, "transfers", i), batch, hardware)
        for i, t in enumerate(as_list(node.get("transfers")))
    ]
    # Every input is resolved (so every gap is recorded) before an incomplete option is dropped.
    state_shards = res.count(
        node.get("state_shards"), pointer_join(pointer, "state_shards"), "state_shards", 1
    )
    replicated = res.optional(
        node.get("replicated"), pointer_join(pointer, "replicated"), "B", "replicated state"
    )
    parallel = res.count(
        useful.get("parallel"), pointer_join(pointer, "useful", "parallel"), "parallel", 1
    )
    overheads = res.overheads(node.get("overheads"), pointer_join(pointer, "overheads"))
    cost_rate = res.optional(
        node.get("cost_rate"), pointer_join(pointer, "cost_rate"), "USD/s", "cost rate"
    )
    power = res.optional(node.get("power"), pointer_join(pointer, "power"), "W", "power")
    if rate is None or None in devices or None in transfers:
        return None
    resolved = tuple(t for t in transfers if t is not None)
    return OptionSpec(
        name=str(node.get("name", "option")),
        pointer=pointer,
        devices=tuple(d for d in devices if d is not None),
        state_shards=state_shards,
        replicated=replicated,
        useful_rate=rate,
        useful_parallel=parallel,
        transfers=resolved,
        overheads=overheads,
        cost_rate=cost_rate,
        power=power,
        strategies=tuple(str(s) for s in as_list(node.get("strategies"))),
        compute_rate=compute,
        links=tuple(
            sorted({str(x) for x in as_list(node.get("links"))} | {t.link for t in resolved})
        ),
    )


def _envelope(res: InputReader, node: Any) -> Envelope | None:
    node = node if isinstance(node, Mapping) else {}
    batch = node.get("batch", 1)
    if isinstance(batch, bool) or not isinstance(batch, (int, Fraction)) or batch < 1:
        res.gap("/envelope/batch", f"batch is {batch!r}, expected a number >= 1")
        batch = 1
    work_node = node.get("useful_work")
    work_unit = work_node.get("unit") if isinstance(work_node, Mapping) else None
    useful_dim = "FLOP" if isinstance(work_unit, str) and work_unit.endswith("FLOP") else "B"
    state = res.quantity(node.get("state_bytes"), "/envelope/state_bytes", "B", "state bytes")
    work = res.quantity(node.get("useful_work"), "/envelope/useful_work", useful_dim, "useful work")
    slo = res.optional(node.get("slo"), "/envelope/slo", "s", "SLO latency")
    flops = res.optional(
        node.get("flops_per_item"), "/envelope/flops_per_item", "FLOP", "FLOP per batch item"
    )
    if work is not None and work.value == 0:
        res.gap("/envelope/useful_work", "useful work is 0, expected a positive figure")
        work = None
    if state is None or work is None:
        return None
    return Envelope(
        str(node.get("model", "")),
        str(node.get("precision", "")),
        str(node.get("quality", "")),
        Fraction(batch),
        state,
        work,
        slo,
        flops,
    )


def resolve_placement(record: Record, kb: KnowledgeBase) -> PlacementSpec | Unresolved:
    """Resolve a placement record into specs, or list every gap that prevents it.

    Several LG rules resolve the same placement in one run, so a frozen knowledge
    base keeps the result in its run context (kb.run.ledger_resolved).
    """
    if not kb.frozen:
        return _resolve(record, kb)
    memo = kb.run.ledger_resolved
    hit = memo.get(record.id)
    if hit is None:
        hit = memo[record.id] = _resolve(record, kb)
    return hit


def _resolve(record: Record, kb: KnowledgeBase) -> PlacementSpec | Unresolved:
    res = InputReader(kb)
    envelope = _envelope(res, record.data.get("envelope"))
    reference = _option(res, record.data.get("reference"), "/reference", envelope)
    candidates = [
        _option(res, c, pointer_join("/candidates", i), envelope)
        for i, c in enumerate(as_list(record.data.get("candidates")))
    ]
    if not candidates:
        res.gap("/candidates", "placement names no candidates")
    if envelope is None or reference is None or None in candidates:
        return Unresolved(record.id, record.path, tuple(res.gaps))
    return PlacementSpec(
        record.id,
        record.path,
        envelope,
        reference,
        tuple(c for c in candidates if c is not None),
        tuple(res.gaps),
    )


@dataclass(frozen=True)
class Unresolved:
    """A placement whose inputs are incomplete: what is missing, and where."""

    id: str
    path: str
    gaps: tuple[Gap, ...]
