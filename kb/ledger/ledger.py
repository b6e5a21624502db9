"""The critical-path ledger of one feasible option, row by row.

    Traw     = messages*link_latency + bytes/effective_bandwidth          (per transfer)
    Texposed = max(0, Traw - min(Traw, overlap_with_useful_compute))      (per transfer)
    Ttotal   = Tuseful + Texposed + Tsync + Tinput_imbalance + Treplication_or_migration
               + Tremote_memory_or_paging + Torchestration_or_recovery

Hidden communication is never counted twice: each transfer's overlap window is carved
out of Tuseful in order (a transfer uses up only the time it actually hides), so the
hidden time of all transfers together never exceeds the useful compute that hides it,
and hidden time appears in no row. Values are exact Fractions; any
input may instead be a SymPy symbol (the break-even solver passes one), which is why
min/max go through `_min`/`_max`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from kb.ledger.inputs import OVERHEADS, Envelope, OptionSpec
from kb.ledger.kernels import decode_kernel_text, decode_kernel_time
from kb.ledger.transfers import TransferSpec, bus_factor, collective_steps

Num = Any  # Fraction, or a SymPy expression when solving for a break-even


def basis_label(measured: bool, *figures: Any) -> str:
    """A row's provenance: measured; unverified if any figure feeding it is; else estimated."""
    if measured:
        return "measured"
    unverified = any(getattr(f, "basis", "") == "unverified" for f in figures if f is not None)
    return "unverified" if unverified else "estimated"


def _exact(*values: Num) -> bool:
    return all(isinstance(v, (int, Fraction)) for v in values)


def _min(a: Num, b: Num) -> Num:
    if _exact(a, b):
        return min(a, b)
    import sympy

    return sympy.Min(a, b)


def _max(a: Num, b: Num) -> Num:
    if _exact(a, b):
        return max(a, b)
    import sympy

    return sympy.Max(a, b)


def exposed_time(raw: Num, overlap: Num) -> Num:
    """Texposed = max(0, Traw - min(Traw, overlap))."""
    return _max(Fraction(0), raw - _min(raw, overlap))


@dataclass(frozen=True)
class Row:
    """One ledger row: value (seconds), formula, inputs and provenance."""

    name: str
    value: Num
    formula: str
    inputs: Mapping[str, Any]
    provenance: str  # measured | estimated | unverified (an input is) | none (nothing entered)
    receipts: tuple[str, ...] = ()


@dataclass(frozen=True)
class TransferCost:
    name: str
    link: str
    messages: int
    bytes: Num
    latency: Num
    bandwidth: Num
    raw: Num
    overlap: Num
    exposed: Num
    provenance: str
    receipts: tuple[str, ...]
    pricing: str = ""  # which receipt rows priced it, or why the line rate did


@dataclass(frozen=True)
class Energy:
    """Energy per output token of the decode step (J): value, formula, inputs, provenance.

    `value` is None when nothing is entered to price it (`provenance` "none", and
    `formula` says what is missing); otherwise an estimate: at TDP when the power is
    the accelerators' board power, an upper bound on what they draw.
    """

    value: Fraction | None
    formula: str
    inputs: Mapping[str, Any]
    provenance: str


@dataclass(frozen=True)
class Ledger:
    option: str
    rows: tuple[Row, ...]
    transfers: tuple[TransferCost, ...] = field(default=())
    composed: Num = None  # a composed option: the step class's equation at its terms, + the rest
    composed_formula: str = ""  # how `composed` was evaluated
    energy: Energy | None = None  # a composed option: energy per output token of the step

    @property
    def rows_sum(self) -> Num:
        """The sum of the rows."""
        return sum((row.value for row in self.rows), Fraction(0))

    @property
    def total(self) -> Num:
        """Ttotal: the sum of the rows; composed, the class's step (which the rows split)."""
        return self.rows_sum if self.composed is None else self.composed

    def row(self, name: str) -> Row:
        return next(r for r in self.rows if r.name == name)


@dataclass(frozen=True)
class Overrides:
    """Inputs replaced for one evaluation: by `--set` or by the break-even solver."""

    batch: Num = None
    bandwidth: Mapping[str, Num] = field(default_factory=dict)  # link id -> B/s
    latency: Mapping[str, Num] = field(default_factory=dict)  # link id -> s


