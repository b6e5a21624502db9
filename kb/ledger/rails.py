"""A ring all-reduce whose group spans nodes, at the line rate: over every NIC (`cross_node_rails`).

kb/data/end-to-end.json `cross_node_rails` and flops/allreduce-latency-floor (equations
ring_channels, rail_bus_bandwidth; derivation crossing-ring) state the physics: NCCL builds
one ring per NIC and splits each operation over them through NVLink (sources/nccl-issue-601),
so c_r = min(NICs per node, ranks per node) rings each cross the node boundary on their own
port, and every pipelined step moves n/(c_r*N) through each NIC and n/N over a GPU's own
scale-up link: the bus bandwidth is W = min(c_r*W_port, W_intra). The latency term is the
flat ring's, 2*(N-1) steps at the network's per-message latency, and is not touched here: an
estimate, not a floor (NCCL's own model charges the network only on the steps that cross
nodes, and a measured two-node all-reduce is faster: interconnects/infiniband-ndr v7).

A placement states the NICs (`tp_collective.rails.nics_per_node`, a sourced figure or a
binding); without them the ring runs over one port, as before, and the pricing says so.
A measured curve that prices the size still comes first (kb.ledger.transfers): a measured
time already holds every NIC. A row says the NICs it takes before it is priced (`assumed`);
once priced, `settled` keeps that only where some collective ran over the rails, and else
names the measured curves that priced the crossing all-reduces (since session 24, the
two-node H100 curve, receipts/jingchaozhang-nd-h100-v5-2node-torch-nccl-all-reduce).

The priced transfer keeps its `Rings` (c_r, W_intra, the port's own rate), so a break-even
that varies the link's bandwidth varies the port, as the interconnect records state it, and
the ledger prices min(c_r*x, W_intra) at each value (kb.ledger.ledger `transfer_cost`).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from kb.findings import pointer_join
from kb.kinds.placement import Rails
from kb.ledger.quantities import Figure, QuantityError, figure

if TYPE_CHECKING:  # kb.ledger.transfers imports this module; the reader is only a type here
    from kb.ledger.reader import InputReader
    from kb.model import KnowledgeBase

SECTION = "cross_node_rails"


def reference_nics(kb: KnowledgeBase, hardware: str, link: str | None) -> str | None:
    """The binding to the NICs of the accelerator's reference node, when `link` is its network."""
    record = kb.get(hardware)
    network = record.get("reference_node.scale_out.interconnect") if record is not None else None
    if link is None or network != link:
        return None
    return f"{hardware}#reference_node.scale_out.ports"


def assumed(kb: KnowledgeBase, hardware: str, link: str | None) -> str:
    """What a priced row says of a TP ring across nodes: the NICs it takes, and from where."""
    binding = reference_nics(kb, hardware, link)
    record = kb.get(hardware)
    if binding is None or record is None:
        return (
            f"a TP all-reduce across nodes over one NIC a node: no NIC count is known for "
            f"{link} between these nodes ({SECTION})"
        )
    ports = record.get("reference_node.scale_out.ports.value")
    system = record.get("reference_node.system")
    return (
        f"a TP all-reduce across nodes at the line rate over each of {ports} NICs a node, "
        f"those of {hardware}'s reference node ({system}), assumed ({SECTION})"
    )


MEASURED = "measured: "  # how a transfer a receipt priced begins `pricing` (kb.ledger.transfers)


def settled(
    kb: KnowledgeBase, said: Collection[str], pricing: tuple[str, ...], link: str | None
) -> tuple[str, ...]:
    """A priced row's assumptions: the crossing ring's NICs only where a ring ran at the line rate.

    `assumed` is said before pricing, for a TP group that spans nodes. A measured curve that
    prices a size comes first (kb.ledger.transfers), so when no collective of the row ran
    over the rails (no pricing names SECTION), the note names instead the all-reduce curves
    over `link` that priced them: measured between their receipts' own nodes, taken for the
    row's link.
    """
    if any(f"({SECTION})" in p for p in pricing):
        return tuple(said)
    ours = {a for a in said if a.startswith("a TP all-reduce across nodes") and SECTION in a}
    if not ours:
        return tuple(said)
    curves = ", ".join(_crossing_curves(kb, pricing, link)) or "none named"
    note = (
        f"a TP all-reduce across nodes from a measured curve, not at the line rate ({SECTION} "
        f"unused): {curves}, measured between its own nodes over {link}, taken for this row's"
    )
    return tuple(note if a in ours else a for a in said)


