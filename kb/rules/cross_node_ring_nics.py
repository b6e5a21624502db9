"""A tensor-parallel ring across nodes states the NICs it crosses on, at least one a rank.

kb prices an all-reduce whose group spans nodes at the line rate as NCCL runs it: one ring
on each NIC of a node (kb/data/end-to-end.json `cross_node_rails`, kb.ledger.rails), a bus
bandwidth of min(min(NICs, ranks a node) x one port, the scale-up link's per-GPU rate). Its
`tp_collective.rails` says how many NICs a node has. This rule warns where that figure is
not known or caps the rings:

- a `tp_collective` over a network port (an interconnect of `scope: port`, e.g. InfiniBand)
  with no `rails`: the group spans nodes, and kb prices it as one ring through one port;
- `rails` with no `nics_per_node`: the same, one port, said on the transfer;
- fewer NICs a node than ranks of the group a node: fewer rings than ranks, each NIC
  carrying more than one GPU's share (kb prices the rings it has, and says so).

Why: kb priced every ring across nodes at one port's line rate, eight times too slow in its
bandwidth term on a DGX H100 node (eight NDR ports, one a GPU). The NIC count is a property
of the node, not of the link, so the placement states it, sourced, and never by default.

Bad:

    tp_collective:
      link: interconnects/infiniband-ndr            # tp = 16 over two nodes: no rails

Good:

    tp_collective:
      link: interconnects/infiniband-ndr
      rails:
        ranks_per_node: 8
        nics_per_node: "hardware/nvidia-h100-sxm#reference_node.scale_out.ports"
        intra_link: interconnects/nvlink-4
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from kb.findings import Finding, Severity, pointer_join
from kb.kinds import views
from kb.model import KnowledgeBase, Record
from kb.rules._base import found

if TYPE_CHECKING:  # types only: a run without placements does not import their module
    from kb.kinds.placement import Option, Rails

READS = "ledger"
CODE = "LG012"
NAME = "cross-node-ring-nics"
SEVERITY = Severity.WARNING
HINT = (
    "state tp_collective.rails: ranks_per_node, nics_per_node (a sourced figure or a "
    "binding, e.g. an accelerator's reference_node.scale_out.ports) and intra_link"
)


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    placements = kb.of_kind("placement")
    if not placements:
        return
    checked = views(kb)
    for record in placements:
        view = checked.placement(record)
        if view is None:
            continue  # SC001 says why
        pointers = ["/reference"] + [f"/candidates/{i}" for i in range(len(view.candidates))]
        for pointer, option in zip(pointers, view.options, strict=True):
            yield from _option(kb, record, option, pointer_join(pointer, "tp_collective"))


def _option(kb: KnowledgeBase, record: Record, option: Option, where: str) -> Iterator[Finding]:
    coll = option.tp_collective
    if coll is None:
        return
    link = kb.get(coll.link)
    if coll.rails is None:
        if link is not None and link.get("scope") == "port":
            yield found(
                CODE,
                SEVERITY,
                record.path,
                pointer_join(where, "link"),
                f"{option.name!r} runs its tensor-parallel all-reduce over the network port "
                f"{coll.link} (its group spans nodes) and states no rails: kb prices it as one "
                "ring through one NIC a node",
                HINT,
            )
        return
    yield from _nics(kb, record, option.name, coll.rails, pointer_join(where, "rails"))


def _nics(
    kb: KnowledgeBase, record: Record, name: str, rails: Rails, where: str
) -> Iterator[Finding]:
    from kb.ledger.reader import InputReader

    if rails.nics_per_node is None:
        yield found(
            CODE,
            SEVERITY,
            record.path,
            where,
            f"{name!r} spans nodes with {rails.ranks_per_node} ranks a node and states no "
            "nics_per_node: kb prices its ring through one NIC a node",
            HINT,
        )
        return
    nics = InputReader(kb).quantity(rails.nics_per_node, where, "1", "NICs per node")
    if nics is not None and nics.value < rails.ranks_per_node:
        yield found(
            CODE,
            SEVERITY,
            record.path,
            pointer_join(where, "nics_per_node"),
            f"{name!r} states {nics.value} NICs a node for {rails.ranks_per_node} ranks a "
            f"node: {nics.value} rings cross the nodes, fewer than the ranks",
            HINT,
        )
