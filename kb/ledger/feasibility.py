"""Feasibility first: whether every device holds its share of the state, and its headroom.

State per device is `state_bytes / state_shards + replicated` (a shard of the sharded
state plus whatever every device holds in full); it fits when it is at most
`capacity - reserve`. An option that does not fit is an infeasible counterfactual:
no ledger, no ratio.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from kb.ledger.inputs import DeviceGroup, Envelope, OptionSpec
from kb.ledger.quantities import amount


@dataclass(frozen=True)
class DeviceFit:
    name: str
    count: int
    state: Fraction
    capacity: Fraction
    reserve: Fraction
    pointer: str

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
        return [
            f"{d.name}: state {amount(d.state, 'B')} + reserve {amount(d.reserve, 'B')} "
            f"exceeds capacity {amount(d.capacity, 'B')} by {amount(-d.headroom, 'B')}"
            for d in self.devices
            if not d.fits
        ]


def state_per_device(envelope: Envelope, option: OptionSpec) -> Fraction:
    replicated = option.replicated.value if option.replicated else Fraction(0)
    return envelope.state_bytes.value / option.state_shards + replicated


def _fit(group: DeviceGroup, state: Fraction) -> DeviceFit:
    reserve = group.reserve.value if group.reserve else Fraction(0)
    return DeviceFit(group.name, group.count, state, group.capacity.value, reserve, group.pointer)


def feasibility(envelope: Envelope, option: OptionSpec) -> Feasibility:
    """Check every device group of `option` against its share of the envelope's state."""
    state = state_per_device(envelope, option)
    return Feasibility(option.name, tuple(_fit(g, state) for g in option.devices))