def _crossing_curves(kb: KnowledgeBase, pricing: tuple[str, ...], link: str | None) -> list[str]:
    """The all-reduce receipts over `link` that priced a transfer of `pricing`, in order."""
    found = []
    for text in pricing:
        if not text.startswith(MEASURED):
            continue
        receipt = text[len(MEASURED) :].split(":")[0].split(" ")[0]
        record = kb.get(receipt)
        if record is not None and record.get("pattern") == "all-reduce":
            if record.get("interconnect") == link:
                found.append(receipt)
    return list(dict.fromkeys(found))


@dataclass(frozen=True)
class Rings:
    """A crossing ring's rails, as priced: c_r rings, the scale-up cap, one port's line rate."""

    count: Fraction  # c_r = min(NICs per node, ranks per node)
    intra: Fraction  # W_intra, B/s: the intra_link's per-device rate
    port: Fraction  # W_port, B/s: the link record's line rate, per port


def rings(nics: Fraction, ranks_per_node: int) -> Fraction:
    """c_r = min(k_nic, g): one ring per NIC, at most one per rank of the node."""
    return min(nics, Fraction(ranks_per_node))


def bus_bandwidth(port: Fraction, nics: Fraction, ranks_per_node: int, intra: Fraction) -> Fraction:
    """W = min(c_r*W_port, W_intra) (flops/allreduce-latency-floor rail_bus_bandwidth)."""
    return min(rings(nics, ranks_per_node) * port, intra)


def _intra_rate(res: InputReader, rails: Rails, where: str) -> Figure | None:
    record = res.kb.get(rails.intra_link)
    view = res.views.interconnect(record) if record is not None else None
    found = view.line_rate() if view is not None else None
    if found is None:
        res.gap(where, f"{rails.intra_link} states no per-direction bandwidth")
        return None
    key, node = found
    try:
        return figure(node, f"{rails.intra_link}#bandwidth.{key}")
    except QuantityError as exc:
        res.gap(where, f"{rails.intra_link}: {exc}")
        return None


def over_rails(
    res: InputReader, rails: Rails, port: Figure, pointer: str
) -> tuple[Figure | None, str, Rings | None]:
    """The crossing ring's bus bandwidth at the line rate, the words that say how, its rings.

    The rings are None over one port (no nics_per_node): the bus bandwidth is the port's.
    """
    where = pointer_join(pointer, "rails")
    if rails.nics_per_node is None:
        one = (
            f"; one NIC a node: the placement states no nics_per_node for a group of "
            f"{rails.ranks_per_node} ranks a node ({SECTION})"
        )
        return port, one, None
    nics = res.quantity(
        rails.nics_per_node, pointer_join(where, "nics_per_node"), "1", "NICs per node"
    )
    intra = _intra_rate(res, rails, pointer_join(where, "intra_link"))
    if nics is None or intra is None:
        return None, "", None
    if nics.value < 1 or nics.value.denominator != 1:
        res.gap(pointer_join(where, "nics_per_node"), "NICs per node must be a whole number >= 1")
        return None, "", None
    value = bus_bandwidth(port.value, nics.value, rails.ranks_per_node, intra.value)
    c_r = rings(nics.value, rails.ranks_per_node)
    words = (
        f"; a ring over each of {c_r} NICs a node ({nics.value} NICs [{nics.origin}], "
        f"{rails.ranks_per_node} ranks a node): min({c_r} x {float(port.value) / 1e9:g} GB/s, "
        f"{rails.intra_link} {float(intra.value) / 1e9:g} GB/s) = {float(value) / 1e9:g} GB/s "
        f"bus bandwidth ({SECTION})"
    )
    if nics.value < rails.ranks_per_node:
        words += f"; fewer NICs than ranks a node ({nics.value} < {rails.ranks_per_node})"
    priced = Rings(c_r, intra.value, port.value)
    return Figure(value, "B/s", "derived", SECTION), words, priced
