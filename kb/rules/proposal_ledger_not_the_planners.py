"""A proposal that crosses a memory, device or host boundary is judged by the planner's ledger.

Such a proposal names a composed placement (an envelope `workload`, options with
`degrees`) and the options it compares, its reference and its `candidate`; each of
them is one question `kb plan` asks (this model on these accelerators with these
degrees, this batch, context and engine). kb prices that question as the planner
does (kb.ledger.scenario) and checks that the placement's ledger is the planner's:
the same GiB per device, and the same T_useful, T_per_layer_overhead and T_exposed
rows, exactly. An option the planner cannot ask (devices that are not one group of
an accelerator record, a capacity or reserve typed by hand, a precision the planner
has no width for) is reported too, with the reason.

A proposal whose placement is hand-typed (an envelope with `state_bytes` and
`useful_work`, such as seed 000's parametric hosts) is not checked here: the planner
cannot price typed bytes, and LG002 and LG006-LG008 judge those placements.

Why: seed 000's last step: "require tuning proposals that cross a memory/device/host
boundary to include the resulting feasibility and tax ledger"; issue 36 asks that the
ledger be the planner's, so a proposal cannot compare options by figures of its own.

Bad (the candidate's HBM rate typed by hand, not the accelerator's):

    crosses: [device]
    placement: placements/p       # candidate tp2: useful: {rate: {value: 1000, unit: GB/s}}
    candidate: tp2

Good:

    crosses: [device]
    placement: placements/p       # candidate tp2: useful: {rate: "hardware/gpu#memory.bandwidth"}
    candidate: tp2
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from fractions import Fraction
from typing import Any

from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._base import found

READS = "ledger"
CODE = "LG011"
NAME = "proposal-ledger-not-the-planners"
SEVERITY = Severity.ERROR
HINT = (
    "state the options as `kb plan` prices them (one accelerator group, degrees, the "
    "accelerator's own rates, the planner's precisions), or compare with `kb plan "
    "MODEL --on ACCELERATOR` and adopt its figures"
)
BOUNDARIES = frozenset({"memory", "device", "host"})
ROWS = ("useful", "overhead", "exposed")
WIDTHS = {Fraction(2): "bf16", Fraction(1): "fp8", Fraction(1, 2): "int4"}


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    """A proposal or placement that fails its schema, or has gaps (LG004), is not checked."""
    proposals = kb.of_kind("proposal")
    if not proposals:  # nothing to check: the ledger's modules are not even imported
        return
    from kb.kinds import views
    from kb.ledger.analysis import analyze_spec
    from kb.ledger.inputs import PlacementSpec, resolve_placement

    checked = views(kb)
    for record in proposals:
        proposal = checked.proposal(record) if kb.in_focus(record) else None
        if proposal is None or not BOUNDARIES & set(proposal.crosses) or not proposal.placement:
            continue
        target = kb.get(proposal.placement)
        view = checked.placement(target) if target is not None else None
        if target is None or view is None or view.envelope.workload is None:
            continue  # LG002 or RF001 for a missing one; a hand-typed placement (above)
        spec = resolve_placement(target, kb)
        if not isinstance(spec, PlacementSpec) or spec.gaps:
            continue
        analysis = analyze_spec(spec)
        compared = {view.reference.name, proposal.candidate}
        for option, side in zip(view.options, analysis.sides, strict=True):
            if option.name not in compared:
                continue
            problem = _against_the_planner(kb, view, option, side, spec)
            if problem:
                yield found(
                    CODE,
                    SEVERITY,
                    record.path,
                    "/placement",
                    f"{view.id} option {option.name!r}: {problem}",
                    HINT,
                )


def _quantity_text(node: Any) -> str | None:
    """A stated latency as the planner takes it ("3 us"); None for a binding."""
    if isinstance(node, Mapping) and isinstance(node.get("value"), (int, float)):
        return f"{node['value']} {node['unit']}"
    return None


def scenario_of(view: Any, option: Any, spec: Any) -> tuple[dict[str, Any], bool] | str:
    """The planner's question for one option (and whether its links are all stated), or why not."""
    work, envelope = view.envelope.workload, spec.envelope.workload
    devices = option.devices
    if len(devices) != 1 or devices[0].hardware is None:
        return "its devices are not one group of an accelerator record, so kb plan cannot ask it"
    group = devices[0]
    if group.capacity is not None or group.reserve is not None:
        return "its devices state a capacity or reserve of their own, which kb plan does not"
    if option.degrees is None:
        return "it states no degrees"
    weight = WIDTHS.get(envelope.weight_bytes.value)
    kv = WIDTHS.get(envelope.kv_bytes.value)
    if weight is None or kv is None:
        return "its bytes per weight or per KV element are no precision kb plan prices"
    compute = option.compute_rate if isinstance(option.compute_rate, str) else ""
    if weight == "fp8" and compute.endswith("#compute.int8"):
        weight = "int8"
    deg = option.degrees
    tp_link, stage = option.tp_collective, option.stage_link
    scenario: dict[str, Any] = {
        "model": view.envelope.model,
        "hardware": group.hardware,
        "count": group.count or 1,
        "nodes": 1,
        "tp": deg.tp,
        "pp": deg.pp,
        "dp": deg.dp,
        "batch": view.envelope.batch,
        "context": work.context,
        "engine": work.engine,
        "overhead_fallback": work.overhead_fallback,
        "weight_precision": weight,
        "kv_precision": kv,
    }
    if work.request is not None:
        scenario["input_tokens"], scenario["output_tokens"] = work.request
    stated = True
    if tp_link is not None and deg.tp > 1:
        scenario["intra_link"] = tp_link.link
        scenario["collective_algorithm"] = tp_link.algorithm
        scenario["cuda_graphs"] = tp_link.cuda_graphs
        scenario["collective_receipt"] = tp_link.receipt
        scenario["intra_latency"] = _quantity_text(tp_link.link_latency)
        stated &= tp_link.link_latency is None or scenario["intra_latency"] is not None
    if stage is not None and deg.pp > 1:
        latency = _quantity_text(stage.link_latency)
        stated &= stage.link_latency is None or latency is not None
        if tp_link is not None and deg.tp > 1 and stage.link != tp_link.link:
            scenario.update(nodes=deg.pp, inter_link=stage.link, inter_latency=latency)
        else:
            scenario.update(intra_link=stage.link, intra_latency=latency)
    return scenario, stated


