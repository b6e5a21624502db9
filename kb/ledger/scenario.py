"""One question, priced by the composed ledger: a Scenario and its Outcome.

A *Scenario* is one question a reader brings: this model on these devices with
these degrees, this batch and these lengths, on this engine. kb prices it with the
same composed ledger `kb ledger` uses for a composed placement (docs/ledger.md, "A
composed placement"): `placement_data` synthesizes what a YAML placement would hold
(an envelope with a `workload`, one option with its `degrees`), under a synthetic id
`placements/scenario/...` that is never written to disk; the data is checked
against placement.schema.json, its typed view built (kb.kinds.placement), resolved
(kb.ledger.inputs.resolve_view) and analyzed (kb.ledger.analysis.analyze_spec). There
is no second pricing path: a Scenario equal to a placement's option gives that
option's figures exactly.

What the scenario fixes, and where each value comes from:

- bytes per weight and per KV element from the precision's format width
  (`PRECISION_BYTES`: bf16 2, fp8 and int8 1, int4 and fp4 a half; block scales of
  the 4-bit formats are not counted, except an engine's declared per-group scales,
  `weight_scale_bytes`: kb.ledger.group_scales); activations bf16 (2 B); two all-reduces per
  layer (Megatron-style tensor parallelism, seed 003); 2 FLOP per multiply-add;
- the HBM rate of every streamed read: `hardware#memory.bandwidth_achieved` (measured) where
  the accelerator states it, else `hardware#memory.bandwidth` (kb.ledger.hbm_rate, declared
  `hbm_streamed_rate`), and the compute rate of the matmul
  format (fp8, int8 or fp4 when the accelerator states it and the weights are in
  it; bf16 otherwise): the measured one where a receipt of pattern `matmul` has a
  row naming this accelerator (`hardware`), the format (`precision`) and the metric
  "maximum achievable matmul throughput" (`measured_matmul_rate`; the first such
  receipt by id), else the datasheet peak `hardware#compute.<format>`, which the
  Outcome says (`compute_rate_peak`); `peak_compute` asks for the peak always;
- the prefill pass's matmuls from a per-layer matmul-time curve of the scenario's model,
  accelerator, tp and 16-bit weights where a `matmul` receipt has one
  (`prefill_matmul_receipt`, kb/ledger/prefill.py), else at that compute rate; and the
  pass's and every decode step's non-matmul kernels from a per-layer kernel-time curve of
  the model, accelerator and tp where a `memory-stream` receipt has one (`prefill_kernels_of`,
  kb/ledger/kernels.py);
- the devices: `count` of `hardware` in `nodes` equal nodes; tensor parallel is the
  innermost group, then pipeline stages, then data-parallel replicas, and no group
  straddles a node unevenly. A TP group or a pipeline boundary that spans nodes runs
  over `inter_link`, which must be named (TP across nodes is never assumed); inside a
  node over `intra_link`, by default the accelerator's own scale-up link (else its
  host link). When any stage boundary crosses nodes, every stage send is priced over
  `inter_link` (one stage link per placement: an upper bound when some stay inside);
- the all-reduces' implementation: `collective_algorithm`, `cuda_graphs` and
  `collective_receipt` when given; with `stock_collective`, the curves that state no
  algorithm (nccl-tests, rccl-tests); else the engine's collective algorithm (custom,
  when the engine record names its receipts) and its CUDA-graphs state when it is
  `used` or `not-used`; a TP group across nodes runs at the line rate over every NIC of a
  node (`rails`, kb.ledger.rails, declared `cross_node_rails`): the accelerator's reference
  node's ports when `inter_link` is that node's network, else one port, said on the row;
- the per-layer overhead: the engine's calibrated value, else `overhead_fallback`'s,
  shown as an estimate (kb.ledger.workload), else none, said on the row;
- a link latency only where a scenario states one (`intra_latency`, `inter_latency`,
  e.g. "5 us", `basis: unverified`): a transfer no receipt prices and whose link
  states no latency is a problem, not a guess.

Errors in the question itself (an unknown id, a record of another kind, degrees that
do not multiply to the count, a TP group across nodes with no `inter_link`, a
non-positive size) raise `ScenarioError` in kb's words; inputs kb cannot price (a
gap of the composed ledger) are the Outcome's `problems`, and the figures they block
are None.

Expert parallelism (ep > 1, an MoE model): the routed experts over ep of the tp*dp
ranks of a stage and the dispatch/combine of every MoE layer, priced by
kb.ledger.expert from flops/moe-ep-nvlink-rdma-decode (same-node copies over the
intra-node link, the others over `inter_link` when an expert-parallel group spans
nodes).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from kb.ledger.expert import EP_BASE, EP_CLASS
from kb.ledger.hbm_rate import streamed_rate
from kb.ledger.kernels import prefill_kernels_receipt
from kb.ledger.matmul_rates import matmul_receipts, measured_matmul_rate, scanned
from kb.ledger.parts import MOE_CLASS, TP_CLASS
from kb.ledger.workload import ENERGY_CLASS, KV_CLASS, RIDGE_CLASS, WEIGHT_CLASS
from kb.model import KnowledgeBase, Record

if TYPE_CHECKING:
    from kb.ledger.ledger import Ledger
    from kb.ledger.request import Request

SCENARIO_PREFIX = "placements/scenario/"

# Bytes per element of each format: its width (bf16 16 bits, fp8/int8 8, int4/fp4 4).
PRECISION_BYTES: dict[str, Fraction] = {
    "bf16": Fraction(2),
    "fp16": Fraction(2),
    "fp8": Fraction(1),
    "int8": Fraction(1),
    "int4": Fraction(1, 2),
    "fp4": Fraction(1, 2),
}
# Formats whose weights run their matmuls at the accelerator's own rate for the format
# (when it states one); int4 and the rest are weight-only formats computed in bf16.
COMPUTE_FORMATS = ("fp8", "int8", "fp4")
FORMAT_SOURCE = "sources/jax-scaling-book-inference"
MOE_RATE_SOURCE = "sources/trtllm-performance-doc-v0.9.0"  # the page its calibration rows quote
TP_SOURCE = "sources/seed-003-tp-crossover"


class ScenarioError(ValueError):
    """A question kb cannot ask: the message says what is wrong, in kb's words."""


