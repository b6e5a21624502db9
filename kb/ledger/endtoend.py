"""The composed ledger held to every end-to-end receipt row (issue 35 item 6).

Each result row of a receipt with `pattern: end-to-end` states the conditions it was
measured under (model, accelerator, devices and nodes, tp/pp/ep/dp, batch or
concurrency, input and output tokens, precision, CUDA graphs), what its value is
(`measures`: tpot, ttft, request_latency, decode_tokens_per_s, output_tokens_per_s,
output_tokens_per_s_per_gpu) and, through the receipt's `engine.record`, the engine.
kb turns the row into a Scenario (kb.ledger.scenario) and prices it with the composed
ledger: no prediction is typed per row.

The band and every assumption are declared once, before any row was priced, in
kb/data/end-to-end.json, each with its reason: the band (±25%), the context a
request's decode step is priced at (the mean, input + output/2), the precision and KV
format of a row that states none (16-bit), one node up to eight devices, concurrency
as the decode batch, which engine's per-layer overhead an engine without its own
borrows (by the row's CUDA-graphs state; shown as an estimate), and that a row under
graphs whose all-reduces fall to the stock curves (timed outside graphs) is priced by
them as an upper bound.

Each row gets one state:

- `validated`: |predicted - measured| / measured within the band;
- `contradicted`: outside it (a miss is shown as a miss, never a finding), or kb finds
  that a configuration which was measured does not fit;
- `not evaluable`: with the reason (a condition the source does not state, a metric the
  composition does not predict, a scenario kb cannot price, in kb's words);
- `calibration`: a row of a receipt an engine's per-layer or per-sequence overhead was
  fitted to (records/engines/*.yaml `per_layer_overhead.calibration`,
  `per_sequence_overhead.calibration`): its prediction is shown,
  but it never validates (as EQ019 holds for claims);
- `undetermined`: a row whose source states its devices but not its layout, priced under
  every layout the planner and the engine admit (kb.ledger.layouts, declared:
  `unstated_layout`) when the measurement cannot tell which ran: each layout's prediction
  is shown, and the row is never validated nor a validation row. When every layout misses
  on the same side, the row is `contradicted`, with the nearest layout's error. A row
  whose source reports the best layout (`unstated_layout.reported`) is judged instead on
  kb's best layout, every layout still shown.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from kb.ledger import cross_node, dense_experts, group_scales, layout_gaps, rails, trtllm_bench
from kb.ledger import layouts as unstated
from kb.ledger.attention_rate import SIXTEEN_BIT
from kb.ledger.capacity import MEMORY_MEASURES, capacity, memory_prediction
from kb.ledger.engine_versions import (
    prices_moe_tp,
    ray_step_overhead,
    runs_sixteen_bit_context,
    runs_stock_collective,
    with_step_overhead,
)
from kb.ledger.hbm_rate import streamed_rate
from kb.ledger.offline_run import offline_row, prefill_stall, replica_pool, unheld
from kb.ledger.overlap import overlapped_rows, two_batch_overlap
from kb.ledger.paged_run import Pool
from kb.ledger.prompt_passes import PromptPasses
from kb.ledger.quantities import QuantityError, figure
from kb.ledger.saturation import EXTENDED
from kb.ledger.scenario import (
    Outcome,
    Scenario,
    ScenarioError,
    compute_rate,
    outcome,
    prefill_kernels_of,
    prefill_matmul_receipt,
)
from kb.ledger.transfers import LINE_RATE
from kb.ledger.turbomind_pool import past_pool, pooled_outcome
from kb.ledger.unsharded import with_unsharded
from kb.model import KnowledgeBase, Record

if TYPE_CHECKING:
    from kb.ledger.finite_run import Passes, RunResult

VALIDATED = "validated"
CONTRADICTED = "contradicted"
NOT_EVALUABLE = "not evaluable"
CALIBRATION = "calibration"
UNDETERMINED = unstated.UNDETERMINED  # priced under each layout its source leaves open

MAX_LOAD_ENGINE = "engines/tensorrt-llm"  # the engine whose maximum-load batch is declared

CALIBRATION_WHY = "an engine parameter was fitted to this row or its receipt: it never validates"

UNITS = {
    "tpot": "s",
    "ttft": "s",
    "request_latency": "s",
    "decode_tokens_per_s": "1/s",
    "output_tokens_per_s": "1/s",
    "output_tokens_per_s_per_gpu": "1/s",
    "output_tokens_per_s_per_user": "1/s",
    "total_tokens_per_s": "1/s",
    "prefill_tokens_per_s_per_node": "1/s",
    "decode_tokens_per_s_per_node": "1/s",
    **MEMORY_MEASURES,
}

# Measures of one phase: a row of them needs no output length (the step at its input's context).
ONE_PHASE = ("decode_tokens_per_s", "ttft", *(m for m in UNITS if m.endswith("_per_node")))


@dataclass(frozen=True)
class Declaration:
    """The band and the assumptions, declared before any row was priced (with reasons)."""

    band: Fraction
    band_reason: str
    context_reason: str
    precision: str
    kv_precision: str
    single_node_up_to: int
    overhead_graphs: str
    overhead_otherwise: str
    overhead_reason: str
    assumed_reasons: Mapping[str, str]
    max_load_fraction: Fraction
    max_load_cap: int
    memory_calibration: tuple[str, ...]
    first_token: Mapping[str, tuple[str, ...]]  # engine -> versions (`first_token`)


@lru_cache(maxsize=1)
def declaration() -> Declaration:
    """kb/data/end-to-end.json, read once (kb.resources.end_to_end)."""
    from kb.resources import end_to_end

    return end_to_end(None, _declaration)


def _declaration(data: Any) -> Declaration:
    """The Declaration of the whole end-to-end.json document."""
    assumed = data["assumed"]
    return Declaration(
        band=Fraction(data["band"]),
        band_reason=data["band_reason"],
        context_reason=data["context_reason"],
        precision=assumed["precision"]["value"],
        kv_precision=assumed["kv_precision"]["value"],
        single_node_up_to=int(assumed["nodes"]["up_to_devices"]),
        overhead_graphs=data["overhead_fallback"]["cuda_graphs"],
        overhead_otherwise=data["overhead_fallback"]["otherwise"],
        overhead_reason=data["overhead_fallback"]["reason"],
        assumed_reasons={name: entry["reason"] for name, entry in assumed.items()},
        max_load_fraction=Fraction(assumed["max_load_batch"]["kv_fraction"]),
        max_load_cap=int(assumed["max_load_batch"]["batch_cap"]),
        memory_calibration=tuple(data["calibration"]["memory"]),
        first_token={
            engine: tuple(entry["versions"])
            for engine, entry in data["first_token"].items()
            if isinstance(entry, dict) and "versions" in entry
        },
    )


@dataclass(frozen=True)
class RowResult:
    """One end-to-end receipt row: its conditions, the prediction, the measurement, a state."""

    receipt: str
    index: int
    label: str
    metric: str
    measures: str | None
    conditions: Mapping[str, Any]
    predicted: Fraction | None  # base units: s or 1/s
    measured: Fraction | None
    unit: str
    error: Fraction | None  # (predicted - measured) / measured
    state: str
    reason: str = ""
    assumed: tuple[str, ...] = ()
    provenance: str = ""
    outcome: Outcome | None = field(default=None, compare=False, repr=False)
    layouts: tuple[tuple[str, RowResult], ...] = ()  # unstated_layout: each layout's row

    @property
    def validation(self) -> bool:
        """A validation row: one kb predicted and did not fit anything to."""
        return self.state in (VALIDATED, CONTRADICTED)


def calibration_receipts(kb: KnowledgeBase) -> frozenset[str]:
    """Every receipt an engine's parameter was fitted to (the calibration set).

    The receipts of each engine's per-layer overhead (`per_layer_overhead.calibration`)
    and per-sequence overhead (`per_sequence_overhead.calibration`), and those
    kb/data/end-to-end.json declares for an engine's memory workspace.
    """
    from kb.kinds import views

    found: set[str] = set(declaration().memory_calibration)
    checked = views(kb)
    for record in kb.of_kind("engine"):
        view = checked.engine(record)
        if view is not None and view.per_layer_overhead is not None:
            found.update(view.per_layer_overhead.calibration)
        if view is not None and view.per_sequence_overhead is not None:
            found.update(view.per_sequence_overhead.calibration)
    return frozenset(found)


def end_to_end_receipts(kb: KnowledgeBase) -> list[Record]:
    """The schema-valid receipts of pattern end-to-end, in id order."""
    from kb.kinds import views

    checked = views(kb)
    found = [
        r
        for r in kb.of_kind("receipt")
        if r.get("pattern") == "end-to-end" and checked.receipt(r) is not None
    ]
    return sorted(found, key=lambda r: r.id)


def evaluate_all(kb: KnowledgeBase) -> list[RowResult]:
    """Every row of every end-to-end receipt, with its state.

    A row is a calibration row when its receipt calibrates an engine parameter, or when
    kb/data/end-to-end.json `moe_expert_rate` lists the row itself among the rows its
    rates were fitted to.
    """
    calibration = calibration_receipts(kb)
    rows_fitted = moe_expert_rates()[1]
    results: list[RowResult] = []
    for record in end_to_end_receipts(kb):
        rows = record.get("results") or []
        for index, row in enumerate(rows):
            fitted = record.id in calibration or f"{record.id}#results.{index}" in rows_fitted
            results.append(evaluate_row(kb, record, index, row, fitted))
    return results


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, Mapping):  # a batch stated as a quantity (unit "1")
        try:
            found = figure(value, "").value
        except QuantityError:
            return None
        return int(found) if found.denominator == 1 else None
    return None


def weight_format(text: str | None, assumed: list[str]) -> str | None:
    """The weight format a row's precision names (None: one kb does not price)."""
    decl = declaration()
    if text is None:
        assumed.append(f"precision {decl.precision} (not stated)")
        return decl.precision
    low = text.lower()
    for key, fmt in (
        ("fp4", "fp4"),
        ("int4", "int4"),
        ("w4", "int4"),
        ("fp8", "fp8"),
        ("int8", "int8"),
        ("bf16", "bf16"),
        ("fp16", "bf16"),
    ):
        if key in low:
            return fmt
    return None


