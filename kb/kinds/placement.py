"""A schema-valid placement, typed: the envelope, the reference and the candidates.

placement.schema.json shapes every field read here, so nothing is re-checked: an
optional field is None (or empty), never of another type. Figures stay the
`{value, unit, basis, source, ...}` mappings the schema checked, or the
`record#field` binding text a figure may be (kb.ledger.inputs resolves both, and
reports a unit it does not know or a dimension it did not expect). Built only
for a record the schema stage passed (kb.kinds.views); `kb ledger --set` builds
one from its edited copy of such a record (kb.ledger.analysis).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kb.model import Record

Quantity = Mapping[str, Any]  # a schema-valid quantity: value, unit and provenance
FigureNode = Quantity | str  # a quantity, or a binding `record#field` to one


@dataclass(frozen=True)
class DeviceView:
    """Identical devices of one option (`devices[i]`)."""

    name: str
    hardware: str | None  # an accelerator id; its memory.capacity unless `capacity`
    count: int | None
    capacity: FigureNode | None
    reserve: Quantity | None


@dataclass(frozen=True)
class Transfer:
    """One recurring transfer on the critical path (`transfers[i]`)."""

    name: str
    pattern: str
    link: str
    ranks: int
    count: int
    message_size: Quantity
    scales_with_batch: bool
    algorithm: str | None
    cuda_graphs: bool | None
    receipt: str | None
    link_latency: FigureNode | None
    overlap: Quantity | None
    strategy: str
    rails: Rails | None = None  # an all-reduce whose group spans nodes (cross_node_rails)


@dataclass(frozen=True)
class OverheadView:
    time: Quantity
    receipt: str


@dataclass(frozen=True)
class StatedRatio:
    """A ratio a record states (`stated_ratios[j]`); `rel_tol` None is the default."""

    dimension: str
    value: int | float
    candidate: str | None
    rel_tol: int | float | None


@dataclass(frozen=True)
class MeasuredTermView:
    """A measured row of a composed option (`measured_terms.<row>`), with its receipt."""

    time: Quantity
    receipt: str
    rel_tol: int | float | None


@dataclass(frozen=True)
class Degrees:
    """How one option maps the model (`degrees`): tensor, pipeline, data and expert parallel."""

    tp: int
    pp: int
    dp: int
    ep: int = 1  # routed experts over ep of the tp*dp ranks of a stage (kb.ledger.expert)
    moe_tp: int = 1  # each routed expert split moe_tp ways under attention DP (kb.ledger.expert)

    @property
    def devices(self) -> int:
        return self.tp * self.pp * self.dp


@dataclass(frozen=True)
class Rails:
    """A group that spans nodes: its ranks per node, the NICs they cross on, the link inside."""

    ranks_per_node: int
    nics_per_node: FigureNode | None  # None: not stated, one port (said on the row)
    intra_link: str


@dataclass(frozen=True)
class Collective:
    """How an option's derived tensor-parallel all-reduces run (`tp_collective`)."""

    link: str
    algorithm: str | None
    cuda_graphs: bool | None
    receipt: str | None
    link_latency: FigureNode | None
    rails: Rails | None = None  # the group spans nodes (cross_node_rails)


@dataclass(frozen=True)
class ExpertLinks:
    """The links of an option's expert-parallel dispatch and combine (`ep_collective`)."""

    link: str  # inside a node
    inter_link: str | None  # between nodes
    ranks_per_node: int


@dataclass(frozen=True)
class Option:
    """The reference or one candidate: devices, state split, useful rate, transfers, overheads."""

    name: str
    devices: tuple[DeviceView, ...]
    state_shards: int | None
    replicated: Quantity | None
    rate: FigureNode
    parallel: int | None
    compute_rate: FigureNode | None
    strategies: tuple[str, ...]
    links: tuple[str, ...]
    transfers: tuple[Transfer, ...]
    overheads: tuple[tuple[str, OverheadView], ...]  # in authored order
    cost_rate: Quantity | None
    power: Quantity | None
    stated_ratios: tuple[StatedRatio, ...]
    degrees: Degrees | None = None  # with an envelope `workload`: kb derives state and rows
    tp_collective: Collective | None = None
    stage_link: Collective | None = None  # pp > 1: the link between consecutive stages
    measured_terms: tuple[tuple[str, MeasuredTermView], ...] = ()  # row -> measured value
    ep_collective: ExpertLinks | None = None  # ep > 1: the dispatch and combine's links
    moe_collective: Collective | None = None  # moe_tp > 1: the MoE gather and scatter's link