@dataclass(frozen=True)
class Scenario:
    """One question: a model on devices with degrees, a batch and lengths, an engine."""

    model: str  # "models/llama-3.1-70b"
    hardware: str  # "hardware/nvidia-h100-sxm"
    count: int  # devices in total
    nodes: int = 1
    tp: int = 1
    pp: int = 1
    ep: int = 1
    dp: int = 1
    batch: int = 1  # sequences in flight (the whole system)
    input_tokens: int | None = None  # prompt length (TTFT); None: decode step only
    output_tokens: int | None = None
    context: int | None = None  # KV context of the decode step (default: input + output)
    engine: str | None = None  # "engines/vllm"
    weight_precision: str = "bf16"  # bf16 | fp8 | int8 | int4 | fp4
    kv_precision: str = "bf16"
    intra_link: str | None = None  # interconnect id inside a node (default: the device's own)
    inter_link: str | None = None  # between nodes
    # beyond the shared contract, each optional:
    collective_algorithm: str | None = None  # ring | tree | nvls | one-shot | two-shot | custom
    cuda_graphs: bool | None = None  # the all-reduce curves' CUDA-graphs state
    collective_receipt: str | None = None  # price the all-reduces from this receipt only
    stock_collective: bool = False  # price all-reduces by curves stating no algorithm (NCCL/RCCL)
    overhead_fallback: str | None = None  # an engine whose per-layer overhead stands in
    intra_latency: str | None = None  # "3 us": per-message latency inside a node (stated)
    inter_latency: str | None = None  # between nodes
    peak_compute: bool = False  # the datasheet peak even where a matmul rate was measured
    kv_read_per_query_head: bool = False  # decode attention reads the KV cache per query head
    moe_expert_rate: Fraction | None = None  # TFLOP/s of an engine version's MoE expert matmuls
    weight_scale_bytes: Fraction | None = None  # per-group scales read with each weight, B
    attention_sixteen_bit: bool = False  # the prompt's attention runs 16-bit despite an 8-bit cache
    moe_tp: int = 1  # the routed experts tensor-parallel under attention DP (tp 1, no ep)
    dense_experts: bool = False  # every expert runs on every token (kb.ledger.dense_experts)


@dataclass(frozen=True)
class Outcome:
    """What the composed ledger says about one Scenario."""

    scenario: Scenario
    fits: bool
    need_per_device: Fraction  # bytes
    have_per_device: Fraction  # bytes
    max_batch: int | None  # headroom at this context (None if not fits)
    max_context: int | None  # headroom at this batch
    ttft: Fraction | None  # seconds
    tpot: Fraction | None  # seconds (the decode step)
    latency: Fraction | None  # request latency, seconds
    tokens_per_s_system: Fraction | None
    tokens_per_s_per_device: Fraction | None
    energy_per_token: Fraction | None  # joules, None until the ledger has energy
    exposed_share: Fraction | None  # exposed communication / step
    rows: tuple[Any, ...]  # the ledger rows with their provenance (kb.ledger types)
    provenance: str  # "measured" | "estimated" | "unverified"
    problems: tuple[str, ...]  # why something could not be priced, in kb's words
    pricing: tuple[str, ...] = ()  # how each collective (decode and prefill) was priced
    request: Request | None = None  # the option's request (its parts), when it was priced