def composed_useful_row(envelope: Envelope, option: OptionSpec, batch: Num = None) -> Row:
    """Tuseful of a composed placement: the per-rank weight read plus the replica's KV read."""
    derived = option.derived
    assert derived is not None
    batch = envelope.batch if batch is None else batch
    sequences = derived.sequences(batch)
    kv = derived.kv_read_per_sequence.value * sequences
    moe = (
        "; MoE: every expert counted, an upper bound (flops/moe-decode-expert-read's "
        "routed fraction is not composed yet)"
        if derived.moe
        else ""
    )
    memory = derived.weight_read.value + kv
    formula = (
        f"t_w + (batch/dp)*t_kv: per-rank weight read ({derived.weight_read.formula}) plus "
        f"the KV-cache read of the replica's sequences (flops/decode-kv-cache-read cache_time){moe}"
    )
    value: Num = memory
    if derived.math is not None:
        math = derived.math.value * batch / envelope.batch  # linear in the batch
        # the weight matmuls and the attention over the cache are kernels run in turn
        value = _max(derived.weight_read.value, math) + kv
        formula = (
            f"max(t_w, T_math) + (batch/dp)*t_kv: the per-rank weight read "
            f"({derived.weight_read.formula}) or, above the ridge (compute-bound), the "
            f"replica's matmuls at the tp ranks' compute rate ({derived.math.formula}), then "
            "the KV-cache read of "
            "the replica's sequences (flops/decode-kv-cache-read cache_time), a kernel of its "
            f"own: flops/tp-decode-allreduce-time's roofline_step{moe}"
        )
    return Row(
        "useful",
        value,
        formula,
        {
            "t_w": derived.weight_read.value,
            "t_w_trail": "; ".join(derived.weight_read.trail),
            "t_kv_per_sequence": derived.kv_read_per_sequence.value,
            "t_kv_trail": "; ".join(derived.kv_read_per_sequence.trail),
            "sequences": sequences,
            "context": derived.context,
            "rate_from": option.useful_rate.origin,
            **({"t_math": derived.math.value} if derived.math else {}),
        },
        basis_label(False, option.useful_rate),
    )


def composed_overhead_row(option: OptionSpec, batch: Num) -> Row:
    """L*t_o of a composed placement: 0 and `none` when no per-layer overhead is entered.

    Where the engine declares a per-sequence overhead for the option's accelerators,
    the row also holds (batch/dp)*L*t_s (`per_sequence_time`, Derived.per_sequence).
    """
    derived = option.derived
    assert derived is not None
    seq = derived.per_sequence
    if derived.overhead is None and seq is None and derived.decode_kernels is None:
        return Row("overhead", Fraction(0), derived.overhead_note, {}, "none")
    value: Num = derived.overhead.value if derived.overhead is not None else Fraction(0)
    formula = derived.overhead.formula if derived.overhead is not None else derived.overhead_note
    inputs: dict[str, Any] = {}
    if derived.overhead is not None:
        inputs = {
            "t_o": derived.overhead_figure.value if derived.overhead_figure else None,
            "t_o_from": "; ".join(derived.overhead.trail),
        }
    kernels = derived.decode_kernels
    if kernels is not None:  # kb/data/end-to-end.json decode_kernels
        grown = decode_kernel_time(kernels, batch)
        value, formula = value + grown, f"{formula}; + {decode_kernel_text(kernels)}"
        inputs["kernels"] = grown
    if seq is not None:
        extra = per_sequence_time(option, batch)
        value = value + extra
        formula = f"{formula}; + {seq.formula}"
        inputs |= {
            "t_s": seq.value / derived.layers,
            "t_s_from": "; ".join(seq.trail),
            "per_sequence": extra,
        }
    return Row("overhead", value, formula, inputs, basis_label(False, derived.overhead_figure))


def per_sequence_time(option: OptionSpec, batch: Num) -> Num:
    """(batch/dp)*L*t_s: the engine's per-sequence decode time at `batch`, 0 without one."""
    derived = option.derived
    if derived is None or derived.per_sequence is None:
        return Fraction(0)
    return derived.per_sequence.value * derived.sequences(batch)


def _measured(row: Row, option: OptionSpec) -> Row:
    """A derived row replaced by its measurement: shown as measured, the derived value kept."""
    term = option.measured.get(row.name)
    if term is None:
        return row
    return Row(
        row.name,
        term.time.value,
        f"as measured by {term.receipt} (derived: {row.formula})",
        {"derived": row.value, "rel_tol": term.rel_tol, "pointer": term.pointer},
        "measured",
        (term.receipt,),
    )


