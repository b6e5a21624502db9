"""The non-matmul kernels at a measured per-layer time: the prefill pass and the decode step.

Between a layer's matmuls a forward pass runs kernels that read and write its
activations: the two RMSNorms, the rotary embedding, the gated activation and the
residual add. At a handful of tokens they cost their launches, which the per-layer
overhead t_o (fitted on steps of a few tokens) already holds; at a prompt of
thousands of tokens, or a decode step of hundreds of sequences, they grow with the
tokens. With `envelope.workload.prefill_kernels: receipts/...` (the receipt serves both
passes; the name is the field's first use)

    prefill:  T_kernels = L * max(0, t_k(M) - t_k(1)),     M = the replica's prompt tokens
    decode:   T_kernels = L * max(0, t_k(B/dp) - t_k(1)),  B/dp = one token per sequence

where t_k(M) is read from the receipt's rows of metric KERNEL_TIME_METRIC that name the
workload's model, the option's accelerator and its tp degree (the row's `input_tokens`
is M; its `value` the per-layer time of one TP rank), as kb/data/end-to-end.json
`prefill_kernels` and `decode_kernels` declare it: read as kb/ledger/prefill.py reads its
matmul curve (`time_at`: a row of exactly M tokens, else linear between the rows that
bracket M, the largest row's time per token beyond it), a row marked `outlier` skipped.
The rows state activations, not weights: the weights' format does not select them.
Where the receipt has no rows of the workload's model, those of a profiled model whose
kernel shape (the geometry fields that set the five kernels' work) equals
the model's are read (kb.ledger.kernel_shape, kb/data/end-to-end.json
`prefill_kernels.same_shapes`): compared from the two model records, never from a list.

The prefill part (`prefill_kernel_time`, a Part) goes to TTFT (kb.ledger.request); the
decode part is a `KernelCurve` kept on the option (`decode_kernel_curve`) and evaluated
at the step's batch by kb.ledger.ledger's composed step (`decode_kernel_time`: exact for
a number, a SymPy Piecewise of the same segments when the break-even solves for the
batch). Pure: reads records through the InputReader; `prefill_kernels_receipt` finds
the receipt for a scenario.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from kb.kinds.placement import Option
from kb.ledger import prefill
from kb.ledger.curves import skipped_text
from kb.ledger.kernel_shape import same_shape_model
from kb.ledger.matmul_rates import scanned
from kb.ledger.parts import Part
from kb.ledger.prefill import hardware_of, time_at
from kb.ledger.reader import InputReader
from kb.model import KnowledgeBase
from kb.run import Kept

KERNEL_TIME_METRIC = "non-matmul kernel time per layer"
KERNEL_PATTERN = "memory-stream"

Rows = tuple[tuple[int, Fraction, int], ...]
Read = tuple[str, Rows]  # (the profiled model whose rows are read, its rows)
# Each case's rows as read (by receipt, model, accelerator, tp), kept for the run when the
# knowledge base is frozen: every derived option of a run asks again (a run by steps, kb plan).
READ: Kept[dict[tuple[str, str, str, int], Read | None]] = Kept("kernel rows read")


def _case_rows(record: Any, model: str, hardware: str, tp: int) -> list[tuple[int, dict[str, Any]]]:
    """(index, row) of the receipt's rows of the metric for this model, accelerator and tp."""
    return prefill.case_rows(record, KERNEL_TIME_METRIC, (model, hardware, tp))


def kernel_rows(record: Any, model: str, hardware: str, tp: int) -> list[tuple[int, Fraction, int]]:
    """(tokens, seconds per layer, row index) of this case's rows, by tokens.

    A row counts when it states a positive whole token count and a positive time and is
    no `outlier`; the first row of each token count is kept (kb.ledger.prefill.timed_rows,
    as the matmul curve is read).
    """
    return prefill.timed_rows(record, _case_rows(record, model, hardware, tp))


def _read(kb: KnowledgeBase, record: Any, model: str, hardware: str, tp: int) -> Read | None:
    """(profiled model, its rows) for this case, or None (no model of equal shape has rows)."""
    profiled = same_shape_model(
        kb, record, model, lambda m: bool(kernel_rows(record, m, hardware, tp))
    )
    if profiled is None:
        return None
    return profiled, tuple(kernel_rows(record, profiled, hardware, tp))


def case_rows(res: InputReader, receipt: str, model: str, hardware: str, tp: int) -> Read | None:
    """(profiled model, rows) of the receipt for this case (kept for a frozen run), or None."""
    record = res.readable(receipt)
    if record is None:
        return None
    if not res.kb.frozen:
        return _read(res.kb, record, model, hardware, tp)
    known = res.kb.run.once(READ, dict)
    key = (receipt, model, hardware, tp)
    if key not in known:
        known[key] = _read(res.kb, record, model, hardware, tp)
    return known[key]