def evaluate(scenarios: Sequence[Scenario], kb: KnowledgeBase) -> tuple[Outcome, ...]:
    """Price each scenario with the composed ledger (ScenarioError on a malformed one)."""
    return tuple(outcome(s, kb) for s in scenarios)


def outcome(scenario: Scenario, kb: KnowledgeBase) -> Outcome:
    """Price one scenario: feasibility, then (if it fits) the ledger and the request.

    A frozen knowledge base keeps the Outcome in the run's evaluation memo
    (kb.equations.evalmemo `derived`, under the scenario's model record): an Outcome is
    immutable and a pure function of the scenario and the records, and the rows of
    `kb list --end-to-end` ask ~40% of theirs again (tests/ledger/test_scenario_memo.py
    holds the kept answer equal to a fresh one).
    """
    from kb.equations.evalmemo import Unkeyable, evaluations, frozen

    memo, model = evaluations(kb), kb.records.get(scenario.model)
    if memo is None or model is None:
        return _outcome(scenario, kb)
    try:
        question = ("scenario outcome", frozen(scenario))
    except Unkeyable:
        return _outcome(scenario, kb)
    return memo.derived(model, question, lambda: _outcome(scenario, kb))


def _outcome(scenario: Scenario, kb: KnowledgeBase) -> Outcome:
    """`outcome`, computed."""
    from kb.kinds.placement import placement
    from kb.ledger.analysis import analyze_spec
    from kb.ledger.feasibility import feasibility
    from kb.ledger.inputs import Unresolved, resolve_view

    record = scenario_record(scenario, kb)
    spec = resolve_view(placement(record), record, kb)
    problems: list[str] = []
    priced = True
    if isinstance(spec, Unresolved) or spec.gaps:
        for gap in spec.gaps:  # one line per cause (a decode and a prefill transfer share one)
            line = f"{gap.pointer}: {gap.message}"
            if line not in problems:
                problems.append(line)
        # Feasibility reads no link: ask it of a copy whose links state a latency that no
        # time is ever read from, so a question kb cannot price still learns whether it fits.
        probe = _feasibility_probe(record)
        spec = resolve_view(placement(probe), probe, kb)
        if isinstance(spec, Unresolved) or spec.gaps:
            return _unpriced(scenario, tuple(problems))
        priced = False
    # An unpriced scenario reads only its feasibility: no ledger or request is computed for it.
    analysis = analyze_spec(spec) if priced else None
    fit = analysis.sides[0].feasibility if analysis else feasibility(spec.envelope, spec.reference)
    need = max(d.state + d.reserve for d in fit.devices)
    have = min(d.capacity for d in fit.devices)
    if not fit.feasible:
        problems.extend(fit.shortfalls())
    base = dict(
        scenario=scenario,
        fits=fit.feasible,
        need_per_device=need,
        have_per_device=have,
        max_batch=min_or_none(d.max_batch for d in fit.devices) if fit.feasible else None,
        max_context=min_or_none(d.max_context for d in fit.devices) if fit.feasible else None,
        energy_per_token=None,
    )
    ledger = analysis.sides[0].ledger if analysis else None
    if analysis is None or ledger is None:
        return Outcome(
            **base,  # type: ignore[arg-type]
            ttft=None,
            tpot=None,
            latency=None,
            tokens_per_s_system=None,
            tokens_per_s_per_device=None,
            exposed_share=None,
            rows=(),
            provenance="estimated",
            problems=tuple(problems),
        )
    tpot = Fraction(ledger.total)
    request = analysis.requests[0] if analysis.requests else None
    ttft = request.ttft if request is not None else None
    latency = request.latency if request is not None and scenario.output_tokens else None
    if latency is not None and scenario.output_tokens:
        system = Fraction(scenario.batch * scenario.output_tokens) / latency
    else:
        system = Fraction(scenario.batch) / tpot
    exposed = Fraction(ledger.row("exposed").value)
    states = {row.provenance for row in ledger.rows if row.provenance != "none"}
    if request is not None:
        states.add(request.provenance)
    return Outcome(
        **{**base, "energy_per_token": _energy(ledger, request)},  # type: ignore[arg-type]
        ttft=ttft,
        tpot=tpot,
        latency=latency,
        tokens_per_s_system=system,
        tokens_per_s_per_device=system / scenario.count,
        exposed_share=exposed / tpot if tpot else None,
        rows=ledger.rows,
        provenance=_provenance(states),
        problems=tuple(problems),
        pricing=tuple(t.pricing for t in ledger.transfers)
        + (request.pricing if request is not None else ()),
        request=request,
    )