def useful_row(envelope: Envelope, option: OptionSpec, batch: Num = None) -> Row:
    """Tuseful: the work over the rate, or the roofline max of memory and compute terms."""
    if option.derived is not None:
        return composed_useful_row(envelope, option, batch)
    rate, parallel = option.useful_rate, option.useful_parallel
    memory = envelope.useful_work.value / (parallel * rate.value)
    inputs: dict[str, Any] = {
        "useful_work": envelope.useful_work.value,
        "parallel": parallel,
        "rate": rate.value,
        "rate_from": rate.origin,
    }
    measured = rate.measured
    if envelope.flops_per_item is None or option.compute_rate is None:
        return Row(
            "useful",
            memory,
            "useful_work / (parallel * rate)",
            inputs,
            basis_label(measured, rate, envelope.useful_work),
        )
    batch = envelope.batch if batch is None else batch
    compute = envelope.flops_per_item.value * batch / (parallel * option.compute_rate.value)
    inputs |= {
        "flops_per_item": envelope.flops_per_item.value,
        "batch": batch,
        "compute_rate": option.compute_rate.value,
        "compute_rate_from": option.compute_rate.origin,
    }
    measured = measured and option.compute_rate.measured
    return Row(
        "useful",
        _max(memory, compute),
        "max(useful_work / (parallel * rate), flops_per_item * batch / (parallel * compute_rate))",
        inputs,
        basis_label(
            measured, rate, envelope.useful_work, envelope.flops_per_item, option.compute_rate
        ),
    )


def _bandwidth(t: TransferSpec, over: Overrides) -> Num:
    """The transfer's bandwidth; a link's overridden figure is one port's (cross_node_rails).

    A ring over every NIC of a node (`t.rings`) sees min(c_r*x, W_intra) when the port's
    rate is x, as kb.ledger.rails prices it at the record's line rate.
    """
    port = over.bandwidth.get(t.link)
    if port is None:
        return t.bandwidth.value
    return port if t.rings is None else _min(t.rings.count * port, t.rings.intra)


def transfer_cost(t: TransferSpec, batch: Num, window: Num, over: Overrides) -> TransferCost:
    """Price one transfer: alpha-beta raw time, then what the overlap window hides."""
    size = t.message_size.value * (batch if t.scales_with_batch else 1)
    messages = t.count * collective_steps(t.pattern, t.ranks)
    moved = t.count * bus_factor(t.pattern, t.ranks) * size
    # a measured transfer's latency is inside its receipt's bandwidth: never varied or re-added
    latency = t.latency.value if t.receipts else over.latency.get(t.link, t.latency.value)
    bandwidth = _bandwidth(t, over)
    raw = messages * latency + moved / bandwidth
    measured = bool(t.receipts)  # bandwidth and latency both inside the receipt's timing
    return TransferCost(
        t.name,
        t.link,
        messages,
        moved,
        latency,
        bandwidth,
        raw,
        window,
        exposed_time(raw, window),
        basis_label(measured, t.latency, t.bandwidth, t.message_size),
        t.receipts,
        t.pricing,
    )


def _transfer_costs(
    envelope: Envelope, option: OptionSpec, useful: Num, over: Overrides
) -> list[TransferCost]:
    batch = envelope.batch if over.batch is None else over.batch
    budget, costs = useful, []
    for spec in option.transfers:
        claimed = spec.overlap.value if spec.overlap else Fraction(0)
        cost = transfer_cost(spec, batch, _min(claimed, budget), over)
        budget = budget - (cost.raw - cost.exposed)  # only time actually hidden is used up
        costs.append(cost)
    return costs


def exposed_row(costs: list[TransferCost]) -> Row:
    if not costs:
        return Row("exposed", Fraction(0), "no transfers", {}, "none")
    receipts = tuple(sorted({r for c in costs for r in c.receipts}))
    states = {c.provenance for c in costs}
    label = "unverified" if "unverified" in states else "estimated"
    return Row(
        "exposed",
        sum((c.exposed for c in costs), Fraction(0)),
        "sum over transfers of max(0, Traw - min(Traw, overlap))",
        {c.name: c.exposed for c in costs},
        "measured" if states == {"measured"} else label,
        receipts,
    )


def overhead_rows(option: OptionSpec) -> list[Row]:
    rows = []
    for name in OVERHEADS:
        entry = option.overheads.get(name)
        if entry is None:
            rows.append(Row(name, Fraction(0), "not entered in the placement", {}, "none"))
            continue
        measured = bool(entry.receipt)
        rows.append(
            Row(
                name,
                entry.time.value,
                f"T{name} as entered",
                {"time_from": entry.time.origin},
                basis_label(measured, entry.time),
                (entry.receipt,) if measured else (),
            )
        )
    return rows


TP_ALL_REDUCE = "tp-all-reduce"  # the derived per-layer all-reduces (kb/ledger/workload.py)