@dataclass(frozen=True)
class WorkloadView:
    """What kb derives a decode step from (`envelope.workload`), instead of typed bytes."""

    context: int  # tokens cached per sequence at the step priced
    composed_from: tuple[str, ...]  # the flop classes the step is evaluated from
    weight_bytes: FigureNode  # bytes per weight
    kv_bytes: FigureNode  # bytes per cached KV element
    activation_bytes: FigureNode | None  # bytes per activation element (all-reduce buffer)
    all_reduces_per_layer: FigureNode | None
    engine: str | None  # its calibrated per-layer overhead prices the overhead row
    overhead_fallback: str | None  # the engine whose overhead stands in, named, never implied
    flop_per_mac: FigureNode | None = None  # f_mac: with a compute rate, the ridge check
    request: tuple[int, int] | None = None  # (input_tokens, output_tokens): TTFT and latency
    prefill_matmul: str | None = None  # receipt of per-layer matmul times by tokens (prefill)
    prefill_kernels: str | None = None  # receipt of per-layer non-matmul kernel times (prefill)
    kv_read_per_query_head: bool = False  # decode attention reads the cache once per query head
    moe_expert_rate: FigureNode | None = None  # FLOP/s of the routed experts' matmuls
    attention_sixteen_bit: bool = False  # the prompt's attention runs 16-bit, whatever the cache
    dense_experts: bool = False  # every expert runs on every token (an MoE model priced dense)


@dataclass(frozen=True)
class EnvelopeView:
    """The workload held fixed across every option."""

    model: str
    precision: str
    quality: str
    batch: int
    state_bytes: Quantity | None  # None only with a workload (kb derives it)
    useful_work: Quantity | None
    slo: Quantity | None
    flops_per_item: Quantity | None
    workload: WorkloadView | None = None


@dataclass(frozen=True)
class Placement:
    id: str
    envelope: EnvelopeView
    reference: Option
    candidates: tuple[Option, ...]

    @property
    def options(self) -> tuple[Option, ...]:
        """The reference, then the candidates in record order."""
        return (self.reference, *self.candidates)


def placement(record: Record) -> Placement:
    """The view of a schema-valid placement record (kb.kinds.views builds it)."""
    data = record.data
    return Placement(
        id=record.id,
        envelope=_envelope(data["envelope"]),
        reference=option(data["reference"]),
        candidates=tuple(option(node) for node in data["candidates"]),
    )


def _envelope(node: Mapping[str, Any]) -> EnvelopeView:
    return EnvelopeView(
        model=str(node["model"]),
        precision=str(node["precision"]),
        quality=str(node["quality"]),
        batch=node["batch"],
        state_bytes=node.get("state_bytes"),
        useful_work=node.get("useful_work"),
        slo=node.get("slo"),
        flops_per_item=node.get("flops_per_item"),
        workload=_workload(node.get("workload")),
    )


def _workload(node: Mapping[str, Any] | None) -> WorkloadView | None:
    if node is None:
        return None
    return WorkloadView(
        context=node["context"],
        composed_from=tuple(str(c) for c in node["composed_from"]),
        weight_bytes=node["weight_bytes"],
        kv_bytes=node["kv_bytes"],
        activation_bytes=node.get("activation_bytes"),
        all_reduces_per_layer=node.get("all_reduces_per_layer"),
        engine=node.get("engine"),
        overhead_fallback=node.get("overhead_fallback"),
        flop_per_mac=node.get("flop_per_mac"),
        request=(
            (node["request"]["input_tokens"], node["request"]["output_tokens"])
            if "request" in node
            else None
        ),
        prefill_matmul=node.get("prefill_matmul"),
        prefill_kernels=node.get("prefill_kernels"),
        kv_read_per_query_head=node.get("kv_read_per_query_head") is True,
        moe_expert_rate=node.get("moe_expert_rate"),
        attention_sixteen_bit=node.get("attention_sixteen_bit") is True,
        dense_experts=node.get("dense_experts") is True,
    )


