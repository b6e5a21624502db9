"""The prefill pass's weight matmuls at a measured per-layer time (issue 35 part B).

flops/prefill-gemm-ridge prices a prompt's matmuls as `T_math = f_mac*B*P/C` at one
compute rate C, the best a shape search found (MAMF). A model's own projections at
M = 128-2048 tokens run far below that rate: a profile that times one layer's four
projections (QKV, output, gate/up, down) at each token count M measures what a
prefill pass really takes, the weight read and the small-M inefficiency included.

With `envelope.workload.prefill_matmul: receipts/...` the prefill pass's matmuls are

    T_prefill = L * t(M),   M = the replica's prompt tokens (batch/dp x input_tokens)

where t(M) is read from the receipt's rows of metric MATMUL_TIME_METRIC that name the
workload's model, the option's accelerator, its tp degree and 16-bit weights (the
row's `input_tokens` is M; its `value` the per-layer time of one TP rank's shard), as
kb/data/end-to-end.json `prefill_matmul` declares it:

- a row of exactly M tokens, else linear in time between the two rows that bracket M
  (as the collective curves are read, kb/ledger/curves.py);
- beyond the largest row, that row's time per token times M (its rate, flat once the
  tiles fill the device);
- below the smallest row, no curve: the caller keeps the ridge class's T_math;
- a row marked `outlier` is no point of the curve (kb/ledger/curves.py `outlier`, the
  one rule), and the time read names it.

Every layer counts (the stages of one microbatch run in turn). Only the prefill pass
uses it: the decode step keeps flops/tp-decode-allreduce-time's roofline. Pure: reads
records through the InputReader, returns a Part or None.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from kb.kinds.placement import Option
from kb.ledger.curves import outlier, skipped_text
from kb.ledger.parts import Part
from kb.ledger.quantities import QuantityError, figure
from kb.ledger.reader import InputReader

MATMUL_TIME_METRIC = "linear-layer matmul time per layer"
SIXTEEN_BIT = ("bf16", "fp16")


Case = tuple[str, str, int]  # (model, accelerator, tp) a row of a per-layer profile names


def case_rows(
    record: Any, metric: str, case: Case, precisions: tuple[str, ...] | None = None
) -> list[tuple[int, dict[str, Any]]]:
    """(index, row) of a per-layer profile's rows of `metric` for this case.

    `precisions`, when given, also filters on the row's `precision` (the matmul curve reads
    16-bit rows only); kb.ledger.kernels reads its own metric with none.
    """
    model, hardware, tp = case
    rows = record.get("results") if record is not None else None
    found = []
    for index, row in enumerate(rows if isinstance(rows, list) else []):
        if not isinstance(row, dict) or row.get("metric") != metric:
            continue
        if row.get("model") != model or row.get("hardware") != hardware:
            continue
        if row.get("tp", 1) != tp:
            continue
        if precisions is not None and row.get("precision") not in precisions:
            continue
        found.append((index, row))
    return found


def _case_rows(record: Any, model: str, hardware: str, tp: int) -> list[tuple[int, dict[str, Any]]]:
    """(index, row) of the receipt's 16-bit rows of the metric for this model, accelerator, tp."""
    return case_rows(record, MATMUL_TIME_METRIC, (model, hardware, tp), SIXTEEN_BIT)


def skipped_rows(record: Any, model: str, hardware: str, tp: int) -> list[tuple[int, str]]:
    """(index, reason) of this case's rows marked `outlier`: the curve skipped them."""
    return outliers(_case_rows(record, model, hardware, tp))


def outliers(rows: list[tuple[int, dict[str, Any]]]) -> list[tuple[int, str]]:
    """(index, reason) of the rows marked `outlier`."""
    return [(index, reason) for index, row in rows if (reason := outlier(row)) is not None]


def curve_rows(
    record: Any, model: str, hardware: str, tp: int, precision: str = "bf16"
) -> list[tuple[int, Fraction, int]]:
    """(tokens, seconds per layer, row index) of the receipt's rows for this case, by tokens.

    A row counts when it states the metric, the model, the accelerator, the tp degree,
    a 16-bit precision (when `precision` is one) and a positive time, and is no
    `outlier`; the first row of each token count is kept.
    """
    if precision not in SIXTEEN_BIT:
        return []
    return timed_rows(record, _case_rows(record, model, hardware, tp))


def timed_rows(
    record: Any, rows: list[tuple[int, dict[str, Any]]]
) -> list[tuple[int, Fraction, int]]:
    """(tokens, seconds, row index) of `rows`, by tokens.

    Each with a positive whole token count and a positive time, no `outlier`; the first
    row of each token count kept.
    """
    found: dict[int, tuple[int, Fraction, int]] = {}
    for index, row in rows:
        if outlier(row) is not None:
            continue
        tokens = row.get("input_tokens")
        if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 1:
            continue
        node = row.get("value")
        if not isinstance(node, dict):
            continue
        try:
            value = figure(node, f"{record.id}#results.{index}.value", "")
        except QuantityError:
            continue
        if value.dim != "s" or value.value <= 0 or tokens in found:
            continue
        found[tokens] = (tokens, value.value, index)
    return [found[m] for m in sorted(found)]


def time_at(
    rows: list[tuple[int, Fraction, int]], tokens: int | Fraction
) -> tuple[Fraction, str] | None:
    """t(M) from the curve and how it was read, or None below its smallest row."""
    if not rows or tokens < rows[0][0]:
        return None
    for m, t, i in rows:
        if m == tokens:
            return t, f"row {i} ({m} tokens)"
    last = rows[-1]
    if tokens > last[0]:
        return (
            last[1] * tokens / last[0],
            f"row {last[2]}'s time per token ({last[0]} tokens) times {tokens}: beyond the curve "
            "the rate is the largest row's",
        )
    low = max((r for r in rows if r[0] < tokens), key=lambda r: r[0])
    high = min((r for r in rows if r[0] > tokens), key=lambda r: r[0])
    value = low[1] + (high[1] - low[1]) * (tokens - low[0]) / (high[0] - low[0])
    how = f"linear in time between rows {low[2]} ({low[0]} tokens) and {high[2]} ({high[0]})"
    return value, how


def hardware_of(option: Option) -> str | None:
    """The one accelerator of the option's devices, or None when it names none or several."""
    named = {d.hardware for d in option.devices if d.hardware is not None}
    return next(iter(named)) if len(named) == 1 else None


def prefill_matmul_time(
    res: InputReader, work: Any, option: Option, batch: int, pointer: str
) -> Part | None:
    """L * t(M) for the prompt of the replica's sequences, or None (no receipt, no curve)."""
    receipt, deg = work.prefill_matmul, option.degrees
    if receipt is None or work.request is None or deg is None:
        return None
    hardware = hardware_of(option)
    record = res.readable(receipt)
    if hardware is None or record is None:
        return None
    width = work.weight_bytes.value
    precision = "bf16" if width == 2 else "other"
    rows = curve_rows(record, work.model.id, hardware, deg.tp, precision)
    tokens = batch // deg.dp * work.request[0]
    found = time_at(rows, tokens)
    if found is None:
        return None
    per_layer, how = found
    layers = work.model.layers
    return Part(
        per_layer * layers,
        f"L*t(M): {layers} layers x the per-layer matmul time of the tp = {deg.tp} shard at "
        f"M = {tokens} prompt tokens, {how} of {receipt} ({hardware})"
        + skipped_text(skipped_rows(record, work.model.id, hardware, deg.tp)),
        (f"t(M) from {receipt}",),
        "measured",
    )
