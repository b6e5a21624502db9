"""The rate of a prompt's attention matmuls (end-to-end.json `attention_rate`).

flops/prefill-gemm-ridge's `T_attn = f_mac*L*n_seq*n_h*h_d*s^2/C` needs the rate C of
the attention kernel, which is not always the rate of the weights' format: with a 16-bit
KV cache, Q, K and V are 16-bit activations and the FMHA/FlashAttention kernel runs
16-bit MMAs, whatever format the weight GEMMs run in. Where the workload's KV cache is
16-bit (`kv_bytes` as declared) and the option's compute rate is a figure of another
format, C is that figure's counterpart in the declared format, chosen as the option's
rate was (kb.ledger.scenario.compute_rate):

- `hardware#compute.<fmt>` (a datasheet figure) -> `hardware#compute.bf16`, same record;
- a matmul receipt's row (a measured rate) -> the accelerator's measured bf16 row, chosen
  as compute_rate chooses one (kb.ledger.matmul_rates.measured_matmul_rate), else
  `hardware#compute.bf16` (the datasheet figure), said so in the part's text.

An engine version that end-to-end.json's `sixteen_bit_context_versions` lists ran its
prompt's attention 16-bit although its KV cache was 8-bit (TensorRT-LLM 0.5 to 0.9.0, FP8
context FMHA absent or off): such a row's workload says so (`attention_sixteen_bit`, set by
kb.ledger.endtoend from kb.ledger.engine_versions) and is covered as a 16-bit cache is.

A missing figure is left to the evaluator, which records it as a gap (LG004). An inline
rate states no format and is used as stated. Pure apart from reading the knowledge base.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kb.kinds.placement import FigureNode
    from kb.ledger.reader import InputReader

SECTION = "attention_rate"
_COMPUTE = "#compute."
SIXTEEN_BIT = ("bf16", "fp16")  # a rate of either is already a 16-bit attention's rate


@lru_cache(maxsize=1)
def declared() -> tuple[str, Fraction]:
    """(the attention's format, the KV bytes per element that mean it) as declared."""
    from kb.resources import end_to_end

    return end_to_end(SECTION, lambda e: (str(e["format"]), Fraction(str(e["kv_bytes"]))))


def attention_rate(
    res: InputReader, kv_bytes: Fraction, rate: FigureNode, sixteen_bit: bool = False
) -> tuple[Any, str]:
    """The binding for C of the prompt's attention, and the text that says why.

    `rate` is the option's `useful.compute_rate` and `kv_bytes` the workload's bytes per
    cached KV element; the binding is `rate` unchanged unless the rule covers them (a
    16-bit KV cache, or `sixteen_bit`: an engine version declared to run its prompt's
    attention 16-bit whatever the cache, and a rate of another format).
    """
    fmt, sixteen = declared()
    if not isinstance(rate, str):
        return {"value": rate["value"], "unit": rate["unit"]}, "C as the option states it"
    if kv_bytes != sixteen and not sixteen_bit:
        return (
            rate,
            "C the option's rate (the KV cache is not 16-bit: attention_rate does not cover it)",
        )
    hardware, source_format = _rate_of(res, rate)
    if hardware is None or source_format is None or source_format in (fmt, *SIXTEEN_BIT):
        return rate, "C the option's rate"
    counterpart = _counterpart(res, rate, hardware, fmt)
    kind = "measured" if _COMPUTE not in counterpart else "the datasheet figure"
    why = (
        f"a {fmt} KV cache makes Q, K and V {fmt}, so the attention kernel runs {fmt} matmuls"
        if kv_bytes == sixteen
        else f"this engine version's context attention runs {fmt} matmuls although its KV "
        "cache is 8-bit (sixteen_bit_context_versions)"
    )
    return counterpart, (
        f"C at {fmt} ({kind}, {counterpart}), not the {source_format} weights' rate: "
        f"{why} (kb/data/end-to-end.json {SECTION})"
    )


def _row_of(res: InputReader, rate: str) -> dict[str, Any] | None:
    """Row N of the receipt a `receipt#results.N.value` binding names."""
    record_id, _, field = rate.partition("#")
    parts = field.split(".")
    if len(parts) != 3 or parts[0] != "results" or not parts[1].isdigit():
        return None
    record = res.readable(record_id)
    rows = record.get("results") if record is not None else None
    if not isinstance(rows, list) or int(parts[1]) >= len(rows):
        return None
    row = rows[int(parts[1])]
    return row if isinstance(row, dict) else None


def _rate_of(res: InputReader, rate: str) -> tuple[str | None, str | None]:
    """(accelerator, format) of a compute-rate binding, or Nones when it names neither."""
    record_id, _, field = rate.partition("#")
    if field.startswith("compute."):
        return record_id, field.removeprefix("compute.")
    found = _row_of(res, rate)
    if found is None:
        return None, None
    hardware, precision = found.get("hardware"), found.get("precision")
    if not isinstance(hardware, str) or not isinstance(precision, str):
        return None, None
    return hardware, precision


def _counterpart(res: InputReader, rate: str, hardware: str, fmt: str) -> str:
    """The same kind of figure as `rate`, for `fmt`: a datasheet one stays a datasheet one.

    A measured matmul row becomes the accelerator's measured row of `fmt`, chosen as
    compute_rate chooses one (kb.ledger.matmul_rates), else the datasheet figure.
    """
    from kb.ledger.matmul_rates import measured_matmul_rate

    if _COMPUTE in rate:
        return f"{hardware}#compute.{fmt}"
    measured = measured_matmul_rate(res.kb, hardware, fmt)
    return measured if measured is not None else f"{hardware}#compute.{fmt}"
