"""Price every admitted mapping with the one composed ledger; compare them dimension by dimension.

Each mapping kb.plan.enumerate admits becomes a `kb.ledger.scenario.Scenario` (the
same synthesized composed placement `kb ledger` prices: there is no second pricing
path); `evaluate` returns an Outcome per scenario. The plan then sorts the options:
the infeasible first (the GiB per device each needs and has), then those kb could not
price (with the reason), then the feasible ones, each with every dimension (TTFT, TPOT,
tokens/s per device and per system, devices used, memory headroom as the largest batch
at this context and the longest context at this batch, energy per token, exposed
communication share), the Pareto front of each pair of dimensions, and the SLOs each
violates. Nothing is collapsed into one score.

A question across nodes that names no `inter_link` is planned over the accelerator's
reference node network (`reference_network`: its record's `reference_node`), and a
note says it was assumed; tensor-parallel groups of whole nodes are priced unless
`tp_across_nodes` is False (docs/ledger.md, "The network between nodes").

The pricing function is a parameter (`price`) so the comparison can be tested on
its own; by default it is kb.ledger.scenario.evaluate.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Protocol

from kb.plan.enumerate import Excluded, Placement, PlanError, Space, enumerate_placements
from kb.plan.pareto import pair_fronts

PRECISIONS = ("bf16", "fp8", "int8", "int4", "fp4")


@dataclass(frozen=True)
class Dimension:
    key: str
    label: str
    unit: str
    better: str  # lower | higher


DIMENSIONS = (
    Dimension("ttft", "TTFT", "s", "lower"),
    Dimension("tpot", "TPOT", "s", "lower"),
    Dimension("tokens_per_s_per_device", "tok/s/device", "1/s", "higher"),
    Dimension("tokens_per_s_system", "tok/s", "1/s", "higher"),
    Dimension("devices", "devices", "1", "lower"),
    Dimension("max_batch", "max batch", "1", "higher"),
    Dimension("max_context", "max context", "1", "higher"),
    Dimension("energy_per_token", "energy/token", "J", "lower"),
    Dimension("exposed_share", "exposed comm", "1", "lower"),
)
BY_KEY = {d.key: d for d in DIMENSIONS}

UNAVAILABLE = {
    "ttft": "no prompt length was given (--context IN/OUT prices the prefill pass)",
    "energy_per_token": "n/a: no option's devices state a power figure (the energy per token "
    "is flops/serving-energy-cost-per-token's N*P_dev*t/B at each accelerator's power)",
}


class OutcomeLike(Protocol):
    """The fields of kb.ledger.scenario.Outcome the planner reads."""

    @property
    def fits(self) -> bool: ...
    @property
    def need_per_device(self) -> Fraction: ...
    @property
    def have_per_device(self) -> Fraction: ...
    @property
    def max_batch(self) -> int | None: ...
    @property
    def max_context(self) -> int | None: ...
    @property
    def ttft(self) -> Fraction | None: ...
    @property
    def tpot(self) -> Fraction | None: ...
    @property
    def latency(self) -> Fraction | None: ...
    @property
    def tokens_per_s_system(self) -> Fraction | None: ...
    @property
    def tokens_per_s_per_device(self) -> Fraction | None: ...
    @property
    def energy_per_token(self) -> Fraction | None: ...
    @property
    def exposed_share(self) -> Fraction | None: ...
    @property
    def rows(self) -> tuple[Any, ...]: ...
    @property
    def provenance(self) -> str: ...
    @property
    def problems(self) -> tuple[str, ...]: ...


Price = Callable[[Sequence[Mapping[str, Any]], Any], Sequence[OutcomeLike]]


@dataclass(frozen=True)
class Query:
    """One `kb plan` question."""

    model: str
    hardware: str
    count: int
    nodes: int = 1
    batch: int = 1
    input_tokens: int | None = None
    output_tokens: int | None = None
    context: int | None = None
    engine: str | None = None
    weight_precision: str = "bf16"
    kv_precision: str = "bf16"
    intra_link: str | None = None
    inter_link: str | None = None
    intra_latency: str | None = None  # a stated per-message latency ("3 us", unverified)
    inter_latency: str | None = None
    tp_across_nodes: bool = True  # price TP groups of whole nodes (--tp-within-node: False)
    pinned: tuple[tuple[str, int], ...] = ()
    slo_ttft: Fraction | None = None
    slo_tpot: Fraction | None = None
    settings: tuple[tuple[str, str], ...] = ()
    concurrency: bool = False  # the batch was given as --concurrency

    def scenario(self, p: Placement) -> dict[str, Any]:
        """The keyword arguments of kb.ledger.scenario.Scenario for one mapping."""
        return {
            "model": self.model,
            "hardware": self.hardware,
            "count": p.devices,
            "nodes": p.nodes,
            "tp": p.tp,
            "pp": p.pp,
            "ep": p.ep,
            "dp": p.dp,
            "batch": self.batch,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "context": self.context,
            "engine": self.engine,
            "weight_precision": self.weight_precision,
            "kv_precision": self.kv_precision,
            "intra_link": self.intra_link,
            "inter_link": self.inter_link if p.nodes > 1 else None,
            **{
                name: value
                for name, value in (
                    ("intra_latency", self.intra_latency),
                    ("inter_latency", self.inter_latency if p.nodes > 1 else None),
                )
                if value is not None
            },
        }


@dataclass(frozen=True)
class Option:
    """One priced mapping."""

    placement: Placement
    outcome: OutcomeLike | None
    status: str  # feasible | infeasible | unpriced
    values: Mapping[str, Fraction | None]
    problems: tuple[str, ...]
    pareto: tuple[str, ...] = ()  # "a/b" pairs of dimension keys on whose front it lies
    slo_violations: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.placement.name


@dataclass(frozen=True)
class Plan:
    query: Query
    options: tuple[Option, ...]  # infeasible, unpriced, feasible
    excluded: tuple[Excluded, ...]
    available: Mapping[str, str | None]  # dimension key -> None, or why it is not available
    fronts: tuple[tuple[tuple[str, str], tuple[str, ...]], ...]
    notes: tuple[str, ...] = field(default=())

    def of(self, status: str) -> list[Option]:
        return [o for o in self.options if o.status == status]


@dataclass(frozen=True)
class ModelFacts:
    """What the enumeration reads from the model record."""

    layers: int
    experts: int | None  # routed experts of an MoE model, None for a dense one


def default_price(scenarios: Sequence[Mapping[str, Any]], kb: Any) -> Sequence[OutcomeLike]:
    """Price through kb.ledger.scenario (the composed ledger `kb ledger` uses)."""
    from kb.ledger.scenario import Scenario, ScenarioError, evaluate

    built = [Scenario(**s) for s in scenarios]
    try:
        return evaluate(built, kb)
    except ScenarioError:
        pass
    found: list[OutcomeLike] = []  # one bad scenario must not hide the others
    for one in built:
        try:
            found.extend(evaluate([one], kb))
        except ScenarioError as exc:
            found.append(Unpriced((str(exc),)))
    return found


@dataclass(frozen=True)
class Unpriced:
    """An Outcome stand-in for a scenario kb refused (ScenarioError), with its words."""

    problems: tuple[str, ...]
    fits: bool = False
    need_per_device: Fraction = Fraction(0)
    have_per_device: Fraction = Fraction(0)
    max_batch: int | None = None
    max_context: int | None = None
    ttft: Fraction | None = None
    tpot: Fraction | None = None
    latency: Fraction | None = None
    tokens_per_s_system: Fraction | None = None
    tokens_per_s_per_device: Fraction | None = None
    energy_per_token: Fraction | None = None
    exposed_share: Fraction | None = None
    rows: tuple[Any, ...] = ()
    provenance: str = "none"


def status_of(outcome: OutcomeLike) -> str:
    if not outcome.fits and outcome.need_per_device > outcome.have_per_device > 0:
        return "infeasible"
    if outcome.fits and outcome.tpot is not None:
        return "feasible"
    return "unpriced"


def values_of(p: Placement, o: OutcomeLike) -> dict[str, Fraction | None]:
    def whole(n: int | None) -> Fraction | None:
        return None if n is None else Fraction(n)

    return {
        "ttft": o.ttft,
        "tpot": o.tpot,
        "latency": o.latency,
        "tokens_per_s_per_device": o.tokens_per_s_per_device,
        "tokens_per_s_system": o.tokens_per_s_system,
        "devices": Fraction(p.devices),
        "max_batch": whole(o.max_batch),
        "max_context": whole(o.max_context),
        "energy_per_token": o.energy_per_token,
        "exposed_share": o.exposed_share,
    }


def slo_violations(query: Query, values: Mapping[str, Fraction | None]) -> tuple[str, ...]:
    from kb.ledger.quantities import amount

    found = []
    for key, slo in (("ttft", query.slo_ttft), ("tpot", query.slo_tpot)):
        value = values.get(key)
        if slo is None:
            continue
        if value is None:
            found.append(f"{BY_KEY[key].label} not priced, SLO {amount(slo, 's')} unchecked")
        elif value > slo:
            found.append(f"{BY_KEY[key].label} {amount(value, 's')} > SLO {amount(slo, 's')}")
    return tuple(found)


ORDER = {"infeasible": 0, "unpriced": 1, "feasible": 2}


def plan(
    query: Query,
    facts: ModelFacts,
    kb: Any,
    price: Price | None = None,
) -> Plan:
    """Enumerate, price and compare (PlanError for a query kb cannot plan)."""
    notes = []
    if kb is not None and query.nodes > 1 and query.inter_link is None:
        assumed = reference_network(kb, query.hardware, query.count // query.nodes)
        if assumed is not None:
            query = replace(query, inter_link=assumed[0])
            notes.append(assumed[1])
    if query.context is None and query.input_tokens is None:
        query = replace(query, context=1)
        notes.append(NO_CONTEXT)
    space = Space(
        query.count,
        query.nodes,
        facts.layers,
        query.batch,
        facts.experts,
        query.tp_across_nodes,
        dict(query.pinned),
        query.inter_link is not None,
        query.engine,
    )
    placements, excluded = enumerate_placements(space)
    if not placements:
        pins = ", ".join(f"--{k} {v}" for k, v in query.pinned) or "no pinned degree"
        why = "; ".join(sorted({e.reason for e in excluded})) or "no mapping matches"
        raise PlanError(f"no mapping of {query.count} devices to enumerate ({pins}): {why}")
    outcomes = (price or default_price)([query.scenario(p) for p in placements], kb)
    if len(outcomes) != len(placements):
        raise RuntimeError(f"{len(outcomes)} outcomes for {len(placements)} scenarios")
    refused = {o.problems for o in outcomes if isinstance(o, Unpriced)}
    if len(refused) == 1 and all(isinstance(o, Unpriced) for o in outcomes):
        raise PlanError("; ".join(refused.pop()))  # the question itself, not one mapping
    options = []
    for p, o in zip(placements, outcomes, strict=True):
        values = values_of(p, o)
        status = status_of(o)
        problems = tuple(o.problems)
        options.append(
            Option(
                p,
                o,
                status,
                values,
                problems,
                slo_violations=slo_violations(query, values) if status == "feasible" else (),
            )
        )
    return compare(query, options, excluded, notes)


def reference_network(
    kb: Any, hardware: str, per_node: int | None = None
) -> tuple[str, str] | None:
    """The accelerator's reference node network and the words that say it is assumed.

    None when the accelerator record states no `reference_node` (then a mapping that
    crosses nodes needs --inter-link, and says so). When the question's nodes hold
    another number of devices (`per_node`) than the reference node, the words say so.
    """
    from kb.kinds import views
    from kb.ledger.quantities import QuantityError, figure

    record = kb.get(hardware)
    view = views(kb).accelerator(record) if record is not None else None
    node = view.reference_node if view is not None else None
    if node is None:
        return None
    try:
        ports = figure(node.ports, f"{hardware}#reference_node.scale_out.ports").value
        devices = figure(node.devices, f"{hardware}#reference_node.devices").value
    except QuantityError:
        return None
    words = (
        f"assumed: {node.scale_out} between nodes, {ports} ports per node of {devices} "
        f"devices (the reference node of {hardware}: {node.system}); name --inter-link "
        "to change. Cross-node transfers are priced from its measured receipts where one "
        "matches the size, rank count and accelerator, else at its line rate with its "
        "per-message latency, a tensor-parallel ring over every port of a node "
        "(cross_node_rails); an expert-parallel dispatch and combine cross it at its "
        "measured achieved rate where its record states one (--format json names each "
        "row's receipts)"
    )
    if per_node is not None and per_node != devices:
        words += f"; the question's nodes hold {per_node} devices, the reference node {devices}"
    return node.scale_out, words


NO_CONTEXT = (
    "no --context: each decode step is priced at a context of 1 token, the least state "
    "any context needs (the weights and one cached token per sequence); give --context "
    "IN/OUT for the prefill pass (TTFT) and the KV cache of a real request"
)


def compare(
    query: Query,
    options: Sequence[Option],
    excluded: Sequence[Excluded],
    notes: Sequence[str] = (),
) -> Plan:
    """Mark the Pareto fronts of the feasible options and order the options."""
    feasible = {o.name: o.values for o in options if o.status == "feasible"}
    available: dict[str, str | None] = {}
    for d in DIMENSIONS:
        has = any(v.get(d.key) is not None for v in feasible.values())
        available[d.key] = None if has or not feasible else UNAVAILABLE.get(d.key, "not priced")
        if not has and feasible and d.key not in UNAVAILABLE:
            available[d.key] = f"no feasible option has a {d.label}"
    dims = [d.key for d in DIMENSIONS if available[d.key] is None]
    fronts = pair_fronts(feasible, dims, {d.key: d.better for d in DIMENSIONS})
    marked = []
    for o in options:
        pairs = tuple(f"{a}/{b}" for (a, b), names in fronts if o.name in names)
        marked.append(replace(o, pareto=pairs))
    marked.sort(key=lambda o: (ORDER[o.status], o.placement.devices, o.placement))
    notes = list(notes)
    if query.concurrency:
        notes.append(
            f"--concurrency {query.batch} is priced as {query.batch} sequences in flight at "
            "every step (a static batch; arrivals and scheduling are not modelled)"
        )
    return Plan(
        query,
        tuple(marked),
        tuple(excluded),
        available,
        tuple((pair, tuple(names)) for pair, names in fronts),
        tuple(notes),
    )


def with_value(query: Query, parameter: str, value: int) -> Query:
    """The query with its batch or its decode context replaced (a sweep's point)."""
    if parameter == "batch":
        return replace(query, batch=value)
    if parameter == "context":
        return replace(query, context=value)
    raise PlanError(f"--sweep {parameter}: expected batch or context")


def model_facts(kb: Any, query: Query, root: Any) -> ModelFacts:
    """Check the ids the query names (PlanError with the closest id) and read the model."""
    named = [
        ("MODEL", query.model, "model"),
        ("--on", query.hardware, "accelerator"),
        ("--engine", query.engine, "engine"),
        ("--link", query.intra_link, "interconnect"),
        ("--inter-link", query.inter_link, "interconnect"),
    ]
    for what, record_id, kind in named:
        if record_id is not None:
            _known(kb, what, record_id, kind, root)
    record = kb.get(query.model)
    layers = record.get("geometry.layers")
    if isinstance(layers, bool) or not isinstance(layers, int) or layers < 1:
        raise PlanError(f"{query.model} states no geometry.layers (a positive whole number)")
    experts = record.get("geometry.experts") if record.get("architecture") == "moe" else None
    if experts is not None and (isinstance(experts, bool) or not isinstance(experts, int)):
        experts = None
    return ModelFacts(layers, experts)


def _known(kb: Any, what: str, record_id: str, kind: str, root: Any) -> None:
    from kb.suggest import did_you_mean

    record = kb.get(record_id)
    if record is not None and record.kind == kind:
        return
    ids = [r.id for r in kb.of_kind(kind)]
    hint = did_you_mean(record_id.removesuffix(".yaml"), ids, f"`kb list --kind {kind}` lists them")
    if record is None:
        raise PlanError(f"{what} {record_id!r}: no such record under {root}; {hint}")
    raise PlanError(f"{what} {record_id!r} is a {record.kind} record, not {kind}; {hint}")