def _energy(ledger: Ledger, request: Request | None) -> Fraction | None:
    """J per output token, at the devices' power (flops/serving-energy-cost-per-token).

    Over the whole request (prefill included) when the request is priced, else over
    the decode step.
    """
    if request is not None and request.energy_per_token is not None:
        return request.energy_per_token
    if ledger.energy is not None and ledger.energy.value is not None:
        return Fraction(ledger.energy.value)
    return None


PROBE_LATENCY = {
    "value": 0,
    "unit": "s",
    "basis": "unverified",
    "note": "feasibility only: no time is read from this copy",
}


def _feasibility_probe(record: Record) -> Record:
    """The scenario's placement with a latency on every link: for its feasibility alone."""
    option = dict(record.data["reference"])
    for key in ("tp_collective", "stage_link", "moe_collective"):
        if key in option:
            option[key] = {**option[key], "link_latency": PROBE_LATENCY}
    data = {**record.data, "reference": option}
    return Record(record.id, record.kind, record.path, data)


def min_or_none(values: Any) -> int | None:
    """The smallest of the values that are known, else None."""
    known = [v for v in values if v is not None]
    return min(known) if known else None


def _provenance(states: set[str]) -> str:
    if "unverified" in states:
        return "unverified"
    if states and states <= {"measured"}:
        return "measured"
    return "estimated"


def _unpriced(scenario: Scenario, problems: tuple[str, ...]) -> Outcome:
    """An outcome kb could not resolve: nothing is known, and `problems` says why."""
    return Outcome(
        scenario,
        False,
        Fraction(0),
        Fraction(0),
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        (),
        "unverified",
        problems,
    )


# ---- the question, checked, then written as a placement --------------------------------