def _against_the_planner(kb: KnowledgeBase, view: Any, option: Any, side: Any, spec: Any) -> str:
    from kb.ledger.paging import gib
    from kb.ledger.quantities import amount
    from kb.ledger.scenario import Scenario, ScenarioError, evaluate

    asked = scenario_of(view, option, spec)
    if isinstance(asked, str):
        return f"not one of kb plan's options: {asked}"
    fields, stated = asked
    try:
        planned = evaluate([Scenario(**fields)], kb)[0]
    except ScenarioError as exc:
        return f"not one of kb plan's options: {exc}"
    name = _planner_name(fields)
    fit = side.feasibility
    need = max(d.state + d.reserve for d in fit.devices)
    if need != planned.need_per_device:
        return (
            f"needs {gib(need)} per device, but kb plan's {name} needs "
            f"{gib(planned.need_per_device)}: the feasibility is not the planner's"
        )
    if side.ledger is None or not planned.rows:
        return ""
    theirs = {row.name: Fraction(row.value) for row in planned.rows}
    for row in ROWS if stated else ROWS[:2]:
        mine = Fraction(side.ledger.row(row).value)
        if row in theirs and mine != theirs[row]:
            return (
                f"{row} row {amount(mine, 's')}, but kb plan's {name} prices it "
                f"{amount(theirs[row], 's')}: the ledger is not the planner's"
            )
    return ""


def _planner_name(fields: Mapping[str, Any]) -> str:
    from kb.plan.enumerate import Placement

    return Placement(fields["tp"], fields["pp"], 1, fields["dp"], fields["nodes"]).name