class _NotEvaluable(Exception):
    """A row that cannot be turned into a scenario; the message says why."""


def _what_is_measured(row: Mapping[str, Any]) -> str:
    """The row's metric, else its label (a row may time one kernel in `latency`)."""
    return str(row.get("metric") or row.get("label") or "an unnamed quantity")


def conditions(
    kb: KnowledgeBase, record: Record, row: Mapping[str, Any]
) -> tuple[Scenario, str, list[str]]:
    """The scenario a row states, its `measures`, and what was assumed (or _NotEvaluable)."""
    decl = declaration()
    assumed: list[str] = []
    measures = row.get("measures")
    if measures is None:
        raise _NotEvaluable(
            f"measures '{_what_is_measured(row)}', which the composed ledger does not predict"
        )
    model = row.get("model") or record.get("model")
    if not model:
        raise _NotEvaluable("the source does not name the model variant")
    hardware = row.get("hardware")
    if hardware is None:
        named = record.get("hardware") or []
        if len(named) != 1:
            raise _NotEvaluable(
                "the row does not say which of the receipt's accelerators it ran on"
            )
        hardware = named[0]
    engine = record.get("engine.record")
    if engine is None:
        raise _NotEvaluable("the receipt names no engine record (engines/...)")
    gpus = _int(row.get("gpus"))
    if gpus is None:
        raise _NotEvaluable("the source does not state the number of devices")
    tp = _int(row.get("tp"))
    if tp is None:
        if gpus != 1:
            raise _NotEvaluable("the source does not state the tensor-parallel degree")
        tp = 1
    pp, ep = _int(row.get("pp")) or 1, _int(row.get("ep")) or 1
    moe_tp = _moe_tp(record, row, assumed)
    dp = _int(row.get("dp"))
    if dp is None:
        if gpus % (tp * pp):
            raise _NotEvaluable(f"tp*pp = {tp * pp} does not divide the {gpus} devices")
        dp = gpus // (tp * pp)
    nodes = _int(row.get("nodes"))
    if nodes is None:
        if gpus > decl.single_node_up_to:
            raise _NotEvaluable(f"{gpus} devices, and the source does not state the nodes")
        nodes = 1
    batch = _int(row.get("batch"))
    if batch is None and str(measures).endswith("_per_node"):  # declared: per_node
        raise _NotEvaluable(
            "a per-node rate prices a prefill-only or decode-only batch: none stated"
        )
    max_load = False
    memory = measures in MEMORY_MEASURES  # sized at start-up: no step, no batch, no lengths
    if memory:
        batch = batch or dp
    if batch is None:
        batch = _int(row.get("concurrency"))
        if batch is None:
            if row.get("load") != "maximum":
                raise _NotEvaluable("the source states neither the batch nor the concurrency")
            if engine != MAX_LOAD_ENGINE:
                raise _NotEvaluable(
                    f"a maximum-load run of {engine}: kb declares the batch such a run reaches "
                    f"only for {MAX_LOAD_ENGINE} (trtllm-bench), and the source states none"
                )
            max_load, batch = True, dp  # the batch is found below, from the devices
        else:
            assumed.append(f"batch = concurrency {batch}")
    inputs, outputs = _int(row.get("input_tokens")), _int(row.get("output_tokens"))
    if inputs is None and not memory:
        raise _NotEvaluable("the source does not state the input length")
    if outputs is None and not memory and measures not in ONE_PHASE:
        raise _NotEvaluable("the source does not state the output length")
    weights = weight_format(row.get("precision"), assumed)
    if weights is None:
        raise _NotEvaluable(f"precision '{row.get('precision')}' is not a format kb prices")
    kv = weight_format(row.get("kv_precision"), []) if row.get("kv_precision") else None
    if row.get("kv_precision") and kv is None:
        raise _NotEvaluable(f"KV precision '{row.get('kv_precision')}' is not a format kb prices")
    if kv is None:
        kv = decl.kv_precision
        assumed.append(f"KV cache {kv} (not stated)")
    graphs = row.get("cuda_graphs")
    if runs_stock_collective(record):  # declared: stock_collective_versions
        stock = True
        assumed.append(
            "all-reduces on the stock library's curves (this engine version did not run its "
            "own collective: stock_collective_versions)"
        )
    elif cross_node.spans_nodes(str(engine), tp, gpus, nodes):  # declared: cross_node_all_reduce
        stock = True
        assumed.append(cross_node.NOTE)
    elif stock := not _engine_measured_on(kb, str(engine), str(hardware)):
        assumed.append("all-reduces on the stock library's curves (none of the engine's here)")
    fallback = decl.overhead_graphs if graphs is True else decl.overhead_otherwise
    collective_graphs = graphs if isinstance(graphs, bool) else None
    if stock and graphs is True and tp > 1:  # declared: collective.under_graphs
        collective_graphs = None
        assumed.append(
            "all-reduces under graphs priced by stock curves timed outside them (an upper bound)"
        )
    inter_link = _inter_link(kb, record, row, nodes, assumed)
    if nodes > 1 and tp > gpus // nodes:  # declared: cross_node_rails (kb.ledger.rails)
        assumed.append(rails.assumed(kb, str(hardware), inter_link))
    context = (inputs or 1) + (outputs or 0) // 2
    scenario = Scenario(
        model=str(model),
        hardware=str(hardware),
        count=gpus,
        nodes=nodes,
        tp=tp,
        pp=pp,
        ep=ep,
        dp=dp,
        moe_tp=moe_tp,
        batch=batch,
        input_tokens=inputs,
        output_tokens=outputs,
        context=context,
        engine=str(engine),
        weight_precision=weights,
        kv_precision=kv,
        cuda_graphs=collective_graphs,
        stock_collective=stock,
        overhead_fallback=fallback,
        inter_link=inter_link,
    )
    if _kv_read_per_query_head(kb, record, str(model)):  # declared: kv_read_per_query_head
        scenario = replace(scenario, kv_read_per_query_head=True)
        assumed.append(
            "decode attention reads the KV cache once per query head (this engine version "
            "predates its grouped-query kernel)"
        )
    scenario = dense_experts.applied(kb, record, scenario, assumed)  # dense_expert_parallel
    if kv not in SIXTEEN_BIT and runs_sixteen_bit_context(record):  # declared: attention_rate
        scenario = replace(scenario, attention_sixteen_bit=True)
        assumed.append(
            "the prompt's attention at the 16-bit rate although the KV cache is 8-bit (this "
            "engine version had no FP8 context attention)"
        )
    rate = _moe_expert_rate(kb, record, str(model), str(hardware))
    if rate is not None:  # declared: moe_expert_rate
        scenario = replace(scenario, moe_expert_rate=rate)
        assumed.append(
            f"MoE experts' matmuls at {float(rate):g} TFLOP/s, this engine version's rate fitted "
            "to its first-token rows (moe_expert_rate)"
        )
    scenario = _group_scales(scenario, row.get("precision"), assumed)
    if max_load:
        scenario = _max_load(kb, scenario, (inputs or 0) + (outputs or 0), assumed)
    assumed.append(_matmul_rate_text(scenario, kb))
    hbm_note = streamed_rate(kb, str(hardware))[1]
    if hbm_note:  # declared: hbm_streamed_rate
        assumed.append(hbm_note)
    curve = prefill_matmul_receipt(scenario, kb)
    if curve is not None:  # declared: prefill_matmul
        assumed.append(f"prefill matmuls at the per-layer times of {curve}")
    kernels = prefill_kernels_of(scenario, kb)
    if kernels is not None:  # declared: prefill_kernels
        assumed.append(f"prefill non-matmul kernels at the per-layer times of {kernels}")
    return scenario, str(measures), assumed