def _positive(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ScenarioError(f"{name} = {value!r}: expected a whole number, at least 1")


def _record_of(kb: KnowledgeBase, record_id: Any, kind: str, what: str) -> Record:
    """The schema-valid record `record_id` of `kind`, or a ScenarioError naming the trouble."""
    from kb.kinds import views

    if not isinstance(record_id, str) or not record_id:
        raise ScenarioError(f"{what}: expected a record id, got {record_id!r}")
    record = kb.get(record_id)
    if record is None:
        why = "cannot be read" if kb.exists(record_id) else "is not in the tree"
        raise ScenarioError(f"{what} {record_id}: the record {why}")
    if record.kind != kind:
        article = "an" if kind[0] in "aeiou" else "a"
        raise ScenarioError(f"{what} {record_id} is a {record.kind} record, not {article} {kind}")
    if not views(kb).passed(record):
        raise ScenarioError(f"{what} {record_id} fails its schema (its own finding says why)")
    return record


def _check(s: Scenario, kb: KnowledgeBase) -> None:
    """Refuse a malformed question before anything is priced."""
    for name in ("count", "nodes", "tp", "pp", "ep", "dp", "batch", "moe_tp"):
        _positive(name, getattr(s, name))
    for name in ("input_tokens", "output_tokens", "context"):
        if getattr(s, name) is not None:
            _positive(name, getattr(s, name))
    if s.weight_scale_bytes is not None and s.weight_scale_bytes < 0:
        raise ScenarioError(f"weight_scale_bytes = {s.weight_scale_bytes}: must not be negative")
    for name in ("weight_precision", "kv_precision"):
        if getattr(s, name) not in PRECISION_BYTES:
            raise ScenarioError(
                f"{name} = {getattr(s, name)!r}: expected one of {', '.join(PRECISION_BYTES)}"
            )
    if s.tp * s.pp * s.dp != s.count:
        raise ScenarioError(
            f"tp*pp*dp = {s.tp}*{s.pp}*{s.dp} = {s.tp * s.pp * s.dp}, but the scenario has "
            f"{s.count} devices"
        )
    if (s.tp * s.dp) % s.ep:
        raise ScenarioError(
            f"ep = {s.ep} does not divide the tp*dp = {s.tp * s.dp} ranks its experts spread over"
        )
    if s.count % s.nodes:
        raise ScenarioError(f"{s.count} devices do not split evenly over {s.nodes} nodes")
    model = kb.get(s.model)
    if s.ep > 1 and model is not None and model.get("architecture") != "moe":
        raise ScenarioError(
            f"ep = {s.ep}: {s.model} is dense; expert parallelism applies only to a "
            "mixture-of-experts model"
        )
    if s.batch % s.dp:
        raise ScenarioError(f"the batch {s.batch} does not split evenly over dp = {s.dp} replicas")
    if s.moe_tp > 1:
        _check_moe_tp(s, model)
    per_node = s.count // s.nodes
    if s.tp > per_node and s.tp % per_node:
        raise ScenarioError(
            f"tp = {s.tp} spans nodes of {per_node} devices unevenly (a multiple of "
            f"{per_node} or at most {per_node})"
        )
    if s.tp <= per_node and per_node % s.tp:
        raise ScenarioError(
            f"tp = {s.tp} does not divide the {per_node} devices of a node: a tensor-parallel "
            "group would straddle two nodes"
        )
    if s.tp * s.pp < per_node and per_node % (s.tp * s.pp):
        raise ScenarioError(
            f"tp*pp = {s.tp * s.pp} does not divide the {per_node} devices of a node: a "
            "replica would straddle two nodes"
        )
    if s.inter_link is None and _crossing(s):
        raise ScenarioError(
            f"{_crossing(s)} spans the {s.nodes} nodes ({per_node} devices each): name "
            "inter_link, the interconnect between them (TP or PP across nodes is never assumed)"
        )
    if context_of(s) is None:
        raise ScenarioError("no context: give context, or input_tokens (and output_tokens)")
    _record_of(kb, s.model, "model", "model")
    _record_of(kb, s.hardware, "accelerator", "hardware")
    for what in ("engine", "overhead_fallback"):
        if getattr(s, what) is not None:
            _record_of(kb, getattr(s, what), "engine", what)
    for what in ("intra_link", "inter_link"):
        if getattr(s, what) is not None:
            _record_of(kb, getattr(s, what), "interconnect", what)
    if s.collective_receipt is not None:
        _record_of(kb, s.collective_receipt, "receipt", "collective_receipt")
    for what in ("intra_latency", "inter_latency"):
        if getattr(s, what) is not None:
            _latency_node(getattr(s, what), what)


def _check_moe_tp(s: Scenario, model: Record | None) -> None:
    """Experts tensor-parallel under attention DP: an MoE model, tp 1, no ep, in a node."""
    if model is None or model.get("architecture") != "moe":
        raise ScenarioError(f"moe_tp = {s.moe_tp}: {s.model} is not a mixture-of-experts model")
    if s.tp != 1 or s.ep != 1 or s.dp % s.moe_tp:
        raise ScenarioError(
            f"moe_tp = {s.moe_tp} splits the experts under attention data parallelism: it needs "
            f"tp 1, no ep, and dp a multiple of it (tp {s.tp}, ep {s.ep}, dp {s.dp})"
        )
    if s.moe_tp > s.count // s.nodes:
        raise ScenarioError(
            f"moe_tp = {s.moe_tp} spans nodes of {s.count // s.nodes} devices: kb prices the "
            "experts' gather and scatter inside one node only"
        )


def _crossing(s: Scenario) -> str:
    """Which group crosses a node boundary: '' when only data-parallel replicas do."""
    per_node = s.count // s.nodes if s.nodes and s.count % s.nodes == 0 else s.count
    if s.nodes == 1:
        return ""
    if s.tp > per_node:
        return f"tp = {s.tp}"
    if s.pp > 1 and s.tp * s.pp > per_node:
        return f"pp = {s.pp}"
    return ""


def context_of(s: Scenario) -> int | None:
    """The decode step's KV context: as given, else input + output tokens."""
    if s.context is not None:
        return s.context
    if s.input_tokens is None:
        return None
    return s.input_tokens + (s.output_tokens or 0)


_LATENCY = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([A-Za-zµ/]+)\s*$")


def _latency_node(text: Any, what: str) -> dict[str, Any]:
    """A stated latency ("5 us") as an unverified quantity a placement would hold."""
    from kb.ledger.quantities import QuantityError, unit_scale

    found = _LATENCY.match(text) if isinstance(text, str) else None
    if found is None:
        raise ScenarioError(f"{what} = {text!r}: expected a time such as '5 us'")
    number, unit = found.groups()
    try:
        _, dim = unit_scale(unit)
    except QuantityError as exc:
        raise ScenarioError(f"{what} = {text!r}: {exc}") from None
    if dim != "s":
        raise ScenarioError(f"{what} = {text!r}: a time is expected, not {dim}")
    value: int | float = int(number) if number.isdigit() else float(number)
    return {
        "value": value,
        "unit": unit,
        "basis": "unverified",
        "note": "stated by the scenario",
    }


def _figure(value: Fraction, unit: str, note: str, source: str = FORMAT_SOURCE) -> dict[str, Any]:
    number: int | float = int(value) if value.denominator == 1 else float(value)
    return {"value": number, "unit": unit, "basis": "derived", "source": source, "note": note}


def _slug(s: Scenario) -> str:
    def tail(record_id: str) -> str:
        return record_id.rsplit("/", 1)[-1].lower()

    parts = [
        tail(s.model),
        f"{s.count}x-{tail(s.hardware)}",
        f"n{s.nodes}-tp{s.tp}-pp{s.pp}-ep{s.ep}-dp{s.dp}"
        + (f"-moetp{s.moe_tp}" if s.moe_tp > 1 else ""),
        f"b{s.batch}-c{context_of(s)}",
        f"{s.weight_precision}-{s.kv_precision}",
    ]
    if s.engine:
        parts.append(tail(s.engine))
    if s.kv_read_per_query_head:
        parts.append("kv-per-query-head")
    if s.dense_experts:
        parts.append("dense-experts")
    if s.attention_sixteen_bit:
        parts.append("attn-16")
    if s.moe_expert_rate is not None:
        parts.append(f"moe-rate-{float(s.moe_expert_rate):g}")
    if s.weight_scale_bytes:
        parts.append(f"wscale-{float(s.weight_scale_bytes):g}")
    text = "-".join(parts)
    return re.sub(r"[^a-z0-9._-]+", "-", text).strip("-.") or "scenario"


def scenario_id(s: Scenario) -> str:
    """The synthetic placement id of a scenario (never a file)."""
    return SCENARIO_PREFIX + _slug(s)


def _compute_field(s: Scenario, kb: KnowledgeBase) -> str:
    from kb.kinds import views

    record = kb.get(s.hardware)
    view = views(kb).accelerator(record) if record is not None else None
    compute = view.compute if view is not None else {}
    if s.weight_precision in COMPUTE_FORMATS and s.weight_precision in compute:
        return s.weight_precision
    return "bf16"


def compute_rate(s: Scenario, kb: KnowledgeBase) -> str:
    """The scenario's matmul rate: measured where a receipt states it, else the peak."""
    field = _compute_field(s, kb)
    measured = None if s.peak_compute else measured_matmul_rate(kb, s.hardware, field)
    return measured if measured is not None else f"{s.hardware}#compute.{field}"


def prefill_matmul_receipt(s: Scenario, kb: KnowledgeBase) -> str | None:
    """The first receipt (by id) with a per-layer matmul-time curve of this case, or None.

    Its rows must name the scenario's model, accelerator, tp degree and 16-bit weights
    (kb.ledger.prefill.curve_rows); the prefill pass is then priced from it.
    """
    from kb.ledger.prefill import curve_rows

    if s.peak_compute or s.input_tokens is None:
        return None

    def scan() -> str | None:
        for record in matmul_receipts(kb):
            if curve_rows(record, s.model, s.hardware, s.tp, s.weight_precision):
                return record.id
        return None

    return scanned(kb, ("curve", s.model, s.hardware, str(s.tp), s.weight_precision), scan)


def prefill_kernels_of(s: Scenario, kb: KnowledgeBase) -> str | None:
    """The receipt of the prefill's non-matmul kernel times for this case, or None.

    kb/data/end-to-end.json `prefill_kernels`: rows of the scenario's model, accelerator
    and tp (kb.ledger.kernels), whatever the weights' format, for the prompt (with one)
    and every decode step (`decode_kernels`); not when the scenario asks for the class's
    roofline at the peak (`peak_compute`), which keeps no measured per-layer time (as
    `prefill_matmul_receipt`).
    """
    if s.peak_compute:
        return None
    return prefill_kernels_receipt(kb, s.model, s.hardware, s.tp)


def compute_rate_peak(s: Scenario, kb: KnowledgeBase) -> bool:
    """True when the scenario's matmuls are priced at the datasheet peak."""
    return compute_rate(s, kb).startswith(f"{s.hardware}#compute.")


def _intra_link(s: Scenario, kb: KnowledgeBase) -> str:
    if s.intra_link is not None:
        return s.intra_link
    from kb.kinds import views

    record = kb.get(s.hardware)
    view = views(kb).accelerator(record) if record is not None else None
    links = view.interconnects() if view is not None else ()
    if not links:
        raise ScenarioError(f"{s.hardware} names no interconnect: give intra_link")
    return links[0]


def _engine_collective(s: Scenario, kb: KnowledgeBase) -> tuple[str | None, bool | None]:
    """The engine's all-reduce algorithm and CUDA-graphs state, unless the scenario states them."""
    from kb.kinds import views

    algorithm, graphs = s.collective_algorithm, s.cuda_graphs
    if s.stock_collective:
        return None, graphs
    if s.engine is None:
        return algorithm, graphs
    record = kb.get(s.engine)
    view = views(kb).engine(record) if record is not None else None
    if view is None:
        return algorithm, graphs
    if algorithm is None and view.collective_receipts:
        algorithm = record.get("collective.algorithm") if record is not None else None
    if graphs is None:
        graphs = {"used": True, "not-used": False}.get(view.cuda_graphs or "")
    return algorithm, graphs


def _collective(
    s: Scenario, kb: KnowledgeBase, link: str, latency: str | None, pin: bool
) -> dict[str, Any]:
    algorithm, graphs = _engine_collective(s, kb)
    node: dict[str, Any] = {"link": link}
    if algorithm is not None:
        node["algorithm"] = algorithm
    if graphs is not None:
        node["cuda_graphs"] = graphs
    if pin and s.collective_receipt is not None:
        node["receipt"] = s.collective_receipt
    if latency is not None:
        node["link_latency"] = _latency_node(latency, "latency")
    return node


def _rails(s: Scenario, kb: KnowledgeBase, per_node: int, intra: str) -> dict[str, Any]:
    """A TP group across nodes: its ranks a node and, where known, the node's NICs."""
    node: dict[str, Any] = {"ranks_per_node": per_node, "intra_link": intra}
    from kb.ledger.rails import reference_nics

    nics = reference_nics(kb, s.hardware, s.inter_link)
    if nics is not None:
        node["nics_per_node"] = nics
    return node


def _degrees(s: Scenario) -> dict[str, int]:
    """The option's degrees: tp, pp, dp, and ep and moe_tp where above one."""
    extra = {name: getattr(s, name) for name in ("ep", "moe_tp") if getattr(s, name) > 1}
    return {"tp": s.tp, "pp": s.pp, "dp": s.dp, **extra}


def placement_data(s: Scenario, kb: KnowledgeBase) -> dict[str, Any]:
    """The placement a YAML file would hold for this scenario (checked first).

    Only its id and `envelope.batch` read the batch: the workload and the option (what
    the question's records give: rates, receipts, links) are the mapping's, kept for the
    run (`_mapping_data`) and shared by the records of its batches, which never change them.
    """
    _check(s, kb)
    workload, option = _mapping_data(s, kb)
    return {
        "kind": "placement",
        "id": scenario_id(s),
        "title": "A scenario (synthesized, never written)",
        "version": 1,
        "status": "draft",
        "history": [{"version": 1, "date": "2026-12-06", "change": "Synthesized."}],
        "envelope": {
            "model": s.model,
            "precision": s.weight_precision,
            "quality": "as the scenario states",
            "batch": s.batch,
            "workload": workload,
        },
        "reference": option,
        "candidates": [],
    }


def _mapping_data(s: Scenario, kb: KnowledgeBase) -> tuple[dict[str, Any], dict[str, Any]]:
    """The scenario's workload and option, which read no batch: kept per mapping for the run.

    A planner's pass asks every mapping at each batch of its menus; a frozen knowledge
    base keeps these in the run's evaluation memo (kb.equations.evalmemo
    `Evaluations.derived`, under the model record, keyed by the scenario with its batch
    set aside), so each batch's record reads the question's records once per mapping.
    tests/plan/test_mapping_data.py holds the kept data equal to a fresh build.
    """
    from kb.equations.evalmemo import Unkeyable, evaluations, frozen

    memo, model = evaluations(kb), kb.records.get(s.model)
    if memo is None or model is None:
        return _batch_free_data(s, kb)
    try:
        question = ("scenario mapping", frozen(replace(s, batch=1)))
    except Unkeyable:
        return _batch_free_data(s, kb)
    return memo.derived(model, question, lambda: _batch_free_data(s, kb))


def _batch_free_data(s: Scenario, kb: KnowledgeBase) -> tuple[dict[str, Any], dict[str, Any]]:
    """`_mapping_data`, built: the envelope's workload and the reference option."""
    model = kb.get(s.model)
    moe = model is not None and model.get("architecture") == "moe"
    composed = [WEIGHT_CLASS, KV_CLASS, TP_CLASS, RIDGE_CLASS] + ([MOE_CLASS] if moe else [])
    hardware = kb.get(s.hardware)
    if hardware is not None and "power" in hardware.data:
        composed.append(ENERGY_CLASS)  # the energy per token at the accelerator's power figure
    if s.ep > 1:
        composed += [EP_CLASS, EP_BASE]
    w_b, kv_b = PRECISION_BYTES[s.weight_precision], PRECISION_BYTES[s.kv_precision]
    w_note = f"{s.weight_precision} weights: the format's width"
    if s.weight_scale_bytes:  # declared: weight_group_scales (kb.ledger.group_scales)
        w_b += s.weight_scale_bytes
        w_note += f" + {s.weight_scale_bytes} B of per-group scales (weight_group_scales)"
    workload: dict[str, Any] = {
        "composed_from": composed,
        "context": context_of(s),
        "weight_bytes": _figure(w_b, "B", w_note),
        "kv_bytes": _figure(kv_b, "B", f"a {s.kv_precision} KV cache: the format's width"),
        "activation_bytes": _figure(Fraction(2), "B", "bf16 activations"),
        "all_reduces_per_layer": _figure(
            Fraction(2), "1", "Megatron-style: after attention and after the MLP", TP_SOURCE
        ),
        "flop_per_mac": _figure(Fraction(2), "FLOP", "one multiply and one add"),
    }
    if s.engine is not None:
        workload["engine"] = s.engine
    if s.overhead_fallback is not None:
        workload["overhead_fallback"] = s.overhead_fallback
    prefill = prefill_matmul_receipt(s, kb)
    if prefill is not None:
        workload["prefill_matmul"] = prefill
    kernels = prefill_kernels_of(s, kb)
    if kernels is not None:  # declared: prefill_kernels (kb.ledger.kernels)
        workload["prefill_kernels"] = kernels
    if s.kv_read_per_query_head:
        workload["kv_read_per_query_head"] = True
    if s.dense_experts:
        workload["dense_experts"] = True
    if s.attention_sixteen_bit:
        workload["attention_sixteen_bit"] = True
    if s.moe_expert_rate is not None:
        workload["moe_expert_rate"] = _figure(
            s.moe_expert_rate,
            "TFLOP/s",
            "the engine version's MoE expert matmul rate, fitted (kb/data/end-to-end.json "
            "moe_expert_rate)",
            MOE_RATE_SOURCE,
        )
    if s.input_tokens is not None:
        workload["request"] = {
            "input_tokens": s.input_tokens,
            "output_tokens": s.output_tokens or 1,
        }
    per_node = s.count // s.nodes
    intra = _intra_link(s, kb)
    tp_across = s.nodes > 1 and s.tp > per_node
    pp_across = s.nodes > 1 and s.pp > 1 and s.tp * s.pp > per_node
    option: dict[str, Any] = {
        "name": "scenario",
        "devices": [{"name": "device", "hardware": s.hardware, "count": s.count}],
        "degrees": _degrees(s),
        "useful": {
            "rate": streamed_rate(kb, s.hardware)[0],  # declared: hbm_streamed_rate
            "compute_rate": compute_rate(s, kb),
        },
    }
    if s.tp > 1:
        link = s.inter_link if tp_across else intra
        latency = s.inter_latency if tp_across else s.intra_latency
        assert link is not None  # _check: a TP group across nodes names inter_link
        option["tp_collective"] = _collective(s, kb, link, latency, pin=not tp_across)
        if tp_across:  # declared: cross_node_rails (kb.ledger.rails)
            option["tp_collective"]["rails"] = _rails(s, kb, per_node, intra)
    if s.moe_tp > 1:  # the MoE gather and scatter: the stock library's curves (none stated)
        option["moe_collective"] = {"link": intra}
        if s.intra_latency is not None:
            option["moe_collective"]["link_latency"] = _latency_node(s.intra_latency, "latency")
    if s.ep > 1:  # the dispatch/combine: same-node copies over intra, the others over inter
        option["ep_collective"] = {
            "link": intra,
            "ranks_per_node": per_node,
            **({"inter_link": s.inter_link} if s.inter_link is not None else {}),
        }
    if s.pp > 1:
        link = s.inter_link if pp_across else intra
        latency = s.inter_latency if pp_across else s.intra_latency
        assert link is not None
        stage: dict[str, Any] = {"link": link}
        if latency is not None:
            stage["link_latency"] = _latency_node(latency, "latency")
        option["stage_link"] = stage
    return workload, option


def scenario_record(s: Scenario, kb: KnowledgeBase) -> Record:
    """The in-memory placement record of a scenario, schema-checked (never written)."""
    from kb.schema import validate_record

    data = placement_data(s, kb)
    path = data["id"] + ".yaml"
    # the schema wants a candidate: check a copy with the option twice, price the one
    probe = Record(data["id"], "placement", path, {**data, "candidates": [data["reference"]]})
    problems = [p.message for p in validate_record(probe)]
    if problems:
        raise ScenarioError(
            f"the scenario does not make a valid placement: {'; '.join(problems[:3])}"
        )
    return Record(data["id"], "placement", path, data)
