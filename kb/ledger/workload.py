"""A composed placement: state and decode-step rows derived from the model and the flop classes.

A placement whose envelope states a `workload` (context, bytes per weight, per KV
element and per activation, all-reduces per layer, per-layer overhead) and whose
options state `degrees` (tp, pp, dp) has nothing hand-typed about the step: kb
reads the model record's geometry and evaluates the flop classes' own equations
through the one evaluator (kb/equations/evaluate.py), so `kb calc` on a class and
`kb ledger` on a placement compute a figure the same way:

- weights per device: `W = P*b_w` (flops/decode-weight-read#weight_bytes) over tp*pp;
- KV cache per token per device: `kv_tok = 2*L*n_kv*h_d*b`
  (flops/decode-kv-cache-read#kv_per_token) with L/pp layers and max(n_kv, tp)/tp KV
  heads per rank (a rank holds at least one head: past n_kv ranks heads are
  replicated); a multi-head-latent (MLA) model caches its latent,
  `derived.kv_elements_per_token` of the model record, whole on every TP rank;
- the per-rank weight read `t_w` (flops/tp-decode-allreduce-time#weight_read, which
  uses decode-weight-read) and the per-sequence KV read `t_kv`
  (flops/decode-kv-cache-read#cache_time) at the option's HBM rate;
- the per-layer all-reduces: `c*L` of `n = B*d*b` bytes
  (flops/tp-decode-allreduce-time#payload) per replica, priced like any transfer from
  the size-aware receipt curves (kb/ledger/curves.py), else the line rate;
- the per-layer overhead `L*t_o` (the last term of tp-decode-allreduce-time's step);
- an engine's per-sequence overhead `(batch/dp)*L*t_s`, only where the engine record
  declares it for the option's accelerators (`per_sequence_overhead`, fitted to its
  calibration receipts; kb/data/end-to-end.json), added to the step as the stage sends
  are: no other engine and no other accelerator gets it.

The step itself is stated once, as tp-decode-allreduce-time's equation
`step_time_parts` (t_step = t_w + t_kv + c*L*t_ar + L*t_o) or, when the option states a
compute rate, `roofline_step` (the weight read or, above the ridge, the matmuls, then the
KV read: the attention is a kernel of its own). `StepModel`
holds that equation as kb's evaluator prepares it (kb/equations/evaluate.py `prepare`),
and the ledger's T_total of a composed option is its value at the option's terms
(kb/ledger/ledger.py): the same expression `kb calc flops/tp-decode-allreduce-time
step_time` evaluates (tests/ledger/test_one_answer.py holds the two equal). Anything
kb cannot derive is a `Gap` (rule LG004), never a guess.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from kb.findings import pointer_join
from kb.kinds.placement import Degrees, FigureNode, Option, Transfer, WorkloadView
from kb.ledger.kernels import KernelCurve, decode_kernel_curve, prefill_kernel_time
from kb.ledger.parts import (
    MOE_CLASS,
    TP_CLASS,
    Part,
    _count,
    _gap_once,
    _spec,
    collective_transfer,
    evaluate_part,
    exact_spec,
    moe_layer_count,
    prefill_transfer,
)
from kb.ledger.prefill import prefill_matmul_time
from kb.ledger.quantities import Figure, QuantityError

if TYPE_CHECKING:
    from kb.ledger.paging import Paging
    from kb.ledger.reader import InputReader
    from kb.ledger.transfers import TransferSpec

WEIGHT_CLASS = "flops/decode-weight-read"
KV_CLASS = "flops/decode-kv-cache-read"
RIDGE_CLASS = "flops/prefill-gemm-ridge"


@dataclass(frozen=True)
class Model:
    """The geometry a composed placement reads from its model record."""

    id: str
    layers: int
    kv_heads: int
    attention: str
    architecture: str
    heads: int = 0  # query heads (geometry.heads; 0 when the record states none)


STEP_EQUATION = "step_time_parts"  # t_step = t_w + t_kv + c*L*t_ar + L*t_o
ROOF_EQUATION = "roofline_step"  # t_roof = max(t_w, T_math) + t_kv + c*L*t_ar + L*t_o
STEP_TERMS = ("t_w", "t_kv", "c", "L", "t_ar", "t_o")  # what the ledger binds
ROOF_TERMS = (*STEP_TERMS, "T_math")


@dataclass(frozen=True)
class StepModel:
    """One equation of the step class, as kb's evaluator prepares it, ready for many inputs.

    `expression` is the equation's right-hand side with every symbol in `terms` kept
    (kb/equations/evaluate.py `prepare`, strict: the class's own definitions are not
    expanded past them), in base units. `value` substitutes the terms, as `evaluate`
    does; a term may be a SymPy expression (the break-even solver's symbol), and the
    result is then one too.
    """

    class_id: str
    equation: str  # its id in the class
    text: str  # as authored: "t_step = t_w + t_kv + c*L*t_ar + L*t_o"
    expression: Any  # sympy.Expr over `terms`
    terms: tuple[str, ...]

    @property
    def tree(self) -> Any:
        """The expression compiled to kb's one evaluable tree (expr.to_tree), or None."""
        from kb.equations.evaluate import compiled_tree

        found = self.__dict__.get("_tree", False)
        if found is False:
            found = compiled_tree(self.expression)
            object.__setattr__(self, "_tree", found)  # a cache of a frozen field's image
        return found

    def value(self, values: Mapping[str, Any]) -> Any:
        """The step at `values` (name -> Fraction or SymPy expression), exact where they are.

        Exact inputs are evaluated on the compiled tree (kb.equations.exact, the very
        value SymPy's xreplace gives); a SymPy input (the break-even solver's symbol), or
        a value the tree has none for (a division by zero), takes SymPy's path.
        """
        import sympy as sp

        from kb.equations.evaluate import exact_at

        tree = self.tree
        if tree is not None and all(isinstance(v, (int, Fraction)) for v in values.values()):
            found = exact_at(tree, {n: Fraction(v) for n, v in values.items()})
            if found is not None:
                return found
        swap = {
            s: (sp.Rational(v.numerator, v.denominator) if isinstance(v, (int, Fraction)) else v)
            for s in self.expression.free_symbols
            for name, v in values.items()
            if s.name == name
        }
        result = self.expression.xreplace(swap)
        if isinstance(result, sp.Rational):
            return Fraction(int(result.p), int(result.q))
        if isinstance(result, sp.Integer):  # pragma: no cover - Integer is a Rational
            return Fraction(int(result))
        return result


def prepared_models(
    res: InputReader,
    class_id: str,
    wanted: tuple[tuple[str, tuple[str, ...]], ...],
    pointer: str,
    what: str,
) -> tuple[StepModel, ...] | None:
    """Equations of one class as kb's evaluator prepares them, each over the terms it binds.

    A frozen knowledge base prepares them once per run (kb.equations.evalmemo
    `Evaluations.derived`): the same class record always prepares the same way.
    """
    from kb.equations.evalmemo import evaluations

    record = res.readable(class_id)
    if record is None:
        res.blocked(pointer, class_id, what) if res.unusable(class_id) else res.gap(
            pointer, f"{what} needs {class_id}, which is not in the tree"
        )
        return None
    memo = evaluations(res.kb)
    kb = res.kb
    found = (
        _prepare_models(kb, record, class_id, wanted)
        if memo is None
        else memo.derived(
            record, ("prepared", wanted), lambda: _prepare_models(kb, record, class_id, wanted)
        )
    )
    if isinstance(found, str):
        _gap_once(res, pointer, found)
        return None
    return found


def _prepare_models(
    kb: Any, record: Any, class_id: str, wanted: tuple[tuple[str, tuple[str, ...]], ...]
) -> tuple[StepModel, ...] | str:
    """`prepared_models`' pure part: the models, or the gap's message."""
    from kb.equations.compose import compose
    from kb.equations.evaluate import EvaluationError, prepare
    from kb.equations.system import system_of

    composed = compose(kb, record).record
    system = system_of(kb, composed.data)
    models = []
    for equation, terms in wanted:
        try:
            plan = prepare(composed, system, equation, dict.fromkeys(terms), strict=True)
        except (EvaluationError, ArithmeticError) as exc:
            return f"{class_id} {equation}: {exc}"
        extra = sorted(s.name for s in plan.expanded.free_symbols if s.name not in terms)
        if extra:
            return (
                f"{class_id} {equation} ({plan.equation}) needs {', '.join(extra)}, which a "
                f"composed placement does not derive (it binds {', '.join(terms)})"
            )
        text = f"{plan.symbol} = {plan.equation}"
        models.append(StepModel(class_id, equation, text, plan.expanded, terms))
    return tuple(models)


def step_models(
    res: InputReader, listed: tuple[str, ...], pointer: str
) -> tuple[StepModel, StepModel] | None:
    """tp-decode-allreduce-time's step (memory-bound and on the roofline), prepared once."""
    if TP_CLASS not in listed:
        _gap_once(
            res,
            "/envelope/workload/composed_from",
            f"the composed step is {TP_CLASS}'s {STEP_EQUATION}; name it in composed_from",
        )
        return None
    wanted = ((STEP_EQUATION, STEP_TERMS), (ROOF_EQUATION, ROOF_TERMS))
    models = prepared_models(res, TP_CLASS, wanted, pointer, "the composed step")
    return None if models is None else (models[0], models[1])


ENERGY_CLASS = "flops/serving-energy-cost-per-token"
ENERGY_EQUATION = "energy_step"  # e_tok = N*P_dev*t_step/B
ENERGY_TERMS = ("N", "P_dev", "t_step", "B")


def energy_model(res: InputReader, listed: tuple[str, ...], pointer: str) -> StepModel | None:
    """The energy class's energy per token, when the workload names the class; else None."""
    if ENERGY_CLASS not in listed:
        return None
    wanted = ((ENERGY_EQUATION, ENERGY_TERMS),)
    models = prepared_models(res, ENERGY_CLASS, wanted, pointer, "the energy per token")
    return None if models is None else models[0]


@dataclass(frozen=True)
class Power:
    """What the option's devices draw, for the energy per token: N devices of P_dev each."""

    devices: int
    per_device: Fraction  # W
    origin: str  # the figure(s) it was read from, with their basis
    at_tdp: bool  # board power (TDP, an upper bound on draw), not a measured draw


def option_power(res: InputReader, option: Option, pointer: str) -> tuple[Power | None, str]:
    """The option's power: its own `power` (all devices), else each accelerator's `power`."""
    if option.power is not None:
        fig = res.quantity(option.power, pointer_join(pointer, "power"), "W", "power")
        if fig is None:
            return None, "the option's power did not resolve"
        count = sum(d.count or 1 for d in option.devices)
        return Power(count, fig.value / count, f"the option's power ({fig.basis})", False), ""
    total, count, origins = Fraction(0), 0, []
    for index, group in enumerate(option.devices):
        if group.hardware is None:
            return None, f"device {group.name} names no accelerator record with a power figure"
        at = pointer_join(pointer, "devices", index, "hardware")
        fig = res.quantity(f"{group.hardware}#power", at, "W", "device power")
        if fig is None:
            return None, f"{group.hardware}#power did not resolve"
        total += fig.value * (group.count or 1)
        count += group.count or 1
        origins.append(f"{group.hardware}#power = {fig.value} W ({fig.basis})")
    return Power(count, total / count, "; ".join(origins), True), ""


@dataclass(frozen=True)
class Workload:
    """The resolved `envelope.workload`."""

    context: int
    weight_bytes: Figure
    kv_bytes: Figure
    activation_bytes: Figure | None
    all_reduces_per_layer: Figure | None
    per_layer_overhead: Figure | None
    model: Model
    weights_total: Fraction  # bytes of all weights, P*b_w
    trail: tuple[str, ...]
    composed_from: tuple[str, ...] = ()
    overhead_note: str = ""  # where t_o comes from, or why there is none
    flop_per_mac: Figure | None = None
    request: tuple[int, int] | None = None  # (input_tokens, output_tokens)
    paging: Paging | None = None  # the engine's KV paging and reserve (kb.ledger.feasibility)
    steps: tuple[StepModel, StepModel] | None = None  # (memory-bound, roofline): the one step
    energy: StepModel | None = None  # the energy class's e_tok = N*P_dev*t_step/B, if named
    prefill_matmul: str | None = None  # receipt pricing the prefill's matmuls (kb.ledger.prefill)
    per_sequence: SequenceTerm | None = None  # the engine's t_s and where it is declared
    kv_read_per_query_head: bool = False  # the decode attention reads the cache per query head
    moe_expert_rate: Figure | None = None  # FLOP/s of the routed experts' matmuls (declared)
    attention_sixteen_bit: bool = False  # the prompt's attention runs 16-bit, whatever the cache
    dense_experts: bool = False  # every expert on every token: the model read and multiplied whole
    prefill_kernels: str | None = None  # receipt of the prefill's non-matmul kernel times
    engine: str | None = None  # the workload's engine: how it splits layers over pp (pp_stages)


@dataclass(frozen=True)
class SequenceTerm:
    """An engine's fitted per-sequence-per-layer decode time t_s, on its declared accelerators."""

    figure: Figure  # t_s, s per sequence per layer
    hardware: tuple[str, ...]  # the accelerators it is declared for
    note: str  # what it was fitted to, and its mechanism (or that it is unknown)


@dataclass(frozen=True)
class Derived:
    """What kb derived for one option of a composed placement."""

    degrees: Degrees
    context: int
    weights: Part  # bytes per device
    kv_per_token: Part  # KV bytes per cached token per device
    weight_read: Part  # s per step per replica (per-rank read; ranks read in parallel)
    kv_read_per_sequence: Part  # s per sequence at the context
    overhead: Part | None  # s per step: L*t_o
    overhead_figure: Figure | None
    moe: bool = False  # the weight read counts every expert (an upper bound)
    overhead_note: str = ""  # where t_o comes from, or why there is none
    math: Part | None = None  # the replica's matmul time at the compute rate (the ridge check)
    layers: int = 0  # L
    all_reduces_per_layer: Fraction = Fraction(0)  # c (0 when no all-reduce is derived)
    step: StepModel | None = None  # the class's step this option is priced by
    energy: StepModel | None = None  # the energy class's energy per token
    power: Power | None = None  # what the devices draw, for the energy per token
    power_note: str = ""  # why there is no energy per token, when there is none
    prefill_attention: Part | None = None  # the prompt's causal attention matmuls (request only)
    prefill_weight_read: Part | None = None  # MoE: the experts the whole prompt touches (request)
    prefill_math: Part | None = None  # the prompt's weight matmuls at a measured time (request)
    per_sequence: Part | None = None  # s per sequence per step: L*t_s (the engine's, declared)
    prefill_kernels: Part | None = None  # the prompt's non-matmul kernels (request only)
    decode_kernels: KernelCurve | None = None  # the step's kernels by tokens (decode_kernels)

    def sequences(self, batch: Any) -> Any:
        """Sequences one replica serves: batch / dp."""
        return batch / self.degrees.dp

    def state(self, batch: Any) -> Any:
        """Bytes per device: weights plus the KV cache of the replica's sequences."""
        return self.weights.value + self.kv_per_token.value * self.context * self.sequences(batch)


def _int_field(res: InputReader, model_id: str, path: str, pointer: str) -> int | None:
    record = res.readable(model_id)
    value = record.get(path) if record is not None else None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        res.gap(pointer, f"the workload needs {model_id}#{path}, a positive whole number")
        return None
    return value


def resolve_workload(
    res: InputReader, node: WorkloadView, model_id: str, pointer: str
) -> Workload | None:
    """Resolve the envelope's workload and the geometry of its model."""
    record = res.readable(model_id)
    if record is None:
        if res.unusable(model_id):
            res.blocked(pointer, model_id, "the workload")
        else:
            res.gap(pointer, f"the workload needs the model {model_id}, which is not in the tree")
        return None
    w_b = res.quantity(
        node.weight_bytes, pointer_join(pointer, "weight_bytes"), "B", "bytes per weight"
    )
    kv_b = res.quantity(
        node.kv_bytes, pointer_join(pointer, "kv_bytes"), "B", "bytes per KV element"
    )
    act_b = res.optional(
        node.activation_bytes,
        pointer_join(pointer, "activation_bytes"),
        "B",
        "bytes per activation element",
    )
    per_layer = res.optional(
        node.all_reduces_per_layer,
        pointer_join(pointer, "all_reduces_per_layer"),
        "1",
        "all-reduces per layer",
    )
    t_o, overhead_note = _engine_overhead(res, node, pointer)
    f_mac = res.optional(
        node.flop_per_mac, pointer_join(pointer, "flop_per_mac"), "FLOP", "FLOP per multiply-add"
    )
    layers = _int_field(res, model_id, "geometry.layers", pointer)
    kv_heads = _int_field(res, model_id, "geometry.kv_heads", pointer)
    if w_b is None or kv_b is None or layers is None or kv_heads is None:
        return None
    weights = evaluate_part(
        res,
        WEIGHT_CLASS,
        "W",
        {"P": f"{model_id}#derived.params_total", "b_w": _spec(w_b)},
        pointer_join(pointer, "weight_bytes"),
        node.composed_from,
    )
    steps = step_models(res, node.composed_from, pointer)
    energy = energy_model(res, node.composed_from, pointer)
    if weights is None or steps is None:
        return None
    model = Model(
        model_id,
        layers,
        kv_heads,
        str(record.get("geometry.attention") or ""),
        str(record.get("architecture") or ""),
        _heads(record.get("geometry.heads")),
    )
    from kb.ledger.paging import engine_paging

    return Workload(
        node.context,
        w_b,
        kv_b,
        act_b,
        per_layer,
        t_o,
        model,
        weights.value,
        weights.trail,
        node.composed_from,
        overhead_note,
        f_mac,
        node.request,
        engine_paging(res, node.engine, pointer),
        steps,
        energy,
        node.prefill_matmul,
        _engine_per_sequence(res, node, pointer),
        node.kv_read_per_query_head,
        res.optional(
            node.moe_expert_rate,
            pointer_join(pointer, "moe_expert_rate"),
            "FLOP/s",
            "the MoE experts' matmul rate",
        ),
        node.attention_sixteen_bit,
        node.dense_experts,
        node.prefill_kernels,
        node.engine,
    )


def _engine_per_sequence(res: InputReader, node: WorkloadView, pointer: str) -> SequenceTerm | None:
    """The workload's own engine's fitted t_s, if it declares one (never a fallback's)."""
    from kb.kinds import views

    if node.engine is None:
        return None
    record = res.readable(node.engine)
    view = views(res.kb).engine(record) if record is not None else None
    if view is None or view.per_sequence_overhead is None:
        return None
    term = view.per_sequence_overhead
    at = pointer_join(pointer, "engine")
    fig = res.quantity(term.figure, at, "s", f"{node.engine}'s per-sequence overhead")
    if fig is None:
        return None
    graphs = {True: ", CUDA/HIP graphs", False: ", no graphs", None: ""}[term.cuda_graphs]
    note = (
        f"fitted for {node.engine} on {', '.join(term.hardware)} to "
        f"{', '.join(term.calibration)}{graphs} (its mechanism: "
        f"{node.engine}#per_sequence_overhead.mechanism)"
    )
    return SequenceTerm(fig, term.hardware, note)


def _per_sequence_part(work: Workload, option: Option) -> Part | None:
    """L*t_s per sequence, when every device of the option is an accelerator t_s is declared for."""
    term = work.per_sequence
    if term is None or not option.devices:
        return None
    if any(group.hardware not in term.hardware for group in option.devices):
        return None
    return Part(
        work.model.layers * term.figure.value,
        f"(batch/dp)*L*t_s per step, L = {work.model.layers} layers; t_s {term.note}",
        (f"t_s from {term.figure.origin}",),
        term.figure.basis,
    )


def _engine_overhead(
    res: InputReader, node: WorkloadView, pointer: str
) -> tuple[Figure | None, str]:
    """t_o from the workload's engine, else from its named fallback, each said; else none."""
    if node.engine is None:
        return None, "no engine named: no per-layer overhead counted"
    own = _calibrated(res, node.engine, pointer_join(pointer, "engine"))
    if own is not None:
        fig, text = own
        return fig, f"calibrated for {node.engine}: {text}"
    if node.overhead_fallback is None:
        return None, (
            f"{node.engine} has no calibrated per-layer overhead and the workload names no "
            "overhead_fallback: not counted"
        )
    other = _calibrated(res, node.overhead_fallback, pointer_join(pointer, "overhead_fallback"))
    if other is None:
        res.gap(
            pointer_join(pointer, "overhead_fallback"),
            f"the overhead fallback {node.overhead_fallback} has no calibrated per-layer overhead",
        )
        return None, ""
    fig, text = other
    return fig, (
        f"estimated: {node.engine} has no calibrated per-layer overhead; the fallback "
        f"{node.overhead_fallback}'s is used ({text})"
    )


def _calibrated(res: InputReader, engine_id: str, pointer: str) -> tuple[Figure, str] | None:
    """An engine's fitted per-layer overhead and what it was fitted to, if it has one."""
    from kb.kinds import views

    record = res.readable(engine_id)
    if record is None:
        if res.unusable(engine_id):
            res.blocked(pointer, engine_id, "the per-layer overhead")
        return None
    view = views(res.kb).engine(record)
    if view is None or view.per_layer_overhead is None:
        return None
    over = view.per_layer_overhead
    fig = res.quantity(over.figure, pointer, "s", f"{engine_id}'s per-layer overhead")
    if fig is None:
        return None
    where = f" on {over.hardware}" if over.hardware else " (GPU not named)"
    graphs = {True: ", CUDA graphs", False: ", no CUDA graphs", None: ""}[over.cuda_graphs]
    return fig, f"fitted to {', '.join(over.calibration)}{where}{graphs}"


def derive_option(
    res: InputReader,
    work: Workload,
    option: Option,
    pointer: str,
    devices: int,
    batch: int,
) -> tuple[Derived, tuple[Transfer | TransferSpec, ...]] | None:
    """The derived state and step parts of one option, and its derived transfers.

    With ep > 1 the expert weights, their read and the dispatch/combine (already priced,
    TransferSpecs) come from kb.ledger.expert; with moe_tp > 1 (experts tensor-parallel under
    attention DP) the weights, the read and each MoE layer's all-gather and reduce-scatter.

    The transfers: the tensor-parallel all-reduces (tp > 1) and the pipeline stage
    sends (pp > 1). A decode step's batch is one microbatch: a token passes the pp
    stages in turn, so the weight and KV reads of the stages add up to the latency of
    the unsharded layers over tp, and each stage idles (pp - 1)/pp of the step
    (flops/pipeline-bubble's idle share at m = 1), which the throughput `batch /
    T_total` already shows. Pipelining several microbatches is not composed.
    """
    deg = option.degrees
    if deg is None:
        res.gap(
            pointer_join(pointer, "degrees"),
            "an option of a placement with a workload states its degrees (tp, pp, dp)",
        )
        return None
    ok = True
    if deg.devices != devices:
        res.gap(
            pointer_join(pointer, "degrees"),
            f"tp*pp*dp = {deg.tp}*{deg.pp}*{deg.dp} = {deg.devices}, but the option has "
            f"{devices} devices",
        )
        ok = False
    if batch % deg.dp:
        res.gap(
            pointer_join(pointer, "degrees", "dp"),
            f"the batch {batch} does not split evenly over dp = {deg.dp} replicas",
        )
        ok = False
    if deg.pp > 1 and option.stage_link is None:
        res.gap(
            pointer_join(pointer, "degrees", "pp"),
            f"pp = {deg.pp} sends each token's hidden state across {deg.pp - 1} stage "
            "boundaries, which need stage_link (the link between consecutive stages)",
        )
        ok = False
    if not _stages_split(res, work, deg, pointer):
        ok = False
    if not ok:
        return None
    return _derive(res, work, option, pointer, batch, _fixed_parts(res, work, option, pointer))


@dataclass(frozen=True)
class Fixed:
    """One mapping's batch-independent parts (kept for the run by kb.ledger.fixed)."""

    weights: Part  # bytes per device
    kv: Part  # KV bytes per cached token per device
    t_w: Part  # the per-rank weight read
    t_kv: Part  # the per-sequence KV read at the context, over the stages in turn
    overhead: Part | None  # L*t_o
    energy: tuple[StepModel | None, Power | None, str]  # _energy_inputs
    per_sequence: Part | None  # L*t_s
    transfers: tuple[Transfer, ...]  # the all-reduces (tp > 1), then the stage sends (pp > 1),
    # each followed by the prefill pass's (the whole prompt) when the workload has a request


def _fixed_parts(res: InputReader, work: Workload, option: Option, pointer: str) -> Fixed | None:
    """The option's parts that read no batch, kept for the run; None: derive them in order."""
    from kb.ledger.fixed import kept_for_run

    def derive() -> Fixed | None:
        return _derived_fixed(res, work, option, pointer)

    return kept_for_run(res, work.model.id, work, option, pointer, derive)


def _derived_fixed(res: InputReader, work: Workload, option: Option, pointer: str) -> Fixed | None:
    """Every fixed part, asked of a fresh reader; None when one is missing or records a gap.

    Only parts that a fresh reader derives without a gap are kept: a mapping that
    records one derives them again in `derive_option`'s own order, so each gap lands
    where it did and `_gap_once`'s one-finding-per-cause still holds.
    """
    from kb.ledger.reader import InputReader

    deg = option.degrees
    assert deg is not None
    fresh = InputReader(res.kb)
    kv = _kv_per_token(fresh, work, deg, pointer_join(pointer, "degrees"))
    t_w = _weight_read(fresh, work, option, pointer)
    t_kv = _kv_read(fresh, work, option, kv, pointer) if kv is not None else None
    energy = _energy_inputs(fresh, work, option, pointer)
    tp = _tp_transfer(fresh, work, option, pointer) if deg.tp > 1 else None
    send = _stage_send(fresh, work, option, pointer) if deg.pp > 1 else None
    missing = (deg.tp > 1 and tp is None) or (deg.pp > 1 and send is None)
    if fresh.gaps or kv is None or t_w is None or t_kv is None or missing:
        return None
    overhead, per_sequence = _overhead(work), _per_sequence_part(work, option)
    transfers = _with_prefill(work, ((tp, PREFILL), (send, PREFILL_SEND)))
    return Fixed(_weights(work, deg), kv, t_w, t_kv, overhead, energy, per_sequence, transfers)


def _with_prefill(
    work: Workload, made: tuple[tuple[Transfer | None, str], ...]
) -> tuple[Transfer, ...]:
    """Each decode transfer made, then (with a request) the prefill pass's, the whole prompt."""
    found: list[Transfer] = []
    for transfer, prefill_name in made:
        if transfer is not None:
            found.append(transfer)
            if work.request is not None:
                found.append(prefill_transfer(transfer, work.request[0], prefill_name))
    return tuple(found)


def _derive(
    res: InputReader,
    work: Workload,
    option: Option,
    pointer: str,
    batch: int,
    fixed: Fixed | None,
) -> tuple[Derived, tuple[Transfer | TransferSpec, ...]] | None:
    """derive_option past its checks, in its order.

    The parts that read no batch come from `fixed` when the run kept them
    (kb.ledger.fixed, `Fixed`), else they are derived here, each where it always was.
    """
    deg = option.degrees
    assert deg is not None
    weights = fixed.weights if fixed else _weights(work, deg)
    kv = fixed.kv if fixed else _kv_per_token(res, work, deg, pointer_join(pointer, "degrees"))
    t_w = fixed.t_w if fixed else _weight_read(res, work, option, pointer)
    if kv is None or t_w is None:
        return None
    moe_read = prefill_read = None
    expert = None
    if deg.ep > 1 or deg.moe_tp > 1:  # the experts split, and their collectives (kb.ledger.expert)
        from kb.ledger.expert import expert_option

        expert = expert_option(res, work, option, batch, pointer)
        if expert is None:
            return None
        weights, t_w = expert.weights, expert.weight_read
    elif _routed(work) and MOE_CLASS in work.composed_from:
        moe_read = _moe_weight_read(res, work, option, batch, pointer)
        if moe_read is None:
            return None
        t_w = moe_read
        if work.request is not None:  # routing is per token: the prompt's tokens, not its rows
            prompt = _moe_weight_read(res, work, option, batch * work.request[0], pointer, "tokens")
            if prompt is None:
                return None
            prefill_read = prompt
    t_kv = fixed.t_kv if fixed else _kv_read(res, work, option, kv, pointer)
    if t_kv is None:
        return None
    overhead = fixed.overhead if fixed else _overhead(work)
    math = _math_time(res, work, option, batch, pointer)
    attention = _attention_time(res, work, option, batch, pointer) if math is not None else None
    assert work.steps is not None  # resolve_workload returns no workload without them
    per_layer = work.all_reduces_per_layer
    derived = Derived(
        deg,
        work.context,
        weights,
        kv,
        t_w,
        t_kv,
        overhead,
        work.per_layer_overhead,
        _routed(work) and moe_read is None and expert is None,
        work.overhead_note,
        math,
        work.model.layers,
        per_layer.value if per_layer is not None and deg.tp > 1 else Fraction(0),
        work.steps[1] if math is not None else work.steps[0],
        *(fixed.energy if fixed else _energy_inputs(res, work, option, pointer)),
        attention,
        prefill_read,
        prefill_matmul_time(res, work, option, batch, pointer) if math is not None else None,
        fixed.per_sequence if fixed else _per_sequence_part(work, option),
        prefill_kernel_time(res, work, option, batch),
        decode_kernel_curve(res, work, option),
    )
    transfers: list[Transfer | TransferSpec] = list(expert.transfers if expert else ())
    if fixed is not None:  # the tp and pp transfers read no batch: made once per mapping
        return derived, (*transfers, *fixed.transfers)
    if deg.tp > 1:
        tp = _tp_transfer(res, work, option, pointer)
        if tp is None:
            return None
        transfers.append(tp)
        if work.request is not None:  # the prefill pass all-reduces the whole prompt
            transfers.append(prefill_transfer(tp, work.request[0], PREFILL))
    if deg.pp > 1:
        send = _stage_send(res, work, option, pointer)
        if send is None:
            return None
        transfers.append(send)
        if work.request is not None:  # ... and sends the whole prompt's hidden states
            transfers.append(prefill_transfer(send, work.request[0], PREFILL_SEND))
    return derived, tuple(transfers)


def _routed(work: Workload) -> bool:
    """True for an MoE model whose tokens reach only their routed experts (not `dense_experts`).

    With `dense_experts` (kb/data/end-to-end.json `dense_expert_parallel`) every expert
    runs on every token, so the step reads and multiplies the whole model as a dense one.
    """
    return work.model.architecture == "moe" and not work.dense_experts


def _stages_split(res: InputReader, work: Workload, deg: Degrees, pointer: str) -> bool:
    """Whether the layers split over the pp stages (kb.ledger.pp_stages), else a gap."""
    from kb.ledger import pp_stages

    layers, at = work.model.layers, pointer_join(pointer, "degrees", "pp")
    counts = pp_stages.split(layers, deg.pp, work.engine) if deg.pp <= layers else None
    if counts is None:
        res.gap(at, pp_stages.why_not(layers, deg.pp, work.engine))
        return False
    if not pp_stages.even(counts) and (deg.ep > 1 or deg.moe_tp > 1):
        res.gap(at, f"{pp_stages.describe(counts)} with experts split: not composed")
        return False
    return True


def _largest_stage(work: Workload, deg: Degrees) -> tuple[Fraction, str]:
    """The largest stage's share of the layers, and how it reads ('' when they split evenly)."""
    from kb.ledger import pp_stages

    counts = pp_stages.split(work.model.layers, deg.pp, work.engine)
    if counts is None or pp_stages.even(counts):
        return Fraction(1, deg.pp), ""
    return pp_stages.share(work.model.layers, counts), (
        f"the largest of pp = {deg.pp} stages ({pp_stages.describe(counts)}, "
        f"{work.engine}'s split: end-to-end.json pipeline_stage_split)"
    )


def _weights(work: Workload, deg: Degrees) -> Part:
    """Weights per device: W = P*b_w over tp*pp (kb.ledger.expert's for ep > 1).

    With stages of unequal layers, the largest stage's device: its layers' share of W over tp.
    """
    stage, uneven = _largest_stage(work, deg)
    if uneven:
        return Part(
            work.weights_total * stage / deg.tp,
            f"{WEIGHT_CLASS} W = P*b_w, times L_max/L = {stage} on {uneven}, over tp = {deg.tp}",
            work.trail,
        )
    return Part(
        work.weights_total / (deg.tp * deg.pp),
        f"{WEIGHT_CLASS} W = P*b_w, over tp*pp = {deg.tp * deg.pp} devices",
        work.trail,
    )


def _weight_read(res: InputReader, work: Workload, option: Option, pointer: str) -> Part | None:
    """The per-rank weight read t_w at the option's HBM rate (tp-decode-allreduce-time)."""
    assert option.degrees is not None
    return evaluate_part(
        res,
        TP_CLASS,
        "t_w",
        {
            "P": f"{work.model.id}#derived.params_total",
            "b_w": _spec(work.weight_bytes),
            "N": _count(option.degrees.tp),
            "BW_hbm": _rate_spec(option.rate),
        },
        pointer_join(pointer, "useful", "rate"),
        work.composed_from,
    )


def _kv_read(
    res: InputReader, work: Workload, option: Option, kv: Part, pointer: str
) -> Part | None:
    """The per-sequence KV read t_kv at the context, over the pp stages a token passes in turn."""
    deg = option.degrees
    assert deg is not None
    t_kv = evaluate_part(
        res,
        KV_CLASS,
        "t_kv",
        {
            "B": _count(1),
            "S": _count(work.context),
            "kv_tok": exact_spec(kv.value, "B"),
            "N": _count(1),
            "BW_hbm": _rate_spec(option.rate),
        },
        pointer_join(pointer, "useful", "rate"),
        work.composed_from,
    )
    if t_kv is None:
        return None
    stage, uneven = _largest_stage(work, deg)
    if uneven:  # the largest stage's read, times the L/L_max stage-loads a token passes
        t_kv = Part(
            t_kv.value / stage,
            f"{t_kv.formula}, on {uneven}, times L/L_max = {1 / stage}: every layer in turn",
            t_kv.trail,
        )
    elif deg.pp > 1:  # one token passes every stage in turn: each reads its layers' cache
        t_kv = Part(
            t_kv.value * deg.pp,
            f"{t_kv.formula}, per stage, times pp = {deg.pp} stages in turn",
            t_kv.trail,
        )
    return _per_query_head_read(work, deg, t_kv)


def _overhead(work: Workload) -> Part | None:
    """L*t_o, when the workload has a per-layer overhead."""
    if work.per_layer_overhead is None:
        return None
    return Part(
        work.model.layers * work.per_layer_overhead.value,
        f"{TP_CLASS}: L*t_o, L = {work.model.layers} layers; t_o {work.overhead_note}",
        (f"t_o from {work.per_layer_overhead.origin}",),
        work.per_layer_overhead.basis,
    )


def _energy_inputs(
    res: InputReader, work: Workload, option: Option, pointer: str
) -> tuple[StepModel | None, Power | None, str]:
    """The energy model and the option's power, or why the ledger has no energy per token."""
    if work.energy is None:
        return None, None, f"none entered: name {ENERGY_CLASS} in composed_from to price it"
    power, why = option_power(res, option, pointer)
    return work.energy, power, (f"none entered: {why}" if power is None else "")


def _moe_weight_read(
    res: InputReader,
    work: Workload,
    option: Option,
    batch: int,
    pointer: str,
    what: str = "sequences",
) -> Part | None:
    """An MoE step reads the shared weights and the routed experts the batch touches.

    flops/moe-decode-expert-read's step_bound at the replica's batch, over tp ranks
    (each reads 1/tp of every weight it reads): f = 1 - (1 - k/E)^B of the routed
    experts of the MoE layers (kb.ledger.parts.moe_layer_count). The router picks experts per
    token, so a decode step's B is its sequences (one token each) and a prefill pass's
    B is every prompt token of the replica (`what` = "tokens"): a 128-token prompt of
    Mixtral touches 1 - (3/4)^128, i.e. all, of its eight experts, not the two one token does.
    """
    deg = option.degrees
    assert deg is not None
    model = work.model.id
    record = res.readable(model)
    if record is None:
        return None
    moe_layers = moe_layer_count(record)
    width = "d_ff_expert" if record.get("geometry.d_ff_expert") is not None else "d_ff"
    if moe_layers < 1:
        res.gap(pointer, f"{model} states no MoE layers (its geometry's layer kinds)")
        return None
    from kb.equations.evaluate import Product

    rate = _rate_spec(option.rate)
    routed = Fraction(batch, deg.dp)
    saturated = _saturation(record.get("geometry.experts_active"), record.get("geometry.experts"))
    capped = saturated is not None and routed > saturated
    part = evaluate_part(
        res,
        MOE_CLASS,
        "t_step",
        {
            "P_total": f"{model}#derived.params_total",
            "k": f"{model}#geometry.experts_active",
            "E": f"{model}#geometry.experts",
            "L": _count(moe_layers),
            "d": f"{model}#geometry.d_model",
            "d_ff": f"{model}#geometry.{width}",
            "B": _count(saturated if capped and saturated is not None else routed),
            "b_w": _spec(work.weight_bytes),
            "BW_hbm": Product(f"BW_hbm * {deg.tp}", ((1, rate), (1, _count(deg.tp)))),
        },
        pointer_join(pointer, "useful", "rate"),
        work.composed_from,
    )
    if part is None:
        return None
    cap = (
        f" (B taken as {saturated}: (1 - k/E)^B < 2^-{SATURATION_BITS} from there on)"
        if capped
        else ""
    )
    return Part(
        part.value,
        f"{part.formula}: the shared weights and the routed experts {batch // deg.dp} "
        f"{what} touch, over tp = {deg.tp} ranks{cap}",
        part.trail,
    )


SATURATION_BITS = 64


def _saturation(k: Any, experts: Any) -> int | None:
    """The batch from which every routed expert is touched to within 2^-64: f = 1 - (1-k/E)^B.

    Past it the exact power only grows (its numerator has about B*log2(E) bits: a
    maximum-load prefill of 500 prompts of 5,000 tokens would carry millions), while f
    changes by less than 2^-64, below any figure kb reports. The smallest whole B with
    (1 - k/E)^B < 2^-64, checked exactly; None when k or E is not a whole number.
    """
    if not (isinstance(k, int) and isinstance(experts, int)) or not 0 < k < experts:
        return None
    return _saturated_batch(k, experts)


@functools.lru_cache(maxsize=256)
def _saturated_batch(k: int, experts: int) -> int:
    """`_saturation` of whole k < E, kept per process: a pure function of the two counts.

    A pass asks it twice per MoE scenario (the decode step and the prefill), and its exact
    powers (a numerator of ~10^4 bits for E = 256) were ~2% of a planner's pass.
    """
    miss = Fraction(experts - k, experts)
    bound = Fraction(1, 2**SATURATION_BITS)
    found = max(1, math.ceil(SATURATION_BITS * math.log(2) / -math.log(float(miss))))
    while miss**found >= bound:  # the float estimate, made exact
        found += 1
    while found > 1 and miss ** (found - 1) < bound:
        found -= 1
    return found


def _math_time(
    res: InputReader, work: Workload, option: Option, batch: int, pointer: str
) -> Part | None:
    """The matmul time of the replica's tokens at the option's compute rate, over tp.

    flops/prefill-gemm-ridge's math_time `T_math = f_mac*B*P/C` with the active
    parameters (the whole model for a dense one, or with `dense_experts`), B = batch/dp
    and C the compute of the tp ranks. Only with `useful.compute_rate`, `flop_per_mac`
    and the class named.
    """
    deg = option.degrees
    if option.compute_rate is None or deg is None:
        return None
    if work.flop_per_mac is None or RIDGE_CLASS not in work.composed_from:
        res.gap(
            pointer_join(pointer, "useful", "compute_rate"),
            f"a compute rate checks the step against the ridge, which needs "
            f"envelope.workload.flop_per_mac and {RIDGE_CLASS} in composed_from",
        )
        return None
    from kb.equations.evaluate import Product

    model = work.model.id
    record = res.readable(model)
    active = "params_active" if record and record.get("derived.params_active") else "params_total"
    if work.dense_experts:  # every expert multiplies every token (dense_expert_parallel)
        active = "params_total"
    rate = _rate_spec(option.compute_rate)
    at = pointer_join(pointer, "useful", "compute_rate")
    bindings = {
        "f_mac": _spec(work.flop_per_mac),
        "B": _count(Fraction(batch, deg.dp)),
        "P": f"{model}#derived.{active}",
        "C": Product(f"C * {deg.tp}", ((1, rate), (1, _count(deg.tp)))),
    }
    if work.moe_expert_rate is None or work.model.architecture != "moe":
        return evaluate_part(res, RIDGE_CLASS, "T_math", bindings, at, work.composed_from)
    experts = _routed_active(res, work, record, at)
    if experts is None:
        return None
    return _math_time_moe(res, work, deg, bindings, experts, at)


def _routed_active(res: InputReader, work: Workload, record: Any, at: str) -> Fraction | None:
    """The routed experts' active parameters: flops/moe-decode-expert-read's P_exp x k/E.

    P_exp = 3*L*E*d*d_ff (`expert_params`) over the MoE layers (parts.moe_layer_count) at
    the experts' width (d_ff_expert where the model states one), as the weight read
    prices them; one token routes to k of the E experts. None, with the gap, when the
    model states them not.
    """
    model = work.model.id
    k = record.get("geometry.experts_active") if record is not None else None
    experts = record.get("geometry.experts") if record is not None else None
    moe_layers = moe_layer_count(record)
    if moe_layers < 1 or not (isinstance(k, int) and isinstance(experts, int) and 0 < k):
        res.gap(at, f"{model} states no routed experts (experts, experts_active, MoE layers)")
        return None
    width = "d_ff_expert" if record.get("geometry.d_ff_expert") is not None else "d_ff"
    part = evaluate_part(
        res,
        MOE_CLASS,
        "expert_params",
        {
            "L": _count(moe_layers),
            "E": f"{model}#geometry.experts",
            "d": f"{model}#geometry.d_model",
            "d_ff": f"{model}#geometry.{width}",
        },
        at,
        work.composed_from,
    )
    return None if part is None else Fraction(part.value) * k / experts


def _math_time_moe(
    res: InputReader,
    work: Workload,
    deg: Degrees,
    bindings: dict[str, Any],
    experts: Fraction,
    at: str,
) -> Part | None:
    """T_math with the routed experts at the engine's MoE rate, the rest at the compute rate.

    kb/data/end-to-end.json `moe_expert_rate` (declared before pricing): the class's
    `T_math = f_mac*B*P/C` evaluated twice, once for the active parameters less the routed
    experts' P_e at the option's C, once for P_e at the rate r of the workload's
    `moe_expert_rate`, both over the tp ranks.
    """
    from kb.equations.evaluate import Product

    assert work.moe_expert_rate is not None
    rest = evaluate_part(
        res,
        RIDGE_CLASS,
        "T_math",
        {**bindings, "P": _rest_spec(res, experts, str(bindings["P"]))},
        at,
        work.composed_from,
    )
    r = work.moe_expert_rate
    routed = evaluate_part(
        res,
        RIDGE_CLASS,
        "T_math",
        {
            **bindings,
            "P": exact_spec(experts, "1"),
            "C": Product(f"r * {deg.tp}", ((1, _spec(r)), (1, _count(deg.tp)))),
        },
        "/envelope/workload/moe_expert_rate",
        work.composed_from,
    )
    if rest is None or routed is None:
        return None
    return Part(
        rest.value + routed.value,
        f"{rest.formula} for the non-expert P_active - P_e, plus {routed.formula} for the "
        f"routed experts' P_e = {experts} at the engine's MoE rate r = {float(r.value):.4g} FLOP/s "
        f"({r.origin}; kb/data/end-to-end.json moe_expert_rate)",
        (*rest.trail, *routed.trail, f"r from {r.origin}"),
        "estimated",
    )


def _rest_spec(res: InputReader, experts: Fraction, active: str) -> Any:
    """P - P_e as an exact count binding: the model's active parameters less the routed ones.

    `active` is the binding T_math reads (`model#derived.params_active`, or the total
    where the model states no active count).
    """
    model_id, field = active.split("#", 1)
    record = res.readable(model_id)
    node = record.get(field) if record is not None else None
    total = _quantity_value(node) if node is not None else Fraction(0)
    return exact_spec(max(total - experts, Fraction(0)), "1")


def _attention_time(
    res: InputReader, work: Workload, option: Option, batch: int, pointer: str
) -> Part | None:
    """The causal attention matmuls of the request's prompts, at the tp ranks' compute rate.

    flops/prefill-gemm-ridge's attention_time `T_attn = f_mac*L*n_seq*n_h*h_d*s^2/C` with
    every layer (the stages of one microbatch run in turn), the replica's sequences, the
    model's query heads and head dimension (d_model/heads when the record states no
    head_dim; for multi-head latent attention the mean of the query/key width,
    qk_nope + qk_rope, and the value width, since QK^T contracts over the one and PV
    over the other), s = the prompt and C the compute of the tp ranks (the heads split
    over them), at the attention's own format (kb.ledger.attention_rate: 16-bit where
    the KV cache is, whatever the weights' format).
    None without a request; called only where the weight matmuls are priced (_math_time).
    """
    deg = option.degrees
    if work.request is None or deg is None or option.compute_rate is None:
        return None
    assert work.flop_per_mac is not None  # _math_time priced the matmuls
    from kb.equations.evaluate import Product

    model = work.model.id
    record = res.readable(model)
    if record is None:
        return None
    head: Any = (
        f"{model}#geometry.head_dim"
        if record.get("geometry.head_dim") is not None
        else Product(
            "d_model/heads",
            ((1, f"{model}#geometry.d_model"), (-1, f"{model}#geometry.heads")),
        )
    )
    widths = [record.get(f"geometry.{k}") for k in ("qk_nope_head_dim", "qk_rope_head_dim")]
    v_width = record.get("geometry.v_head_dim")
    mla = work.model.attention == "mla"
    if mla and all(isinstance(w, int) for w in (*widths, v_width)):
        # QK^T contracts over the query/key width, PV over the value width: their mean
        head = exact_spec(Fraction(widths[0] + widths[1] + v_width, 2), "1")
    from kb.ledger.attention_rate import attention_rate

    rate, why = attention_rate(
        res, work.kv_bytes.value, option.compute_rate, work.attention_sixteen_bit
    )
    part = evaluate_part(
        res,
        RIDGE_CLASS,
        "T_attn",
        {
            "f_mac": _spec(work.flop_per_mac),
            "L": _count(work.model.layers),
            "n_seq": _count(Fraction(batch, deg.dp)),
            "n_h": f"{model}#geometry.heads",
            "h_d": head,
            "s": _count(work.request[0]),
            "C": Product(f"C * {deg.tp}", ((1, rate), (1, _count(deg.tp)))),
        },
        pointer_join(pointer, "useful", "compute_rate"),
        work.composed_from,
    )
    if part is None:
        return None
    return Part(
        part.value,
        f"{part.formula}: the causal attention over {work.request[0]}-token prompts of "
        f"{Fraction(batch, deg.dp)} sequences, over tp = {deg.tp} ranks; {why}",
        part.trail,
    )


def _rate_spec(rate: FigureNode) -> Any:
    """The option's useful rate as an evaluator binding: `id#field` text or a quantity."""
    if isinstance(rate, str):
        return rate
    return {"value": rate["value"], "unit": rate["unit"]}


def _kv_per_token(res: InputReader, work: Workload, deg: Degrees, pointer: str) -> Part | None:
    model = work.model
    if model.attention == "mla":
        record = res.readable(model.id)
        node = record.get("derived.kv_elements_per_token") if record else None
        try:
            elements = _quantity_value(node)
        except QuantityError:
            res.gap(pointer, f"an MLA model needs {model.id}#derived.kv_elements_per_token")
            return None
        stage, uneven = _largest_stage(work, deg)
        return Part(
            elements * work.kv_bytes.value * stage,
            f"{model.id}#derived.kv_elements_per_token * b "
            + (f"* L_max/L on {uneven}" if uneven else "/ pp")
            + ": the MLA latent, held whole by every tensor-parallel rank (no flop class "
            "shards it by head)",
            (f"kv_elements_per_token = {elements}", f"b = {work.kv_bytes.value} B"),
        )
    heads = Fraction(max(model.kv_heads, deg.tp), deg.tp)
    record = res.readable(model.id)
    head = (
        {"h_d": f"{model.id}#geometry.head_dim"}
        if record is not None and record.get("geometry.head_dim") is not None
        else {"d": f"{model.id}#geometry.d_model", "H": f"{model.id}#geometry.heads"}
    )
    return evaluate_part(
        res,
        KV_CLASS,
        "kv_tok",
        {
            "L": _count(model.layers * _largest_stage(work, deg)[0]),
            "n_kv": _count(heads),
            "b": _spec(work.kv_bytes),
            **head,
        },
        pointer,
        work.composed_from,
    )


def _heads(value: Any) -> int:
    """A model record's query-head count, 0 when it states none as an integer."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _per_query_head_read(work: Workload, deg: Degrees, t_kv: Part) -> Part:
    """The KV read of a decode attention that reads the cache once per query head.

    kb/data/end-to-end.json `kv_read_per_query_head` (declared before pricing): an attention
    kernel without grouped-query sharing (TensorRT-LLM before its XQA kernel) runs one block
    per query head, each loading its KV head's cache, so a rank reads its cache
    heads / max(kv_heads, tp) times over (the query heads it runs over the KV heads it holds).
    The cache's size is unchanged; L2 hits between a group's heads are not counted (an upper
    bound). Unchanged without the workload's flag, for MLA and for multi-head attention.
    """
    model = work.model
    if not work.kv_read_per_query_head or model.attention == "mla":
        return t_kv
    ratio = Fraction(model.heads, max(model.kv_heads, deg.tp))
    if ratio <= 1:
        return t_kv
    return Part(
        t_kv.value * ratio,
        f"{t_kv.formula}, read once per query head: times heads/max(kv_heads, tp) = {ratio} "
        "(an attention kernel without grouped-query sharing; kb/data/end-to-end.json "
        "kv_read_per_query_head)",
        t_kv.trail,
    )


def _quantity_value(node: Any) -> Fraction:
    from kb.ledger.quantities import figure

    return figure(node, "").value


def _stage_send(res: InputReader, work: Workload, option: Option, pointer: str) -> Transfer | None:
    """The pp - 1 stage boundaries: each sends d_model activations per sequence per token."""
    deg, link = option.degrees, option.stage_link
    assert deg is not None and link is not None
    if work.activation_bytes is None:
        res.gap(
            pointer_join(pointer, "stage_link"),
            "the stage sends need envelope.workload.activation_bytes",
        )
        return None
    size = evaluate_part(
        res,
        TP_CLASS,
        "n",
        {
            "B": _count(1),
            "d": f"{work.model.id}#geometry.d_model",
            "b": _spec(work.activation_bytes),
        },
        pointer_join(pointer, "stage_link"),
        work.composed_from,
    )
    if size is None:
        return None
    return Transfer(
        name="pp-stage-send",
        pattern="point-to-point",
        link=link.link,
        ranks=2,
        count=deg.pp - 1,
        message_size={
            "value": size.value / deg.dp,
            "unit": "B",
            "basis": "derived",
            "source": TP_CLASS,
        },
        scales_with_batch=True,
        algorithm=None,
        cuda_graphs=None,
        receipt=link.receipt,
        link_latency=link.link_latency,
        overlap=None,
        strategy="strategies/pipeline-parallel",
    )


PREFILL = "tp-prefill-all-reduce"
PREFILL_SEND = "pp-prefill-stage-send"


def _tp_transfer(res: InputReader, work: Workload, option: Option, pointer: str) -> Transfer | None:
    """The per-layer all-reduces as one transfer: c*L of n = d*b bytes per sequence."""
    deg = option.degrees
    assert deg is not None
    coll = option.tp_collective
    missing = [
        name
        for name, value in (
            ("tp_collective", coll),
            ("envelope.workload.activation_bytes", work.activation_bytes),
            ("envelope.workload.all_reduces_per_layer", work.all_reduces_per_layer),
        )
        if value is None
    ]
    if missing or coll is None or work.activation_bytes is None:
        res.gap(
            pointer_join(pointer, "degrees", "tp"),
            f"tp = {deg.tp} derives per-layer all-reduces, which need {', '.join(missing)}",
        )
        return None
    per_layer = work.all_reduces_per_layer
    assert per_layer is not None
    if per_layer.value.denominator != 1 or per_layer.value < 1:
        res.gap(pointer, "all-reduces per layer must be a positive whole number")
        return None
    size = evaluate_part(
        res,
        TP_CLASS,
        "n",
        {
            "B": _count(1),
            "d": f"{work.model.id}#geometry.d_model",
            "b": _spec(work.activation_bytes),
        },
        pointer_join(pointer, "tp_collective"),
        work.composed_from,
    )
    if size is None:
        return None
    count = int(per_layer.value) * work.model.layers
    return collective_transfer(
        coll, "tp-all-reduce", "all-reduce", deg.tp, count, size.value / deg.dp
    )