def _matmul_rate_text(scenario: Scenario, kb: KnowledgeBase) -> str:
    """What the row's matmuls are priced at (kb/data/end-to-end.json `compute_rate`).

    The datasheet peak, said as such; else the measured rate's pointer and its figure as the
    receipt writes it.
    """
    pointer = compute_rate(scenario, kb)  # one scan: compute_rate_peak would ask it again
    if pointer.startswith(f"{scenario.hardware}#compute."):
        return "matmuls at the datasheet peak (no measured matmul rate here)"
    record_id, _, field = pointer.partition("#")
    record = kb.get(record_id)
    value = record.get(f"{field}.value") if record is not None else None
    unit = record.get(f"{field}.unit") if record is not None else None
    return f"matmuls at the measured rate {pointer} ({value} {unit})"


def _group_scales(scenario: Scenario, precision: Any, assumed: list[str]) -> Scenario:
    """The scenario with its engine's per-group weight scales (declared: weight_group_scales)."""
    engine, fmt = str(scenario.engine), scenario.weight_precision
    text = precision if isinstance(precision, str) else None
    found = group_scales.extra_bytes(engine, fmt, text)
    if found is not None:
        per_weight, group = found
        assumed.append(
            f"{fmt} weights read with their per-group scales: {per_weight} B a weight at "
            f"group {group} (weight_group_scales)"
        )
        return replace(scenario, weight_scale_bytes=per_weight)
    if group_scales.unstated(engine, fmt, text):
        assumed.append(f"{fmt} group size not stated: per-group scales not counted")
    return scenario


def _max_load(kb: KnowledgeBase, scenario: Scenario, sequence: int, assumed: list[str]) -> Scenario:
    """The scenario at the batch a maximum-load run reaches (declared: `assumed.max_load_batch`).

    The largest batch whose whole sequences (`sequence` = input + output tokens) fit the
    declared share of each device's memory after the weights, capped; with none that fits,
    one sequence per replica (the composed ledger then says the row does not fit).
    """
    from kb.ledger.capacity import capacity

    decl = declaration()
    try:
        found = capacity(scenario, kb).max_load_batch(
            sequence, decl.max_load_fraction, decl.max_load_cap
        )
    except ScenarioError as exc:
        raise _NotEvaluable(str(exc)) from None
    assumed.append(
        f"batch {found or scenario.dp}: the largest whose {sequence}-token sequences fit "
        f"{float(decl.max_load_fraction):g} of each device's memory after the weights "
        f"(at most {decl.max_load_cap}; a maximum-load run)"
    )
    return replace(scenario, batch=max(found, scenario.dp))


def _inter_link(
    kb: KnowledgeBase, record: Record, row: Mapping[str, Any], nodes: int, assumed: list[str]
) -> str | None:
    """The link between a row's nodes as its source states it (None: one node, or unstated).

    The row's `inter_link` first; else, for a row spanning nodes, the receipt's
    `interconnect` when that record is a network port (scope `port`: InfiniBand,
    Ethernet, EFA), the network between the nodes. An NVLink or PCIe link named there
    is the one inside a node, never read as the one between them; kb assumes none.
    """
    stated = row.get("inter_link")
    if isinstance(stated, str):
        return stated
    named = record.get("interconnect")
    if nodes < 2 or not isinstance(named, str):
        return None
    link = kb.get(named)
    if link is None or link.kind != "interconnect" or link.get("scope") != "port":
        return None
    assumed.append(f"inter-node link {named} (the receipt's interconnect)")
    return named


def _engine_measured_on(kb: KnowledgeBase, engine: str, hardware: str) -> bool:
    """True when one of the engine's collective receipts was measured on this accelerator."""
    from kb.kinds import views

    checked = views(kb)
    record = kb.get(engine)
    view = checked.engine(record) if record is not None and record.kind == "engine" else None
    for receipt_id in view.collective_receipts if view is not None else ():
        receipt = kb.get(receipt_id)
        found = checked.receipt(receipt) if receipt is not None else None
        if found is not None and hardware in found.hardware:
            return True
    return False


def predicted_value(result: Outcome, measures: str) -> Fraction | None:
    """The figure of an outcome that a row's `measures` names."""
    return {
        "tpot": result.tpot,
        "ttft": result.ttft,
        "request_latency": result.latency,
        "decode_tokens_per_s": (
            Fraction(result.scenario.batch) / result.tpot if result.tpot else None
        ),
        "output_tokens_per_s": result.tokens_per_s_system,
        "output_tokens_per_s_per_gpu": result.tokens_per_s_per_device,
        "output_tokens_per_s_per_user": 1 / result.tpot if result.tpot else None,
        "total_tokens_per_s": _total_rate(result),
        **_per_node(result),  # declared: per_node
    }.get(measures)


def _per_node(result: Outcome) -> dict[str, Fraction | None]:
    """A prefill-only or decode-only run's tokens per second per node (`per_node`)."""
    s = result.scenario
    prompts = s.batch * (s.input_tokens or 0)
    return {
        "prefill_tokens_per_s_per_node": (
            Fraction(prompts) / result.ttft / s.nodes if result.ttft and prompts else None
        ),
        "decode_tokens_per_s_per_node": (
            Fraction(s.batch) / result.tpot / s.nodes if result.tpot else None
        ),
    }


def _total_rate(result: Outcome) -> Fraction | None:
    """(input + output tokens) per second: the output rate times (I + O)/O."""
    s = result.scenario
    if result.tokens_per_s_system is None or not s.output_tokens or s.input_tokens is None:
        return None
    return result.tokens_per_s_system * Fraction(s.input_tokens + s.output_tokens, s.output_tokens)


def _words(problem: str) -> str:
    """A scenario's problem without the pointer into its synthetic placement."""
    pointer, sep, rest = problem.partition(": ")
    return rest if sep and pointer.startswith("/") else problem


def _measured(row: Mapping[str, Any], unit: str) -> Fraction | None:
    node = row.get("value") or row.get("latency")
    if not isinstance(node, Mapping):
        return None
    try:
        found = figure(node, "")
    except QuantityError:
        return None
    return found.value if found.dim == unit and found.value > 0 else None


MOE_TP_NOTE = (
    "attention data-parallel over the row's dp ranks, each routed expert tensor-parallel over "
    "its moe_tp ranks (TensorRT-LLM's default with enable_attention_dp and no --ep value; the "
    "page's `--ep $ep_size` gives none): moe_tensor_parallel"
)


def _moe_tp(record: Record, row: Mapping[str, Any], assumed: list[str]) -> int:
    """The row's moe_tp (1 when absent); only for an engine version `moe_tensor_parallel` lists."""
    moe_tp = _int(row.get("moe_tp")) or 1
    if moe_tp > 1:
        if not prices_moe_tp(record):  # declared: moe_tensor_parallel
            raise _NotEvaluable(
                f"moe_tp = {moe_tp}: kb prices experts tensor-parallel under attention data "
                "parallelism only for the engine versions kb/data/end-to-end.json "
                "moe_tensor_parallel lists"
            )
        assumed.append(MOE_TP_NOTE)
    return moe_tp


def _conditions_view(s: Scenario) -> dict[str, Any]:
    shown = _conditions_fields(s)
    if s.moe_tp > 1:
        shown["moe_tp"] = s.moe_tp
    if s.dense_experts:  # declared: dense_expert_parallel
        shown["dense_experts"] = True
    return shown