def prefill_kernels_receipt(kb: KnowledgeBase, model: str, hardware: str, tp: int) -> str | None:
    """The first receipt (by id, pattern KERNEL_PATTERN) with rows for this case, or None.

    Its model's rows, or a profiled model's of equal kernel shape (kb.ledger.kernel_shape).
    """

    def scan() -> str | None:
        receipts = sorted(
            (r for r in kb.of_kind("receipt") if r.get("pattern") == KERNEL_PATTERN),
            key=lambda r: r.id,
        )
        return next((r.id for r in receipts if _read(kb, r, model, hardware, tp)), None)

    return scanned(kb, ("kernels", model, hardware, str(tp)), scan)


def _of(profiled: str, model: str) -> str:
    """How the rows' model is named in a formula: nothing when it is the workload's own."""
    return "" if profiled == model else f" at the rows of {profiled} (same kernel shape)"


def prefill_kernel_time(res: InputReader, work: Any, option: Option, batch: int) -> Part | None:
    """L * max(0, t_k(M) - t_k(1)) for the replica's prompt, or None (no receipt, no rows)."""
    receipt, deg = work.prefill_kernels, option.degrees
    if receipt is None or work.request is None or deg is None:
        return None
    hardware = hardware_of(option)
    read = case_rows(res, receipt, work.model.id, hardware, deg.tp) if hardware else None
    record = res.readable(receipt)
    if hardware is None or read is None or record is None:
        return None
    profiled, rows = read
    tokens = batch // deg.dp * work.request[0]
    at, one = time_at(list(rows), tokens), time_at(list(rows), 1)
    if at is None or one is None:
        return None
    layers = work.model.layers
    skipped = prefill.outliers(_case_rows(record, profiled, hardware, deg.tp))
    return Part(
        max(Fraction(0), at[0] - one[0]) * layers,
        f"L*max(0, t_k(M) - t_k(1)): {layers} layers x the per-layer non-matmul kernel time of "
        f"the tp = {deg.tp} rank at M = {tokens} prompt tokens ({at[1]}) less its time at one "
        f"token ({one[1]}, held by the per-layer overhead), of {receipt} ({hardware})"
        + _of(profiled, work.model.id)
        + skipped_text(skipped),
        (f"t_k(M) from {receipt}",),
        "measured",
    )


@dataclass(frozen=True)
class KernelCurve:
    """One option's per-layer kernel times by tokens, for the decode step at any batch."""

    rows: Rows  # (tokens, s per layer, row index), by tokens
    layers: int  # L
    dp: int  # replicas: a step of batch B runs B/dp tokens on each
    receipt: str
    hardware: str
    tp: int
    profiled: str = ""  # the model whose rows are read, where not the workload's own


def decode_kernel_curve(res: InputReader, work: Any, option: Option) -> KernelCurve | None:
    """The option's kernel curve for the decode step, or None (no receipt, no one-token row)."""
    receipt, deg = work.prefill_kernels, option.degrees
    hardware = hardware_of(option)
    if receipt is None or deg is None or hardware is None:
        return None
    read = case_rows(res, receipt, work.model.id, hardware, deg.tp)
    if read is None or not read[1] or read[1][0][0] != 1:
        return None
    profiled, rows = read
    other = "" if profiled == work.model.id else profiled
    return KernelCurve(rows, work.model.layers, deg.dp, receipt, hardware, deg.tp, other)


def decode_kernel_time(curve: KernelCurve, batch: Any) -> Any:
    """L * max(0, t_k(batch/dp) - t_k(1)): a Fraction, or a SymPy expression for a symbol."""
    tokens, one = batch / curve.dp, curve.rows[0][1]
    if isinstance(tokens, (int, Fraction)):
        return _excess(curve, Fraction(tokens), one) * curve.layers
    import sympy

    pieces = [(sympy.Integer(0), tokens <= 1)]
    for (m0, t0, _), (m1, t1, _) in zip(curve.rows, curve.rows[1:], strict=False):
        line = t0 - one + (t1 - t0) * (tokens - m0) / (m1 - m0)
        pieces.append((line, tokens <= m1))
    last_m, last_t, _ = curve.rows[-1]
    pieces.append((last_t * tokens / last_m - one, True))
    return sympy.Max(0, sympy.Piecewise(*pieces)) * curve.layers


def _excess(curve: KernelCurve, tokens: Fraction, one: Fraction) -> Fraction:
    """max(0, t_k(tokens) - t_k(1)), read as kb.ledger.prefill's `time_at` reads a curve."""
    at = time_at(list(curve.rows), tokens) if tokens > 1 else None
    return max(Fraction(0), at[0] - one) if at is not None else Fraction(0)


def decode_kernel_text(curve: KernelCurve) -> str:
    """What the decode step's kernel term is, for the ledger's formula."""
    return (
        f"L*max(0, t_k(batch/dp) - t_k(1)): {curve.layers} layers x the per-layer non-matmul "
        f"kernel time of the tp = {curve.tp} rank at the step's tokens per replica less its "
        f"one-token time (held by t_o), of {curve.receipt} ({curve.hardware})"
        + (_of(curve.profiled, "") if curve.profiled else "")
        + "; kb/data/end-to-end.json decode_kernels"
    )
