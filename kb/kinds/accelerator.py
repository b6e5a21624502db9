"""A schema-valid accelerator, typed: memory, compute peaks, links, host link, reference node.

Figures stay the `{value, unit, basis, source, ...}` mappings the schema checked
(kb.ledger.quantities and kb.equations.bind read them); what is typed is which
ones exist and where they sit. Built only for a record the schema stage passed
(kb.kinds.views).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kb.model import Record

Quantity = Mapping[str, Any]  # a schema-valid quantity: value, unit and provenance


@dataclass(frozen=True)
class Link:
    """One kind of scale-up link on the device (`links[i]`)."""

    interconnect: str
    count: int | None = None
    per_link: Quantity | None = None
    per_device: Quantity | None = None


@dataclass(frozen=True)
class ReferenceNode:
    """The system the device ships in (`reference_node`): its size and its compute network."""

    system: str
    devices: Quantity  # accelerators per node
    scale_out: str  # the interconnect id between nodes
    ports: Quantity  # compute-network ports per node


@dataclass(frozen=True)
class Accelerator:
    id: str
    capacity: Quantity
    bandwidth: Quantity
    compute: Mapping[str, Quantity]  # precision (bf16, fp8, ...) -> peak throughput
    links: tuple[Link, ...]
    host_link: str | None  # the interconnect id of the host link, if stated
    reference_node: ReferenceNode | None = None

    def interconnects(self) -> tuple[str, ...]:
        """Every interconnect the device names: its links in order, then its host link."""
        host = () if self.host_link is None else (self.host_link,)
        return (*(link.interconnect for link in self.links), *host)


def accelerator(record: Record) -> Accelerator:
    """The view of a schema-valid accelerator record (kb.kinds.views builds it)."""
    data = record.data
    memory = data["memory"]
    host = data.get("host_link")
    node = data.get("reference_node")
    return Accelerator(
        id=record.id,
        capacity=memory["capacity"],
        bandwidth=memory["bandwidth"],
        compute=dict(data.get("compute", {})),
        links=tuple(
            Link(str(n["interconnect"]), n.get("count"), n.get("per_link"), n.get("per_device"))
            for n in data.get("links", ())
        ),
        host_link=None if host is None else str(host["interconnect"]),
        reference_node=None
        if node is None
        else ReferenceNode(
            str(node["system"]),
            node["devices"],
            str(node["scale_out"]["interconnect"]),
            node["scale_out"]["ports"],
        ),
    )