def _conditions_fields(s: Scenario) -> dict[str, Any]:
    return {
        "model": s.model,
        "hardware": s.hardware,
        "devices": s.count,
        "nodes": s.nodes,
        "tp": s.tp,
        "pp": s.pp,
        "ep": s.ep,
        "dp": s.dp,
        "batch": s.batch,
        "input_tokens": s.input_tokens,
        "output_tokens": s.output_tokens,
        "context": s.context,
        "precision": s.weight_precision,
        "kv_precision": s.kv_precision,
        "engine": s.engine,
        "cuda_graphs": s.cuda_graphs,
        "inter_link": s.inter_link,
    }


def evaluate_row(
    kb: KnowledgeBase, record: Record, index: int, row: Mapping[str, Any], calibration: bool
) -> RowResult:
    """One row: its scenario priced, compared with its measurement under the declared band."""
    declared_layouts = unstated.declared(record.id, index, row)
    if declared_layouts is not None:  # declared: unstated_layout
        return _unstated_layout(kb, record, index, row, declared_layouts, calibration)
    label, metric = str(row.get("label") or f"results[{index}]"), str(row.get("metric") or "")
    base = dict(receipt=record.id, index=index, label=label, metric=metric)
    try:
        scenario, measures, assumed = conditions(kb, record, row)
    except _NotEvaluable as why:
        reason = _declared_reason(f"{record.id}#results.{index}", row, str(why))
        if calibration:
            return replace(
                _bare(record, index, row, f"{CALIBRATION_WHY}; {reason}"), state=CALIBRATION
            )
        return _bare(record, index, row, reason)
    unit = UNITS[measures]
    measured = _measured(row, unit)
    shown = _conditions_view(scenario)
    graphs = row.get("cuda_graphs")  # the row's state (its collective may price without it)
    shown["cuda_graphs"] = graphs if isinstance(graphs, bool) else None
    gap = layout_gaps.note(str(record.id), index)  # declared: layout_gaps (no price changes)
    if gap is not None:
        assumed.append(gap)
    common = dict(measures=measures, conditions=shown, unit=unit, assumed=tuple(assumed))
    if measured is None:
        return RowResult(
            **base,  # type: ignore[arg-type]
            **common,  # type: ignore[arg-type]
            predicted=None,
            measured=None,
            error=None,
            state=NOT_EVALUABLE,
            reason=f"its value is not a positive figure in {unit}",
        )
    if measures in MEMORY_MEASURES:
        return _memory_row(kb, scenario, measures, measured, calibration, base, common)
    try:
        result = outcome(scenario, kb)
    except ScenarioError as exc:
        return RowResult(
            **base,  # type: ignore[arg-type]
            **common,  # type: ignore[arg-type]
            predicted=None,
            measured=measured,
            error=None,
            state=NOT_EVALUABLE,
            reason=str(exc),
        )
    tm = past_pool(str(record.id), scenario) if measures == "ttft" else None
    if tm is not None:  # declared: turbomind_pool
        result, note = pooled_outcome(kb, scenario, result, tm)
        common["assumed"] = (*common["assumed"], note)
    pool: Pool | None = None
    if _finite_run_row(row, measures, scenario.engine) and offline_row(row):
        found = replica_pool(kb, scenario)  # declared: offline_throughput.capacity
        if isinstance(found, str):
            return RowResult(
                **base,  # type: ignore[arg-type]
                **common,  # type: ignore[arg-type]
                predicted=None,
                measured=measured,
                error=None,
                state=CALIBRATION if calibration else NOT_EVALUABLE,
                reason=found,
                outcome=result,
            )
        pool, short = found, unheld(found, scenario)
        note = OFFLINE_NOTE if short is None else PREEMPTION_NOTE.format(short=short)
        common["assumed"] = (*common["assumed"], note)
    if not result.fits and result.need_per_device and measures in OVER_CAPACITY_MEASURES:
        held = _over_capacity(kb, scenario, common)  # declared: assumed.over_capacity
        if held is not None:
            scenario, result = held
    if not result.fits and result.need_per_device:
        shortfall = "; ".join(p for p in result.problems if "does not fit" in p)
        return RowResult(
            **base,  # type: ignore[arg-type]
            **common,  # type: ignore[arg-type]
            predicted=None,
            measured=measured,
            error=None,
            state=CALIBRATION if calibration else CONTRADICTED,
            reason=f"measured, but kb finds it does not fit ({shortfall})",
            outcome=result,
        )
    if f"{record.id}#results.{index}" in overlapped_rows():  # declared: two_batch_overlap
        result = _two_batch(kb, scenario, result, common)
    engine = (record.get("engine.record"), record.get("engine.version"))
    bench = trtllm_bench.applies(*engine, row, measures)  # declared: trtllm_bench_run
    uncovered = trtllm_bench.gap(*engine, row, measures)  # trtllm_bench_run.not_covered
    if uncovered is not None:  # a note only: the row's price is unchanged
        common["assumed"] = (*common["assumed"], uncovered)
    floor = trtllm_bench.floor(*engine) if bench else trtllm_bench.ALWAYS  # budget_floor
    if bench:  # a run of the row's N requests at trtllm-bench's budget: finite_run prices it
        batch = _bench_estimate(kb, record, scenario, common)
        row = trtllm_bench.run_row(row, batch, scenario.pp, floor)
    if _at_concurrency(row, scenario) or bench:
        served = (
            _finite(kb, scenario, row, measures, result, common, pool, bench, floor)  # finite_run
            if _finite_run_row(row, measures, scenario.engine)
            else _serving(kb, scenario, result, common)  # declared: serving_steady_state
        )
        if isinstance(served, str):
            return RowResult(
                **base,  # type: ignore[arg-type]
                **common,  # type: ignore[arg-type]
                predicted=None,
                measured=measured,
                error=None,
                state=NOT_EVALUABLE,
                reason=served,
                outcome=result,
            )
        result = served
    elif measures == "ttft" and _first_token_rule(record) and tm is None:  # first_token
        result = _first_token(kb, scenario, result, common)
    result = _ray_steps(record, scenario, result, common)  # declared: ray_step_overhead
    result = with_unsharded(kb, record, scenario, result, common)  # tp_unsharded_weights
    predicted = predicted_value(result, measures)
    if predicted is None:
        unpriced = "; ".join(_words(p) for p in result.problems)
        unpriced = unpriced or f"the composed ledger gives no {measures}"
        unpriced = _declared_reason(f"{record.id}#results.{index}", row, unpriced)
        return RowResult(
            **base,  # type: ignore[arg-type]
            **common,  # type: ignore[arg-type]
            predicted=None,
            measured=measured,
            error=None,
            state=NOT_EVALUABLE,
            reason=unpriced,
            outcome=result,
        )
    skipped = sorted(
        {
            f"{p.split()[1].rstrip(':')}: {p[p.index('; row ') + 2 :]}"
            for p in result.pricing
            if OUTLIER_NOTE in p and "; row " in p and len(p.split()) > 1
        }
    )
    if skipped:  # a curve read without a row its receipt marks `outlier` (kb/ledger/curves.py)
        common["assumed"] = (*common["assumed"], *skipped)
    said = rails.settled(kb, common["assumed"], result.pricing, scenario.inter_link)
    common["assumed"] = (*said, *line_rate_notes(result.pricing))
    predicted = _printable(predicted, common)
    error = (predicted - measured) / measured
    state, reason = _judged(error, calibration)
    return RowResult(
        **base,  # type: ignore[arg-type]
        **common,  # type: ignore[arg-type]
        predicted=predicted,
        measured=measured,
        error=error,
        state=state,
        reason=reason,
        provenance=result.provenance,
        outcome=result,
    )


def _bench_estimate(
    kb: KnowledgeBase, record: Record, scenario: Scenario, common: dict[str, Any]
) -> int:
    """The requests trtllm-bench sizes its budget by (declared: trtllm_bench_attention_dp).

    kb's batch C; under attention DP, trtllm-bench's estimate for the TP layout of the row's
    GPUs. That estimate holds at least one rank's batch (per GPU its weights are no more than
    a rank's, and a sequence's cache over the tp GPUs is at most tp times a rank's copy), so
    it is at least 1 for a row that fits.
    """
    from kb.ledger import adp_bench

    engine = (record.get("engine.record"), record.get("engine.version"))
    if not adp_bench.applies(*engine, scenario):
        return scenario.batch
    decl = declaration()
    sequence = (scenario.input_tokens or 0) + (scenario.output_tokens or 0)
    found = adp_bench.estimated_batch(
        kb, scenario, sequence, decl.max_load_fraction, decl.max_load_cap
    )
    common["assumed"] = (
        *common["assumed"],
        f"trtllm-bench's budget from its estimate of {found} requests for the {scenario.count} "
        f"GPUs tensor-parallel, each rank's own (trtllm_bench_attention_dp)",
    )
    return found


