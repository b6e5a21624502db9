"""Resolve a placement record into typed specs, listing every input that is missing.

Resolution is where records meet: the envelope's figures, each option's devices
(capacity from an accelerator record or an explicit figure), useful-work rate, transfers
(line rate and latency from interconnect records, effective bandwidth from receipts) and
overheads. Nothing here computes a time; gaps become `Gap`s that rule LG004 reports.

Resolution reads typed views (kb.kinds), never `Record.data`: only a record the schema
stage passed has one, so nothing here re-checks a type. What it still checks is what
a schema cannot: a unit kb does not know, a figure of the wrong dimension or sign, a
binding that lands on nothing, a link that is not an interconnect.

**A record that fails its schema is not computed from, and the ledger says so.**

- A placement that fails its schema (SC001, LD009 or LD010 on its file) is not
  resolved: the result is `Unresolved`, one gap per schema finding, each naming it
  (`kb ledger` prints the schema findings themselves and exits 1; other readers,
  such as the site's ledger section, get the gaps). Rule LG004 reports nothing on
  it: its schema findings already fail the run, as a record kb cannot read causes
  no cascade.
- A record such a placement reads (a bound record, a transfer's interconnect, the
  receipt it pins, or a receipt that names its link and pattern and so might price
  it) that kb could not read or that fails its schema stops that input: one gap
  naming the record (`Gap.blocked_by`), which LG004 reports as one finding on the
  placement, "cannot be priced while X fails its schema (its own finding says why)".
  Guessing around it (pricing by line rate what a broken receipt might have
  measured) would check less in silence.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction

from kb.findings import pointer_join
from kb.kinds import views
from kb.kinds.placement import EnvelopeView, Option, Placement, WorkloadView
from kb.ledger.expert import GATHER_NAMES
from kb.ledger.expert import GATHER_PREFILL_NAMES as GATHER_PREFILL
from kb.ledger.expert import PREFILL_NAMES as EP_PREFILL
from kb.ledger.quantities import Figure, QuantityError
from kb.ledger.reader import FAILS_SCHEMA, DeviceGroup, Gap, InputReader, Overhead
from kb.ledger.reader import one as _one
from kb.ledger.transfers import TransferSpec, resolve_transfer
from kb.ledger.workload import (
    PREFILL,
    PREFILL_SEND,
    Derived,
    Workload,
    derive_option,
    resolve_workload,
)
from kb.model import KnowledgeBase, Record
from kb.run import Kept

OVERHEADS = (
    "sync",
    "input_imbalance",
    "replication_or_migration",
    "remote_memory_or_paging",
    "orchestration_or_recovery",
)


@dataclass(frozen=True)
class MeasuredTerm:
    """A derived row replaced by a measurement (`measured_terms`), with its receipt."""

    time: Figure
    receipt: str
    rel_tol: Fraction
    pointer: str


DEFAULT_MEASURED_TOL = Fraction(1, 4)  # the relative band kb's predictions use


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
    derived: Derived | None = None  # a composed placement: state and step parts (workload.py)
    measured: Mapping[str, MeasuredTerm] = field(default_factory=dict)  # row -> measurement
    prefill: tuple[TransferSpec, ...] = ()  # the prefill pass's all-reduces (kb.ledger.request)


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
    workload: Workload | None = None  # a composed placement (kb.ledger.workload)


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


def _option(
    res: InputReader,
    node: Option,
    pointer: str,
    envelope: Envelope | None,
) -> OptionSpec | None:
    devices = [
        res.device(d, pointer_join(pointer, "devices", i)) for i, d in enumerate(node.devices)
    ]
    work_dim = envelope.useful_work.dim if envelope else "B"
    batch = envelope.batch if envelope else Fraction(1)
    rate = res.quantity(
        node.rate, pointer_join(pointer, "useful", "rate"), f"{work_dim}/s", "useful-work rate"
    )
    compute = res.optional(
        node.compute_rate,
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
    hardware = frozenset(d.hardware for d in node.devices if d.hardware is not None)
    transfers = [
        resolve_transfer(res, t, pointer_join(pointer, "transfers", i), batch, hardware)
        for i, t in enumerate(node.transfers)
    ]
    derived = None
    prefill: list[TransferSpec | None] = []
    if envelope is not None and envelope.workload is not None:
        count = sum(_one(d.count) for d in node.devices)
        composed = derive_option(res, envelope.workload, node, pointer, count, int(batch))
        if composed is None:
            return None
        derived, made = composed
        for transfer in made:
            if isinstance(transfer, TransferSpec):  # priced already (kb.ledger.expert)
                (prefill if transfer.name in EP_PREFILL else transfers).append(transfer)
                continue
            at = "tp_collective" if transfer.pattern == "all-reduce" else "stage_link"
            at = "moe_collective" if transfer.name in GATHER_NAMES else at
            spec = resolve_transfer(res, transfer, pointer_join(pointer, at), batch, hardware)
            first = transfer.name in (PREFILL, PREFILL_SEND, *GATHER_PREFILL)
            (prefill if first else transfers).append(spec)
    # Every input is resolved (so every gap is recorded) before an incomplete option is dropped.
    replicated = res.optional(
        node.replicated, pointer_join(pointer, "replicated"), "B", "replicated state"
    )
    overheads = res.overheads(node, pointer_join(pointer, "overheads"))
    cost_rate = res.optional(
        node.cost_rate, pointer_join(pointer, "cost_rate"), "USD/s", "cost rate"
    )
    power = res.optional(node.power, pointer_join(pointer, "power"), "W", "power")
    if rate is None or None in devices or None in transfers or None in prefill:
        return None
    resolved = tuple(t for t in transfers if t is not None)
    # an envelope that did not resolve has its own gaps: no second one about measured rows
    measured = _measured_terms(res, node, pointer, derived is not None) if envelope else {}
    shards, parallel = _one(node.state_shards), _one(node.parallel)
    if derived is not None:
        shards = derived.degrees.tp * derived.degrees.pp
        parallel = derived.degrees.tp
    return OptionSpec(
        name=node.name,
        pointer=pointer,
        devices=tuple(d for d in devices if d is not None),
        state_shards=shards,
        replicated=replicated,
        useful_rate=rate,
        useful_parallel=parallel,
        transfers=resolved,
        overheads=overheads,
        cost_rate=cost_rate,
        power=power,
        strategies=node.strategies,
        compute_rate=compute,
        links=tuple(sorted(set(node.links) | {t.link for t in resolved})),
        derived=derived,
        measured=measured,
        prefill=tuple(p for p in prefill if p is not None),
    )


def _measured_terms(
    res: InputReader, node: Option, pointer: str, composed: bool
) -> dict[str, MeasuredTerm]:
    """The option's measured rows; only a composed option has derived rows to replace."""
    from kb.ledger.quantities import exact

    found: dict[str, MeasuredTerm] = {}
    for name, term in node.measured_terms:
        at = pointer_join(pointer, "measured_terms", name)
        if not composed:
            res.gap(
                at,
                "measured_terms replace derived rows: only an option of a placement "
                "with an envelope workload has them",
            )
            continue
        time = res.quantity(term.time, pointer_join(at, "time"), "s", f"measured {name}")
        if res.readable(term.receipt) is None:
            if res.unusable(term.receipt):
                res.blocked(at, term.receipt, f"the measured {name}")
            continue  # a missing receipt is RF001's finding
        try:
            tol = DEFAULT_MEASURED_TOL if term.rel_tol is None else exact(term.rel_tol)
        except QuantityError:
            continue  # a non-finite number: the LD rules report it
        if time is not None:
            found[name] = MeasuredTerm(time, term.receipt, tol, at)
    return found