def composed_step(
    envelope: Envelope,
    option: OptionSpec,
    costs: list[TransferCost],
    rows: tuple[Row, ...],
    batch: Num,
) -> tuple[Num, str]:
    """T_total of a composed option: the step class's equation at its terms, plus the rest.

    The decode step (reads or matmuls, c*L all-reduces, L*t_o) is the value of
    flops/tp-decode-allreduce-time's step_time_parts (roofline_step with a compute rate),
    evaluated by substitution in the expression kb's evaluator prepared (StepModel): t_w,
    t_kv (the replica's sequences), T_math at this batch, c and L, t_ar the time of one
    all-reduce as the curves priced it (the tp-all-reduce transfer over its c*L count), t_o
    of the engine. What the class does not cover is added as the rows show it: the pipeline
    stage sends, the entered overheads, and a measured row in place of its derived term.
    """
    derived = option.derived
    assert derived is not None and derived.step is not None
    model = derived.step
    count = derived.all_reduces_per_layer * derived.layers
    tp = [c for c in costs if c.name == TP_ALL_REDUCE]
    t_ar: Num = tp[0].exposed / count if tp and count else Fraction(0)
    values: dict[str, Num] = {
        "t_w": derived.weight_read.value,
        "t_kv": derived.kv_read_per_sequence.value * derived.sequences(batch),
        "c": derived.all_reduces_per_layer if tp else Fraction(0),
        "L": Fraction(derived.layers),
        "t_ar": t_ar,
        "t_o": derived.overhead_figure.value
        if derived.overhead is not None and derived.overhead_figure is not None
        else Fraction(0),
    }
    if derived.math is not None:
        values["T_math"] = derived.math.value * batch / envelope.batch  # linear in the batch
    step = model.value(values)
    rest = [c.exposed for c in costs if c.name != TP_ALL_REDUCE]
    rest += [r.value for r in rows if r.name in OVERHEADS]
    formula = f"{model.class_id} {model.equation}: {model.text}"
    if derived.per_sequence is not None:  # the engine's declared (batch/dp)*L*t_s
        rest.append(per_sequence_time(option, batch))
        formula += ", + (batch/dp)*L*t_s (the engine's per-sequence overhead)"
    if derived.decode_kernels is not None:  # kb/data/end-to-end.json decode_kernels
        rest.append(decode_kernel_time(derived.decode_kernels, batch))
        formula += ", + L*max(0, t_k(batch/dp) - t_k(1)) (the non-matmul kernels' growth)"
    if any(c.name != TP_ALL_REDUCE for c in costs):
        formula += ", + the stage sends"
    if any(r.name in OVERHEADS and r.provenance != "none" for r in rows):
        formula += ", + the entered rows"
    for row in rows:  # a measured row stands in place of the term it measures
        if row.provenance == "measured" and "derived" in row.inputs:
            rest.append(row.value - row.inputs["derived"])
            formula += f", with the measured {row.name} in place of its derived term"
    return step + sum(rest, Fraction(0)), formula


def compute_ledger(envelope: Envelope, option: OptionSpec, over: Overrides | None = None) -> Ledger:
    """Compute the ledger of one option; call it only for a feasible option."""
    over = over or Overrides()
    useful = useful_row(envelope, option, over.batch)
    costs = _transfer_costs(envelope, option, useful.value, over)
    rows: tuple[Row, ...] = (useful, exposed_row(costs), *overhead_rows(option))
    if option.derived is None or option.derived.step is None:
        return Ledger(option.name, rows, tuple(costs))
    batch = envelope.batch if over.batch is None else over.batch
    rows = (useful, composed_overhead_row(option, batch), *rows[1:])
    rows = tuple(_measured(row, option) for row in rows)
    total, formula = composed_step(envelope, option, costs, rows, batch)
    energy = energy_per_token(option, total, batch) if _exact(total, batch) else None
    return Ledger(option.name, rows, tuple(costs), total, formula, energy)


TDP_NOTE = "board power, an upper bound on what a device draws"


def energy_per_token(option: OptionSpec, step: Fraction, batch: Fraction) -> Energy:
    """flops/serving-energy-cost-per-token's e_tok = N*P_dev*t_step/B for one decode step.

    N devices draw P_dev each for the step T_total, which emits B = batch tokens (one
    per sequence, over every replica). With the accelerators' board power this is an
    estimate at TDP, never a measurement.
    """
    derived = option.derived
    assert derived is not None
    power, model = derived.power, derived.energy
    if power is None or model is None:
        return Energy(None, derived.power_note, {}, "none")
    value = model.value(
        {"N": Fraction(power.devices), "P_dev": power.per_device, "t_step": step, "B": batch}
    )
    where = f"at TDP ({TDP_NOTE})" if power.at_tdp else "from the option's stated power"
    formula = (
        f"{model.class_id} {model.equation}: {model.text}; N = {power.devices} devices, "
        f"P_dev = {power.per_device} W {where}, t_step = T_total, B = {batch} tokens per step"
    )
    inputs = {"N": power.devices, "P_dev": power.per_device, "P_dev_from": power.origin}
    return Energy(
        Fraction(value),
        formula,
        {**inputs, "t_step": step, "B": batch},
        "estimated at TDP" if power.at_tdp else "estimated",
    )