def _unstated_layout(
    kb: KnowledgeBase,
    record: Record,
    index: int,
    row: Mapping[str, Any],
    declared: unstated.Declared,
    calibration: bool,
) -> RowResult:
    """A row priced under each layout its source leaves open (kb.ledger.layouts' verdict).

    Each layout is this function's own evaluation of the row with the layout written in;
    the row keeps them all (`layouts`). A one-sided miss is the nearest layout's row,
    contradicted; a row whose source reports the best layout (`reported: best`) is kb's
    best layout's row, judged on the band; otherwise the row shows no single prediction.
    """
    layouts = unstated.stated_rows(kb, record, row, declared)
    priced = tuple(
        (name, replace(found, assumed=(*notes, *found.assumed)))
        for name, stated, notes in layouts
        for found in (evaluate_row(kb, record, index, stated, False),)
    )
    if not priced:
        return _bare(
            record,
            index,
            row,
            "the source does not state the layout; the link between the nodes it needs is not "
            "the accelerator's reference network of the declared family",
        )
    entries = tuple(
        unstated.Entry(
            n,
            r.error,
            not (r.predicted is None and r.state == CONTRADICTED),
            _shown(r),
            r.reason,
            r.predicted,
        )
        for n, r in priced
    )
    if declared.best is not None:  # declared: unstated_layout.reported (a best row)
        verdict = unstated.best(entries, declared.best)
    else:
        verdict = unstated.judge(entries, declaration().band)
    shown = next((r for n, r in priced if n == verdict.nearest), None)
    base = shown or next((r for _, r in priced if r.conditions), priced[0][1])
    names = [n for n, _ in priced]
    conditions = {**base.conditions, "layouts": names} if base.conditions else {}
    state = {"unfit": CONTRADICTED, "missed": CONTRADICTED, "open": UNDETERMINED}.get(
        verdict.kind, NOT_EVALUABLE
    )
    reason = "; ".join((verdict.reason, *layouts[0][2][1:]))  # and the link taken, if one
    if verdict.kind == "best" and shown is not None and shown.error is not None:
        state, judged = _judged(shown.error, False)
        reason = f"{reason}; {judged}" if judged else reason
    reason = f"{CALIBRATION_WHY}; {reason}" if calibration else reason
    if shown is not None:  # a one-sided miss (the nearest layout) or a best row (kb's best)
        return replace(
            shown,
            conditions=conditions,
            layouts=priced,
            state=CALIBRATION if calibration else state,
            reason=reason,
        )
    measured = next((r.measured for _, r in priced if r.measured is not None), None)
    return replace(
        base,
        conditions=conditions,
        measured=measured,
        predicted=None,
        error=None,
        state=CALIBRATION if calibration else state,
        reason=reason,
        assumed=(),
        provenance="",
        outcome=None,
        layouts=priced,
    )


def _bare(record: Record, index: int, row: Mapping[str, Any], reason: str) -> RowResult:
    """A row that never became a scenario: not evaluable, with the reason."""
    return RowResult(
        receipt=record.id,
        index=index,
        label=str(row.get("label") or f"results[{index}]"),
        metric=str(row.get("metric") or ""),
        measures=row.get("measures"),
        conditions={},
        predicted=None,
        measured=None,
        unit="",
        error=None,
        state=NOT_EVALUABLE,
        reason=reason,
    )


def _shown(result: RowResult) -> str:
    """A priced row's prediction and error: '15.36 ms (-33.5%)' ('' when not priced)."""
    from kb import numfmt

    if result.predicted is None:
        return ""
    return f"{numfmt.human(result.predicted, result.unit)} ({percent(result.error)})"


# How a collective price says its curve skipped an outlier row (kb/ledger/curves.py).
OUTLIER_NOTE = "skipped as an outlier"

# How an offline benchmark_throughput row says what it was priced as (offline_throughput).
OFFLINE_NOTE = (
    "offline_throughput: every prompt sent at once (finite_run with C = N); the pool holds "
    "every whole sequence, so no request is preempted; the table's rate read as total "
    "(input + output) tokens/s"
)
PREEMPTION_NOTE = (
    "offline_throughput: every prompt sent at once (finite_run with C = N); {short}: vLLM's "
    "preemption by recompute simulated (offline_throughput.preemption); the table's rate "
    "read as total (input + output) tokens/s"
)

# The measures a row over capacity is priced at its in-flight batch for (assumed.over_capacity).
OVER_CAPACITY_MEASURES = ("tpot", "output_tokens_per_s_per_user")


def line_rate_notes(pricing: tuple[str, ...]) -> tuple[str, ...]:
    """What a row's collectives priced at a link's line rate say, once each, in order.

    A collective no measured curve covers (no curve of the link, or a message outside
    every curve's range: never extrapolated) is priced at the interconnect record's line
    rate, labelled an estimate (kb/ledger/transfers.py); the row says so, beside the
    curves it looked for, so a reader sees which of its collectives no measurement priced.
    A collective above a saturated curve's largest row (declared `collective_saturation`,
    kb.ledger.saturation) says which curve and row it was extended from.
    """
    notes = [f"a collective at the {p}" for p in pricing if p.startswith(LINE_RATE)]
    notes += [f"a collective {p}" for p in pricing if p.startswith(EXTENDED)]
    return tuple(dict.fromkeys(notes))


def _over_capacity(
    kb: KnowledgeBase, scenario: Scenario, common: dict[str, Any]
) -> tuple[Scenario, Outcome] | None:
    """The row at the batch its engine holds in flight, when the stated one does not fit.

    Declared (kb/data/end-to-end.json `assumed.over_capacity`): the largest batch the
    composed feasibility admits at the row's context (the headroom of the scenario at one
    sequence per replica), priced by the same composition. None when not even that fits
    or the headroom is no smaller batch (the row then stays as it was).
    """
    whole = _whole_sequence_context(scenario)
    admitted = scenario.context if whole is None else whole
    try:
        probe = outcome(replace(scenario, batch=scenario.dp, context=admitted), kb)
    except ScenarioError:
        return None
    held = probe.max_batch
    if not probe.fits or held is None or not scenario.dp <= held < scenario.batch:
        return None
    capped = replace(scenario, batch=held)
    try:
        result = outcome(capped, kb)
    except ScenarioError:
        return None
    if not result.fits:
        return None
    reserve = "" if whole is None else ", each reserving its whole sequence"
    common["assumed"] = (
        *common["assumed"],
        f"in flight: {held} of the stated {scenario.batch} (the largest batch kb finds fits "
        f"at context {admitted}{reserve}; the rest wait)",
    )
    return capped, result


def _whole_sequence_context(scenario: Scenario) -> int | None:
    """Input + output tokens where the engine admits a request only if all of it fits.

    Declared (kb/data/end-to-end.json `assumed.over_capacity.whole_sequence`): an engine
    whose capacity scheduler reserves a request's KV cache to its last token before
    admitting it holds in flight only what fits at the whole sequence, not at the mean
    context its decode step is priced at. None for other engines (their cap is taken at
    the row's context, as the step is).
    """
    if str(scenario.engine) not in whole_sequence_engines():
        return None
    if scenario.input_tokens is None or scenario.output_tokens is None:
        return None
    return scenario.input_tokens + scenario.output_tokens


@lru_cache(maxsize=1)
def whole_sequence_engines() -> frozenset[str]:
    """`assumed.over_capacity.whole_sequence.engines`: engines reserving whole sequences."""
    from kb.resources import end_to_end

    return end_to_end(
        "assumed",
        lambda e: frozenset(str(x) for x in e["over_capacity"]["whole_sequence"]["engines"]),
    )


def _declared_reason(key: str, row: Mapping[str, Any], reason: str) -> str:
    """A not-evaluable row's reason, made precise where `unpriced` declares one for it.

    A declaration names one row (`receipt#results.N`) or a whole receipt (`receipt`); the
    row's own wins. A row without `measures` shows the declared reason instead of kb's
    generic one; a row with `measures` keeps kb's own reason (what kb found missing)
    followed by the declared one (`unpriced.with_measures`). Both the rows that never became
    a scenario and those whose scenario priced nothing reach here.
    """
    declared = unpriced_reasons().get(key) or unpriced_reasons().get(key.split("#", 1)[0])
    if declared is None:
        return reason
    return declared if row.get("measures") is None else f"{reason}; {declared}"