def _degrees(node: Mapping[str, Any] | None) -> Degrees | None:
    if node is None:
        return None
    return Degrees(
        node.get("tp", 1),
        node.get("pp", 1),
        node.get("dp", 1),
        node.get("ep", 1),
        node.get("moe_tp", 1),
    )


def _expert_links(node: Mapping[str, Any] | None) -> ExpertLinks | None:
    if node is None:
        return None
    return ExpertLinks(str(node["link"]), node.get("inter_link"), int(node["ranks_per_node"]))


def _collective(node: Mapping[str, Any] | None) -> Collective | None:
    if node is None:
        return None
    return Collective(
        link=str(node["link"]),
        algorithm=node.get("algorithm"),
        cuda_graphs=node.get("cuda_graphs"),
        receipt=node.get("receipt"),
        link_latency=node.get("link_latency"),
        rails=_rails(node.get("rails")),
    )


def _rails(node: Mapping[str, Any] | None) -> Rails | None:
    if node is None:
        return None
    return Rails(int(node["ranks_per_node"]), node.get("nics_per_node"), str(node["intra_link"]))


def option(node: Mapping[str, Any]) -> Option:
    """One schema-valid option (placement.schema.json `$defs/option`)."""
    useful = node["useful"]
    return Option(
        name=str(node["name"]),
        devices=tuple(_device(d) for d in node["devices"]),
        state_shards=node.get("state_shards"),
        replicated=node.get("replicated"),
        rate=useful["rate"],
        parallel=useful.get("parallel"),
        compute_rate=useful.get("compute_rate"),
        strategies=tuple(str(s) for s in node.get("strategies", ())),
        links=tuple(str(s) for s in node.get("links", ())),
        transfers=tuple(_transfer(t) for t in node.get("transfers", ())),
        overheads=tuple(
            (str(name), OverheadView(entry["time"], str(entry.get("receipt", ""))))
            for name, entry in node.get("overheads", {}).items()
        ),
        cost_rate=node.get("cost_rate"),
        power=node.get("power"),
        stated_ratios=stated_ratios(node.get("stated_ratios", ())),
        degrees=_degrees(node.get("degrees")),
        tp_collective=_collective(node.get("tp_collective")),
        stage_link=_collective(node.get("stage_link")),
        ep_collective=_expert_links(node.get("ep_collective")),
        moe_collective=_collective(node.get("moe_collective")),
        measured_terms=tuple(
            (str(name), MeasuredTermView(term["time"], str(term["receipt"]), term.get("rel_tol")))
            for name, term in node.get("measured_terms", {}).items()
        ),
    )


def stated_ratios(nodes: Any) -> tuple[StatedRatio, ...]:
    """Schema-valid `stated_ratios` entries (of a placement option or a proposal)."""
    return tuple(
        StatedRatio(str(r["dimension"]), r["value"], r.get("candidate"), r.get("rel_tol"))
        for r in nodes
    )


def _device(node: Mapping[str, Any]) -> DeviceView:
    return DeviceView(
        name=str(node["name"]),
        hardware=node.get("hardware"),
        count=node.get("count"),
        capacity=node.get("capacity"),
        reserve=node.get("reserve"),
    )


def _transfer(node: Mapping[str, Any]) -> Transfer:
    return Transfer(
        name=str(node["name"]),
        pattern=str(node["pattern"]),
        link=str(node["link"]),
        ranks=node["ranks"],
        count=node["count"],
        message_size=node["message_size"],
        scales_with_batch=bool(node.get("scales_with_batch", False)),
        algorithm=node.get("algorithm"),
        cuda_graphs=node.get("cuda_graphs"),
        receipt=node.get("receipt"),
        link_latency=node.get("link_latency"),
        overlap=node.get("overlap"),
        strategy=str(node.get("strategy", "")),
    )