def _envelope(res: InputReader, node: EnvelopeView) -> Envelope | None:
    if node.workload is not None:
        return _composed_envelope(res, node)
    unit = str((node.useful_work or {}).get("unit", ""))
    useful_dim = "FLOP" if unit.endswith("FLOP") else "B"
    state = res.quantity(node.state_bytes, "/envelope/state_bytes", "B", "state bytes")
    work = res.quantity(node.useful_work, "/envelope/useful_work", useful_dim, "useful work")
    slo = res.optional(node.slo, "/envelope/slo", "s", "SLO latency")
    flops = res.optional(
        node.flops_per_item, "/envelope/flops_per_item", "FLOP", "FLOP per batch item"
    )
    if work is not None and work.value == 0:
        res.gap("/envelope/useful_work", "useful work is 0, expected a positive figure")
        work = None
    if state is None or work is None:
        return None
    return Envelope(
        node.model,
        node.precision,
        node.quality,
        Fraction(node.batch),
        state,
        work,
        slo,
        flops,
    )


def _composed_envelope(res: InputReader, node: EnvelopeView) -> Envelope | None:
    """The envelope of a composed placement: state and useful work are the model's weights."""
    assert node.workload is not None
    work = _workload(res, node.workload, node.model, "/envelope/workload")
    slo = res.optional(node.slo, "/envelope/slo", "s", "SLO latency")
    if work is None:
        return None
    weights = Figure(work.weights_total, "B", "derived", f"{node.model} (workload)")
    return Envelope(
        node.model,
        node.precision,
        node.quality,
        Fraction(node.batch),
        weights,
        weights,
        slo,
        None,
        work,
    )