@lru_cache(maxsize=1)
def unpriced_reasons() -> dict[str, str]:
    """kb/data/end-to-end.json `unpriced.rows`: a row -> why kb cannot price its metric."""
    from kb.resources import end_to_end

    return end_to_end("unpriced", lambda entry: {str(k): str(v) for k, v in entry["rows"].items()})


@lru_cache(maxsize=1)
def kv_read_per_query_head_versions() -> dict[str, tuple[str, ...]]:
    """kb/data/end-to-end.json `kv_read_per_query_head`: engine -> the versions it names."""
    from kb.resources import end_to_end, engine_versions

    return end_to_end("kv_read_per_query_head", engine_versions)


def _kv_read_per_query_head(kb: KnowledgeBase, record: Record, model: str) -> bool:
    """True when the receipt's engine version is declared to read the cache per query head.

    Only for a model that shares KV heads between query heads (grouped- or multi-query).
    """
    engine, version = record.get("engine.record"), record.get("engine.version")
    if str(version) not in kv_read_per_query_head_versions().get(str(engine), ()):
        return False
    found = kb.get(model)
    heads = found.get("geometry.heads") if found is not None else None
    kv_heads = found.get("geometry.kv_heads") if found is not None else None
    return isinstance(heads, int) and isinstance(kv_heads, int) and kv_heads < heads


MoeRates = dict[tuple[str, str, str], Fraction]  # (engine, version, hardware) -> TFLOP/s


@lru_cache(maxsize=1)
def moe_expert_rates() -> tuple[MoeRates, frozenset[str]]:
    """kb/data/end-to-end.json `moe_expert_rate`: the fitted rates, and the rows they fit.

    Each rate is TFLOP/s of an engine version's MoE expert matmuls on one accelerator;
    the rows (`receipt#results.N`) are calibration rows, which never validate.
    """
    from kb.resources import end_to_end

    return end_to_end("moe_expert_rate", _moe_rates)


def _moe_rates(entry: Any) -> tuple[MoeRates, frozenset[str]]:
    """The `moe_expert_rate` section read (ValueError on a rate not in TFLOP/s)."""
    rates: MoeRates = {}
    for engine, node in entry.items():
        if not (isinstance(node, dict) and "versions" in node):
            continue
        for hardware, rate in node["rates"].items():
            if rate["unit"] != "TFLOP/s":
                raise ValueError(f"{engine} {hardware}: a rate is in TFLOP/s")
            for version in node["versions"]:
                rates[(engine, str(version), hardware)] = Fraction(str(rate["value"]))
    return rates, frozenset(str(row) for row in entry["calibration_rows"])


def _moe_expert_rate(
    kb: KnowledgeBase, record: Record, model: str, hardware: str
) -> Fraction | None:
    """The declared MoE expert rate of the receipt's engine version on this accelerator.

    Only for a mixture-of-experts model; None elsewhere (no rate is ever implied).
    """
    engine, version = record.get("engine.record"), record.get("engine.version")
    rate = moe_expert_rates()[0].get((str(engine), str(version), hardware))
    found = kb.get(model)
    if rate is None or found is None or found.get("architecture") != "moe":
        return None
    return rate


def _first_token_rule(record: Record) -> bool:
    """True when kb/data/end-to-end.json `first_token` names the receipt's engine and version."""
    engine, version = record.get("engine.record"), record.get("engine.version")
    entry = declaration().first_token.get(str(engine))
    return entry is not None and version in entry


def _first_token(
    kb: KnowledgeBase, scenario: Scenario, result: Outcome, common: dict[str, Any]
) -> Outcome:
    """TTFT as the engine makes its first token (declared: `first_token`).

    One iteration of the engine: the prefill pass over input_tokens - 1 tokens of each
    new sequence (none for a 1-token prompt), then one decode step at a context of
    input_tokens, both from the same composition. At a batch B > 1 per replica
    (`first_token.round`): the round's first request runs that iteration alone (T_1, at
    batch 1); the other B - 1 wait for it and are prefilled in the next iteration, whose
    decode step runs at batch B (T_rest); the mean is T_1 + (B - 1)/B x T_rest. The
    outcome is returned unchanged when a term is not priced.
    """
    inputs = scenario.input_tokens or 1
    per_replica = scenario.batch // scenario.dp
    try:
        first = _iteration(kb, replace(scenario, batch=scenario.dp), inputs)
        rest = (
            _iteration(kb, scenario, inputs, prefilled=(per_replica - 1) * scenario.dp)
            if per_replica > 1
            else Fraction(0)
        )
    except ScenarioError:
        return result
    if first is None or rest is None:
        return result
    note = (
        f"first token: the prefill of {inputs - 1} tokens per sequence, then one decode step "
        f"(the engine leaves the last prompt token to the decoder)"
    )
    if per_replica > 1:
        note += (
            f"; the round's first request runs that iteration alone ({_ms(first)}), the other "
            f"{per_replica - 1} join the next ({_ms(rest)}, decode at batch {per_replica}): "
            f"mean {_ms(first)} + {per_replica - 1}/{per_replica} x {_ms(rest)}"
        )
    common["assumed"] = (*common["assumed"], note)
    return replace(result, ttft=first + Fraction(per_replica - 1, per_replica) * rest)


def _two_batch(
    kb: KnowledgeBase, scenario: Scenario, result: Outcome, common: dict[str, Any]
) -> Outcome:
    """The row's pass and step under SGLang's two-batch overlap (declared: `two_batch_overlap`).

    Unchanged (and said so) when kb cannot price it: a replica of one sequence, a half
    not priced, or no expert-parallel communication to overlap.
    """
    found = two_batch_overlap(kb, scenario, result)
    if found is None:
        note = "two_batch_overlap declared for this row, but kb finds nothing to overlap"
        common["assumed"] = (*common["assumed"], note)
        return result
    parts = "; ".join(
        f"{name}: C = {_ms(both.compute)}, M = {_ms(both.communication)} (in series "
        f"{_ms(whole.compute)} + {_ms(whole.communication)})"
        for name, whole, both in found.phases
    )
    note = (
        f"two-batch overlap (two_batch_overlap): micro-batches of {found.sizes[0]} and "
        f"{found.sizes[1]} per replica, max(C, M) in place of the compute and the expert-"
        f"parallel dispatch and combine in series; {parts}"
    )
    common["assumed"] = (*common["assumed"], note)
    return found.result


def _ray_steps(
    record: Record, scenario: Scenario, result: Outcome, common: dict[str, Any]
) -> Outcome:
    """The row's outcome with its engine version's per-step Ray time, where one is declared."""
    step = ray_step_overhead(record, scenario)
    if step is None or result.tpot is None:
        return result
    note = (
        f"each engine step + {_ms(step.seconds)}: one Ray task per Ray worker started and "
        f"collected every step (ray_step_overhead, {step.source}; measured at tp 2"
        f"{', a lower bound at tp ' + str(scenario.tp) if scenario.tp > 2 else ''})"
    )
    common["assumed"] = (*common["assumed"], note)
    return with_step_overhead(result, step.seconds)


def _iteration(
    kb: KnowledgeBase, scenario: Scenario, inputs: int, prefilled: int | None = None
) -> Fraction | None:
    """One lmdeploy iteration: prefill of `prefilled` sequences x (inputs - 1), one decode step.

    The decode step runs at the scenario's batch and a context of `inputs`; the prefill
    is of `prefilled` sequences (default: the scenario's batch). None when either is not
    priced.
    """
    step = outcome(replace(scenario, context=inputs), kb).tpot
    if inputs > 1:
        batch = scenario.batch if prefilled is None else prefilled
        prefill = outcome(replace(scenario, batch=batch, input_tokens=inputs - 1), kb).ttft
    else:
        prefill = Fraction(0)
    if step is None or prefill is None:
        return None
    return prefill + step


def _ms(seconds: Fraction) -> str:
    """Seconds as milliseconds with two decimals, for a row's assumptions."""
    return f"{float(seconds) * 1000:.2f} ms"


