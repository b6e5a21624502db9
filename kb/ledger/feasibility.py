"""Feasibility first: whether every device holds its share of the state, and its headroom.

State per device is `state_bytes / state_shards + replicated` (a shard of the sharded
state plus whatever every device holds in full); it fits when it is at most
`capacity - reserve`. An option that does not fit is an infeasible counterfactual:
no ledger, no ratio.

A composed placement (an envelope `workload`, kb.ledger.workload) counts, per device,
the weights (over tp*pp) and the KV cache of the replica's sequences at the context
(batch/dp sequences x context tokens x KV bytes per token on that device). When the
workload's engine states its memory (`memory` of an engines/ record: the share
`utilization` of each device it uses and the tokens per KV block `block_tokens`),
the cache is counted as that engine pages it (flops/kv-cache-capacity-paged): the
engine's reserve `(1 - utilization) x capacity` (or the device's stated reserve, if
larger) is kept free, its activation `workspace` (when it states one) is part of the
state, and each sequence holds whole blocks, its context rounded up to a multiple of
the block. Without an engine workspace, activations are not counted and the report
says so. A device that does not fit reports what it needs and what it has in GiB (and
the largest batch that would fit at this context); one that fits reports its headroom
as the largest batch at this context and the longest context at this batch, both in
whole blocks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING

from kb.ledger.paging import gib
from kb.ledger.quantities import amount

if TYPE_CHECKING:
    from kb.ledger.inputs import Envelope, OptionSpec
    from kb.ledger.reader import DeviceGroup


@dataclass(frozen=True)
class DeviceFit:
    name: str
    count: int
    state: Fraction
    capacity: Fraction
    reserve: Fraction
    pointer: str
    parts: tuple[tuple[str, Fraction], ...] = field(default=())  # state, part by part
    max_batch: int | None = None  # composed: largest batch at this context that fits
    max_context: int | None = None  # composed: longest context at this batch that fits
    paging: str = ""  # composed: the engine's paging the KV cache was counted by, if any

    @property
    def headroom(self) -> Fraction:
        """Bytes left after the reserve and the state (negative: does not fit)."""
        return self.capacity - self.reserve - self.state

    @property
    def fits(self) -> bool:
        return self.headroom >= 0


@dataclass(frozen=True)
class Feasibility:
    option: str
    devices: tuple[DeviceFit, ...]

    @property
    def feasible(self) -> bool:
        return all(d.fits for d in self.devices)

    @property
    def headroom(self) -> Fraction:
        """The smallest headroom over the option's devices (the binding constraint)."""
        return min(d.headroom for d in self.devices)

    def shortfalls(self) -> list[str]:
        """Describe what does not fit, one line per device group."""
        if any(d.parts for d in self.devices):
            return [
                f"{d.name}: does not fit: needs {gib(d.state + d.reserve)} per device, "
                f"has {gib(d.capacity)}"
                for d in self.devices
                if not d.fits
            ]
        return [
            f"{d.name}: state {amount(d.state, 'B')} + reserve {amount(d.reserve, 'B')} "
            f"exceeds capacity {amount(d.capacity, 'B')} by {amount(-d.headroom, 'B')}"
            for d in self.devices
            if not d.fits
        ]


def state_per_device(envelope: Envelope, option: OptionSpec) -> Fraction:
    replicated = option.replicated.value if option.replicated else Fraction(0)
    if option.derived is not None:
        return Fraction(option.derived.state(envelope.batch)) + replicated
    return envelope.state_bytes.value / option.state_shards + replicated


def _fit(group: DeviceGroup, state: Fraction) -> DeviceFit:
    reserve = group.reserve.value if group.reserve else Fraction(0)
    return DeviceFit(group.name, group.count, state, group.capacity.value, reserve, group.pointer)


def _composed_fit(group: DeviceGroup, envelope: Envelope, option: OptionSpec) -> DeviceFit:
    derived = option.derived
    assert derived is not None
    work = envelope.workload
    paging = work.paging if work is not None else None
    reserve = group.reserve.value if group.reserve else Fraction(0)
    if paging is not None:
        reserve = max(reserve, paging.reserve(group.capacity.value))
    block = paging.block_tokens if paging is not None else 1
    replicated = option.replicated.value if option.replicated else Fraction(0)
    sequences = derived.sequences(envelope.batch)
    tokens = paging.tokens(derived.context) if paging is not None else derived.context
    kv = derived.kv_per_token.value * tokens * sequences
    workspace = paging.workspace if paging is not None else Fraction(0)
    state = derived.weights.value + kv + replicated + workspace
    parts = [("weights", derived.weights.value), ("kv_cache", kv)]
    if replicated:
        parts.append(("replicated", replicated))
    if workspace:
        parts.append(("workspace", workspace))
    free = group.capacity.value - reserve - derived.weights.value - replicated - workspace
    per_token = derived.kv_per_token.value
    max_batch = max_context = None
    if free >= 0 and per_token > 0:
        blocks = math.floor(free / (per_token * block))
        max_batch = (blocks // (tokens // block)) * derived.degrees.dp
        if sequences > 0:  # no sequence (`--set batch=0`): no longest context to report
            max_context = math.floor(blocks / sequences) * block
    return DeviceFit(
        group.name,
        group.count,
        state,
        group.capacity.value,
        reserve,
        group.pointer,
        tuple(parts),
        max_batch,
        max_context,
        paging.describe() if paging is not None else "",
    )


def feasibility(envelope: Envelope, option: OptionSpec) -> Feasibility:
    """Check every device group of `option` against its share of the envelope's state."""
    if option.derived is not None:
        return Feasibility(
            option.name, tuple(_composed_fit(g, envelope, option) for g in option.devices)
        )
    state = state_per_device(envelope, option)
    return Feasibility(option.name, tuple(_fit(g, state) for g in option.devices))