def _workload(res: InputReader, node: WorkloadView, model: str, pointer: str) -> Workload | None:
    """`resolve_workload`, kept for the run when `res` is fresh and the knowledge base frozen.

    The workload reads no batch and no option: every mapping and batch of a planner's
    pass with the same model, lengths, engine and formats resolves the same one. A
    frozen knowledge base's records cannot change, so the run's evaluation memo
    (kb.equations.evalmemo `Evaluations.derived`, under the model record) keeps it with
    the gaps it recorded, and a reader with no gap yet gets the same workload and the
    same gaps, in order, as resolving it again would give.
    """
    from kb.equations.evalmemo import Unkeyable, evaluations, frozen

    memo = evaluations(res.kb)
    record = res.readable(model)
    if memo is None or record is None or res.gaps:
        return resolve_workload(res, node, model, pointer)
    try:
        question = ("workload", pointer, frozen(node))
    except Unkeyable:
        return resolve_workload(res, node, model, pointer)

    def resolved() -> tuple[Workload | None, tuple[Gap, ...]]:
        fresh = InputReader(res.kb)
        return resolve_workload(fresh, node, model, pointer), tuple(fresh.gaps)

    work, gaps = memo.derived(record, question, resolved)
    res.gaps.extend(gaps)
    return work


# The placements resolved in this run, by id (resolve_placement).
RESOLVED: Kept[dict[str, PlacementSpec | Unresolved]] = Kept("resolved placements")


def resolve_placement(record: Record, kb: KnowledgeBase) -> PlacementSpec | Unresolved:
    """Resolve a placement record into specs, or list every gap that prevents it.

    A placement that fails its schema is not resolved (the module docstring says
    why): one gap per schema finding. Several LG rules resolve the same placement
    in one run, so a frozen knowledge base keeps the result in its run context
    (RESOLVED).
    """
    if not kb.frozen:
        return _resolve(record, kb)
    memo = kb.run.once(RESOLVED, dict)
    hit = memo.get(record.id)
    if hit is None:
        hit = memo[record.id] = _resolve(record, kb)
    return hit


def _resolve(record: Record, kb: KnowledgeBase) -> PlacementSpec | Unresolved:
    view = views(kb).placement(record)
    if view is None:
        return schema_invalid(record, kb)
    return resolve_view(view, record, kb)


def schema_invalid(record: Record, kb: KnowledgeBase) -> Unresolved:
    """What a placement that fails its schema resolves to: a gap per schema finding, no ledger."""
    gaps = tuple(
        Gap(
            f.location.pointer,
            f"{f.code} {f.message}: the ledger is not computed from a placement that "
            "fails its schema",
            record.id,
            FAILS_SCHEMA,
        )
        for f in views(kb).findings(record)
    )
    return Unresolved(record.id, record.path, gaps)


def resolve_view(view: Placement, record: Record, kb: KnowledgeBase) -> PlacementSpec | Unresolved:
    """Resolve the view of a schema-valid placement (`record` names where it is)."""
    res = InputReader(kb)
    envelope = _envelope(res, view.envelope)
    reference = _option(res, view.reference, "/reference", envelope)
    candidates = [
        _option(res, c, pointer_join("/candidates", i), envelope)
        for i, c in enumerate(view.candidates)
    ]
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