def _at_concurrency(row: Mapping[str, Any], scenario: Scenario) -> bool:
    """A row measured at a fixed concurrency of more than one request per replica."""
    return (
        _int(row.get("batch")) is None
        and _int(row.get("concurrency")) is not None
        and scenario.batch > scenario.dp
    )


def _serving(
    kb: KnowledgeBase, scenario: Scenario, at_c: Outcome, common: dict[str, Any]
) -> Outcome | str:
    """The outcome at the serving steady state of the row's concurrency (kb.ledger.serving).

    The decode step is `at_c`'s (batch C); the prefill pass is one prompt per replica's,
    priced by the same composed ledger. A string says why the row cannot be priced so.
    """
    from kb.ledger.serving import class_models, schedulers, steady_state

    scheduler = schedulers().get(str(scenario.engine))
    if scheduler is None:
        return (
            f"measured at concurrency {scenario.batch}: kb declares the scheduler (stalled or "
            f"mixed prefill) of {', '.join(sorted(schedulers()))} only, not of {scenario.engine}"
        )
    try:
        single = outcome(replace(scenario, batch=scenario.dp), kb)
    except ScenarioError as exc:
        return str(exc)
    if at_c.tpot is None or single.ttft is None or not scenario.output_tokens:
        return "; ".join(_words(p) for p in single.problems) or "no prefill pass to price"
    overhead = next((Fraction(r.value) for r in single.rows if r.name == "overhead"), Fraction(0))
    models = class_models(kb)
    if isinstance(models, str):
        return models
    found = steady_state(
        scheduler,
        scenario.batch // scenario.dp,
        scenario.output_tokens,
        at_c.tpot,
        single.ttft,
        overhead,
        models,
    )
    common["assumed"] = (*common["assumed"], found.formula())
    system = Fraction(scenario.batch * scenario.output_tokens) / found.latency
    states = {at_c.provenance, single.provenance}
    provenance = next((p for p in ("unverified", "estimated") if p in states), at_c.provenance)
    return replace(
        at_c,
        tpot=found.tpot,
        ttft=found.ttft,
        latency=found.latency,
        tokens_per_s_system=system,
        tokens_per_s_per_device=system / scenario.count,
        provenance=provenance,
    )


# The measures a finite run prices (kb/data/end-to-end.json `finite_run`).
FINITE_RUN_MEASURES = (
    "ttft",
    "tpot",
    "output_tokens_per_s",
    "output_tokens_per_s_per_gpu",
    "total_tokens_per_s",
)


def _finite_run_row(row: Mapping[str, Any], measures: str, engine: object) -> bool:
    """A row priced as a run of requests (declared: finite_run).

    It states its run's requests and token budget, and its engine's declared scheduler is
    mixed; any other row keeps the steady state.
    """
    from kb.ledger.serving import MIXED, schedulers

    return (
        measures in FINITE_RUN_MEASURES
        and _int(row.get("prompts")) is not None
        and _int(row.get("max_batched_tokens")) is not None
        and schedulers().get(str(engine)) == MIXED
    )


def _finite(
    kb: KnowledgeBase,
    scenario: Scenario,
    row: Mapping[str, Any],
    measures: str,
    at_c: Outcome,
    common: dict[str, Any],
    pool: Pool | None = None,
    stepped: bool = False,
    floor: str = trtllm_bench.ALWAYS,
) -> Outcome | str:
    """The outcome of a run of N requests at concurrency C (kb.ledger.finite_run).

    The decode step at batch 1 and at batch C (`at_c`), the prompt's pass at one sequence
    per replica and its per-layer overhead are the composed ledger's; the run is simulated
    per replica, in the replica's KV pool when one is given (an offline run:
    kb.ledger.paged_run), or, `stepped`, by trtllm_bench.stepped_run (a trtllm-bench
    run: the same rule at the declared time resolution, its note naming the version's budget
    `floor`). A string says why the row cannot be priced so.
    """
    from kb.ledger import pp_microbatch, uneven_dp
    from kb.ledger.finite_run import RunTooLong
    from kb.ledger.past_bound import PAST_BOUND_MEASURES, past_bound

    clients, requests = scenario.batch, int(row["prompts"])
    budget = int(row["max_batched_tokens"])
    if clients % scenario.dp:  # requests need not divide: finite_run.requests_over_dp
        return f"{clients} clients do not split over dp = {scenario.dp}"
    lanes = pp_microbatch.lanes(scenario.pp, stepped)  # declared: pipeline_microbatches
    per_stream = pp_microbatch.stream_clients(clients, scenario.dp, lanes)
    if per_stream < 1:
        return f"{clients} clients give no micro-batch to each of pp = {scenario.pp} streams"
    statistic = row.get("statistic")
    if measures in ("ttft", "tpot") and statistic not in ("mean", "median"):
        return "a run's TTFT or TPOT needs the row's `statistic` (mean or median)"
    try:
        single = outcome(replace(scenario, batch=scenario.dp), kb)
        if at_c.tpot is None:  # the run never prefills C prompts in one pass: the step alone
            at_c = outcome(replace(scenario, input_tokens=None), kb)
        if lanes > 1:  # a stream's step: the pipeline step at its own micro-batch
            micro = replace(scenario, batch=scenario.dp * per_stream, input_tokens=None)
            at_c = outcome(micro, kb)
    except ScenarioError as exc:
        return str(exc)
    stages = ""
    if lanes > 1:  # declared: pipeline_stage_split (unequal stages: the slowest sets the turn)
        at_c, stages = pp_microbatch.slowest_stage(at_c, kb)
        single = pp_microbatch.slowest_stage(single, kb)[0]
    if at_c.tpot is None or single.tpot is None or single.ttft is None:
        problems = dict.fromkeys(_words(p) for p in (*single.problems, *at_c.problems))
        return "; ".join(problems) or "no decode step or prefill pass"
    if not scenario.input_tokens or not scenario.output_tokens:
        return "a run needs its input and output tokens"
    overhead = next((Fraction(r.value) for r in single.rows if r.name == "overhead"), Fraction(0))
    times = (single.tpot, at_c.tpot, single.ttft - overhead, overhead)
    passes = PromptPasses(kb, scenario, overhead)  # declared: step_prompt_pass
    split = uneven_dp.shares(requests, scenario.dp * lanes)
    held = per_stream * scenario.dp  # every replica's stream: clients // dp when lanes == 1
    try:
        runs = [
            (
                _replica_run(kb, scenario, n, held, budget, times, pool, (stepped, floor), passes),
                replicas,
            )
            for n, replicas in split
        ]
    except RunTooLong as exc:
        if pool is None and measures in PAST_BOUND_MEASURES and lanes == 1:  # past_bound
            return past_bound(kb, scenario, requests, at_c, common, _serving)
        return f"a run of {requests} requests: {exc}"
    except ValueError as exc:
        return f"a run of {requests} requests: {exc}"
    which = str(statistic) if statistic in ("mean", "median") else "mean"
    found = uneven_dp.combine(runs, which)
    run = found.slowest
    unit = "stream(s)" if lanes > 1 else "replica(s)"
    shared = " and ".join(f"{r} {unit} of {n} requests" for n, r in split)
    common["assumed"] = (
        *common["assumed"],
        f"a run of {requests} requests at concurrency {clients} (finite_run): {run.steps} "
        f"steps of at most {budget} tokens, t_dec {float(single.tpot) * 1e3:.4g} ms at batch 1 "
        f"to {float(at_c.tpot) * 1e3:.4g} ms at batch {per_stream}, a prompt's "
        f"pass {float(single.ttft - overhead) * 1e3:.4g} ms; {which} over the requests; "
        f"duration {float(run.duration):.4g} s"
        + (f"; {shared} (requests_over_dp)" if len(split) > 1 else ""),
        *((pp_microbatch.note(clients, scenario.dp, lanes),) if lanes > 1 else ()),
        *((stages,) if stages else ()),
        passes.note(single.ttft - overhead),
        *(f"the run: {note}" for note in run.notes if not note.startswith("0 preemptions")),
    )
    states = {at_c.provenance, single.provenance}
    provenance = next((p for p in ("unverified", "estimated") if p in states), at_c.provenance)
    return replace(
        at_c,
        scenario=scenario,
        tpot=found.tpot if found.tpot is not None else at_c.tpot,
        ttft=found.ttft,
        latency=found.latency,
        tokens_per_s_system=found.system_rate,
        tokens_per_s_per_device=found.system_rate / scenario.count,
        provenance=provenance,
    )


