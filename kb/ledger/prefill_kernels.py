"""The prefill pass's non-matmul kernels at a measured per-layer time (issue 35, session 25).

Between a layer's matmuls a forward pass runs kernels that read and write its
activations: the two RMSNorms, the rotary embedding, the gated activation and the
residual add. At a handful of tokens they cost their launches, which the per-layer
overhead t_o (fitted on steps of a few tokens) already holds; at a prompt of
thousands of tokens they grow with the tokens. With
`envelope.workload.prefill_kernels: receipts/...` the prefill pass adds

    T_kernels = L * max(0, t_k(M) - t_k(1)),   M = the replica's prompt tokens

where t_k(M) is read from the receipt's rows of metric KERNEL_TIME_METRIC that name the
workload's model, the option's accelerator and its tp degree (the row's `input_tokens`
is M; its `value` the per-layer time of one TP rank), as kb/data/end-to-end.json
`prefill_kernels` declares it: read as kb/ledger/prefill.py reads its matmul curve
(`time_at`: a row of exactly M tokens, else linear between the rows that bracket M,
the largest row's time per token beyond it), a row marked `outlier` skipped. The rows
state activations, not weights: the weights' format does not select them.

Only the prefill pass (kb.ledger.request adds it to TTFT beside the read-or-matmul
part); the decode step is unchanged. Pure: reads records through the InputReader,
returns a Part or None; `prefill_kernels_receipt` finds the receipt for a scenario.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from kb.kinds.placement import Option
from kb.ledger.curves import outlier, skipped_text
from kb.ledger.matmul_rates import scanned
from kb.ledger.parts import Part
from kb.ledger.prefill import hardware_of, time_at
from kb.ledger.quantities import QuantityError, figure
from kb.ledger.reader import InputReader
from kb.model import KnowledgeBase

KERNEL_TIME_METRIC = "non-matmul kernel time per layer"
KERNEL_PATTERN = "memory-stream"


def _case_rows(record: Any, model: str, hardware: str, tp: int) -> list[tuple[int, dict[str, Any]]]:
    """(index, row) of the receipt's rows of the metric for this model, accelerator and tp."""
    rows = record.get("results") if record is not None else None
    return [
        (index, row)
        for index, row in enumerate(rows if isinstance(rows, list) else [])
        if isinstance(row, dict)
        and row.get("metric") == KERNEL_TIME_METRIC
        and row.get("model") == model
        and row.get("hardware") == hardware
        and row.get("tp", 1) == tp
    ]


def kernel_rows(record: Any, model: str, hardware: str, tp: int) -> list[tuple[int, Fraction, int]]:
    """(tokens, seconds per layer, row index) of this case's rows, by tokens.

    A row counts when it states a positive whole token count and a positive time and is
    no `outlier`; the first row of each token count is kept.
    """
    found: dict[int, tuple[int, Fraction, int]] = {}
    for index, row in _case_rows(record, model, hardware, tp):
        tokens, node = row.get("input_tokens"), row.get("value")
        if outlier(row) is not None or not isinstance(node, dict):
            continue
        if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 1:
            continue
        try:
            value = figure(node, f"{record.id}#results.{index}.value", "")
        except QuantityError:
            continue
        if value.dim == "s" and value.value > 0 and tokens not in found:
            found[tokens] = (tokens, value.value, index)
    return [found[m] for m in sorted(found)]


def prefill_kernels_receipt(kb: KnowledgeBase, model: str, hardware: str, tp: int) -> str | None:
    """The first receipt (by id, pattern KERNEL_PATTERN) with this case's rows, or None."""

    def scan() -> str | None:
        receipts = sorted(
            (r for r in kb.of_kind("receipt") if r.get("pattern") == KERNEL_PATTERN),
            key=lambda r: r.id,
        )
        return next((r.id for r in receipts if kernel_rows(r, model, hardware, tp)), None)

    return scanned(kb, ("kernels", model, hardware, str(tp)), scan)


def prefill_kernel_time(res: InputReader, work: Any, option: Option, batch: int) -> Part | None:
    """L * max(0, t_k(M) - t_k(1)) for the replica's prompt, or None (no receipt, no rows)."""
    receipt, deg = work.prefill_kernels, option.degrees
    if receipt is None or work.request is None or deg is None:
        return None
    hardware = hardware_of(option)
    record = res.readable(receipt)
    if hardware is None or record is None:
        return None
    rows = kernel_rows(record, work.model.id, hardware, deg.tp)
    tokens = batch // deg.dp * work.request[0]
    at, one = time_at(rows, tokens), time_at(rows, 1)
    if at is None or one is None:
        return None
    layers = work.model.layers
    skipped = [
        (index, reason)
        for index, row in _case_rows(record, work.model.id, hardware, deg.tp)
        if (reason := outlier(row)) is not None
    ]
    return Part(
        max(Fraction(0), at[0] - one[0]) * layers,
        f"L*max(0, t_k(M) - t_k(1)): {layers} layers x the per-layer non-matmul kernel time of "
        f"the tp = {deg.tp} rank at M = {tokens} prompt tokens ({at[1]}) less its time at one "
        f"token ({one[1]}, held by the per-layer overhead), of {receipt} ({hardware})"
        + skipped_text(skipped),
        (f"t_k(M) from {receipt}",),
        "measured",
    )