def _replica_run(
    kb: KnowledgeBase,
    scenario: Scenario,
    requests: int,
    clients: int,
    budget: int,
    times: tuple[Fraction, Fraction, Fraction, Fraction],
    pool: Pool | None,
    bench: tuple[bool, str],
    passes: Passes,
) -> RunResult:
    """One replica's run of `requests` (kb.ledger.finite_run): in its KV pool, or stepped.

    `times`: the decode step at batch 1 and at the replica's clients, the prompt's pass
    without its overhead, and the per-layer overhead (the composed ledger's); `bench`:
    whether it is a trtllm-bench run, and its budget floor; `passes`: D at k whole prompts
    (step_prompt_pass).
    """
    from kb.ledger.paged_run import Times, simulate_paged
    from kb.ledger.run_by_step import simulate

    one, at_clients, prompt, overhead = times
    stepped, floor = bench
    inputs, outputs = scenario.input_tokens or 0, scenario.output_tokens or 0
    if pool is not None:  # declared: offline_throughput.preemption
        stall = prefill_stall(kb, scenario, prompt)
        paged = Times(one, at_clients, overhead, stall, passes)
        return simulate_paged(requests, inputs, outputs, budget, pool, paged)
    run = (clients // scenario.dp, requests, inputs, outputs, budget)
    if stepped:  # a trtllm-bench run, at its declared resolution and budget floor
        return trtllm_bench.stepped_run(
            *run, one, at_clients, prompt, overhead, floor=floor, passes=passes
        )
    return simulate(*run, one, at_clients, prompt, overhead, passes=passes)


def _judged(error: Fraction, calibration: bool) -> tuple[str, str]:
    """A priced row's state and reason: calibration rows never validate; else the band."""
    if calibration:
        return CALIBRATION, CALIBRATION_WHY
    if abs(error) <= declaration().band:
        return VALIDATED, ""
    return CONTRADICTED, "outside the band"


def _memory_row(
    kb: KnowledgeBase,
    scenario: Scenario,
    measures: str,
    measured: Fraction,
    calibration: bool,
    base: dict[str, Any],
    common: dict[str, Any],
) -> RowResult:
    """A row that measures memory at start-up: priced by the scenario's feasibility figures."""
    try:
        found = capacity(scenario, kb)
    except ScenarioError as exc:
        return RowResult(
            **base,
            **common,
            predicted=None,
            measured=measured,
            error=None,
            state=NOT_EVALUABLE,
            reason=str(exc),
        )
    predicted = memory_prediction(measures, found, scenario.input_tokens)
    if predicted is None:
        return RowResult(
            **base,
            **common,
            predicted=None,
            measured=measured,
            error=None,
            state=NOT_EVALUABLE,
            reason=f"{measures} needs the context a request is sized for (the row's input tokens)",
        )
    error = (predicted - measured) / measured
    state, reason = _judged(error, calibration)
    paging = f", paged as {found.paging}" if found.paging else ", no engine memory stated"
    return RowResult(
        **base,
        **common,
        predicted=predicted,
        measured=measured,
        error=error,
        state=state,
        reason=reason,
        provenance=f"estimated (feasibility: weights and KV cache per device{paging})",
    )


def _printable(value: Fraction, common: dict[str, Any]) -> Fraction:
    """The prediction as an exact fraction that can be printed and read back.

    kb.ledger.render.printable's rule, the one for every exact value in kb's JSON: a
    value with more than EXACT_BITS bits (an MoE expert read at a batch of thousands:
    f = 1 - (1 - k/E)^B) is replaced by the nearest fraction with a denominator of at
    most 2^64, and the row says so among its assumptions.
    """
    from kb.ledger.render import printable, rounded_note

    shown, bits = printable(value)
    if bits is not None:
        common["assumed"] = (*common["assumed"], f"prediction {rounded_note(bits)}")
    return shown


@dataclass(frozen=True)
class Distribution:
    """The validation rows' errors: how many, the median |error|, the share within the band."""

    rows: int
    with_error: int
    median_abs_error: Fraction | None
    within_band: int
    band: Fraction

    @property
    def share_within(self) -> Fraction | None:
        return Fraction(self.within_band, self.rows) if self.rows else None


def distribution(results: list[RowResult]) -> Distribution:
    """Over the validation rows (calibration and not-evaluable rows excluded)."""
    rows = [r for r in results if r.validation]
    errors = sorted(abs(r.error) for r in rows if r.error is not None)
    median = Fraction(statistics.median(errors)) if errors else None
    within = sum(1 for r in rows if r.state == VALIDATED)
    return Distribution(len(rows), len(errors), median, within, declaration().band)


def counts(results: list[RowResult]) -> dict[str, int]:
    found: dict[str, int] = {}
    for r in results:
        found[r.state] = found.get(r.state, 0) + 1
    return found


# ---- the report: one dictionary per row (`kb list --end-to-end`, the README) ----------


def percent(value: Fraction | None) -> str:
    """A relative error as a signed percentage with one decimal ('+8.0%'), '' when none."""
    if value is None:
        return ""
    tenths = round(value * 1000)  # exact: a Fraction rounds to the nearest tenth of a percent
    return f"{'-' if tenths < 0 else '+'}{abs(tenths) // 10}.{abs(tenths) % 10}%"


def conditions_text(conditions: Mapping[str, Any]) -> str:
    """The conditions of a row on one line: model, devices, degrees, batch, lengths, engine."""
    if not conditions:
        return ""

    def tail(value: Any) -> str:
        return str(value).rsplit("/", 1)[-1]

    degrees = "".join(
        f" {name}{conditions[name]}"
        for name in ("tp", "pp", "ep", "dp", "moe_tp")
        if conditions.get(name, 1) > 1
    )
    if conditions.get("dense_experts"):  # dense_expert_parallel
        degrees += " (every expert on every token)"
    if "layouts" in conditions:  # unstated_layout: the layouts it was priced under
        degrees = f" layout unstated ({' / '.join(conditions['layouts'])})"
    nodes = f" on {conditions['nodes']} nodes" if conditions["nodes"] > 1 else ""
    lengths = f"{conditions['input_tokens']}/{conditions['output_tokens'] or '-'}"
    graphs = {True: ", CUDA graphs", False: ", no CUDA graphs", None: ""}[conditions["cuda_graphs"]]
    kv = "" if conditions["kv_precision"] == "bf16" else f" (KV {conditions['kv_precision']})"
    return (
        f"{tail(conditions['model'])} on {conditions['devices']} x {tail(conditions['hardware'])}"
        f"{nodes}{degrees or ' tp1'}, batch {conditions['batch']}, {lengths} tokens, "
        f"{conditions['precision']}{kv}, {tail(conditions['engine'])}{graphs}"
    )


def report_row(result: RowResult) -> dict[str, Any]:
    """One row of the report: text for people, exact fractions for programs."""
    from kb import numfmt

    def shown(value: Fraction | None) -> str:
        return "" if value is None else numfmt.human(value, result.unit)

    def exact(value: Fraction | None) -> str | None:
        return None if value is None else str(value)

    found = {
        "receipt": result.receipt,
        "row": result.index,
        "label": result.label,
        "measures": result.measures or "",
        "conditions": conditions_text(result.conditions),
        "predicted": shown(result.predicted),
        "measured": shown(result.measured),
        "error": percent(result.error),
        "state": result.state,
        "reason": result.reason,
        "assumed": list(result.assumed),
        "provenance": result.provenance,
        "exact": {
            "predicted": exact(result.predicted),
            "measured": exact(result.measured),
            "error": exact(result.error),
            "unit": result.unit,
            "conditions": dict(result.conditions),
        },
    }
    if result.layouts:  # unstated_layout: every layout's row, as the row would be under it
        found["layouts"] = [{"layout": n, **report_row(r)} for n, r in result.layouts]
    return found


def summary(results: list[RowResult]) -> dict[str, Any]:
    """Counts by state and the validation rows' distribution."""
    found = distribution(results)
    share = found.share_within
    return {
        "rows": len(results),
        "states": counts(results),
        "validation_rows": found.rows,
        "median_abs_error": percent(found.median_abs_error).lstrip("+"),
        "within_band": found.within_band,
        "share_within_band": percent(share).lstrip("+") if share is not None else "",
        "band": percent(found.band).lstrip("+"),
        "exact": {
            "median_abs_error": None
            if found.median_abs_error is None
            else str(found.median_abs_error),
            "share_within_band": None if share is None else str(share),
            "band": str(found.band),
        },
    }
