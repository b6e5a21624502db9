"""What the composed ledger's terms are made of: a derived figure (`Part`) and its evaluation.

`evaluate_part` evaluates a target of a flop class the workload composes, through
kb/equations/evaluate.py, in base units; `exact_spec`, `_spec` and `_count` turn exact
values into the evaluator's bindings; `collective_transfer` makes a tensor-parallel
collective's transfer on its option's links, `prefill_transfer` a prefill pass's transfer
from a decode step's. kb.ledger.workload and kb.ledger.expert both build on these, so
neither imports the other's module for them (no import cycle).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from kb.ledger.quantities import Figure, unit_scale

if TYPE_CHECKING:
    from kb.kinds.placement import Collective, Transfer
    from kb.ledger.reader import InputReader

MOE_CLASS = "flops/moe-decode-expert-read"
TP_CLASS = "flops/tp-decode-allreduce-time"


@dataclass(frozen=True)
class Part:
    """One derived figure: value in base units, how it was evaluated, provenance."""

    value: Fraction
    formula: str
    trail: tuple[str, ...]
    basis: str = "derived"


def _base(value: Fraction, unit: str) -> Fraction:
    return value * unit_scale(unit)[0]


def evaluate_part(
    res: InputReader,
    class_id: str,
    target: str,
    bindings: Mapping[str, Any],
    pointer: str,
    listed: tuple[str, ...],
) -> Part | None:
    """Evaluate `target` of a flop class through kb/equations/evaluate.py, in base units.

    The class must be named in the workload's `composed_from` (`listed`): that is the
    reference through which a change to it re-checks the placement.
    """
    from kb.equations.evaluate import EvaluationError, evaluate

    if class_id not in listed:
        _gap_once(
            res,
            "/envelope/workload/composed_from",
            f"the composed step evaluates {class_id} ({target}); name it in composed_from",
        )
        return None
    record = res.readable(class_id)
    if record is None:
        res.blocked(pointer, class_id, f"the composed {target}") if res.unusable(
            class_id
        ) else res.gap(pointer, f"the composed {target} needs {class_id}, which is not in the tree")
        return None
    try:
        result = evaluate(res.kb, record, target, bindings)
    except (EvaluationError, ArithmeticError) as exc:
        _gap_once(res, pointer, f"{class_id} {target}: {exc}")
        return None
    return Part(
        _base(result.value, result.unit),
        f"{class_id} {result.trail[0]}",
        tuple(result.trail),
    )


def _gap_once(res: InputReader, pointer: str, message: str) -> None:
    """A gap, unless one option already reported the same cause (one finding per cause)."""
    if not any(gap.message == message for gap in res.gaps):
        res.gap(pointer, message)


def exact_spec(value: Fraction, unit: str) -> Any:
    """An exact value as an evaluator binding: a quantity, or the quotient p / q (a `Product`)."""
    from kb.equations.evaluate import Product

    if value.denominator == 1:
        return {"value": value.numerator, "unit": unit}
    return Product(
        f"{value.numerator} {unit} / {value.denominator}",
        (
            (1, {"value": value.numerator, "unit": unit}),
            (-1, {"value": value.denominator, "unit": "1"}),
        ),
    )


def _spec(fig: Figure) -> Any:
    """A resolved figure as an evaluator binding (exact, in base units)."""
    return exact_spec(fig.value, fig.dim)


def _count(value: Fraction | int) -> Any:
    return exact_spec(Fraction(value), "1")


def moe_layer_count(record: Any) -> int:
    """The model's MoE layers, as its geometry states them (0: none, or not readable).

    kb/equations/params.py's `layer_kinds`, the one reading of `dense_layers` and
    `moe_layer_step`: Llama 4 Maverick's interleaved layers (one MoE layer in two) count
    24 of 48, not 48 as `layers - dense_layers` alone would.
    """
    from kb.equations.params import GeometryError, layer_kinds

    geometry = record.get("geometry") if record is not None else None
    if not isinstance(geometry, Mapping):
        return 0
    try:
        return layer_kinds(geometry).count("moe")
    except (GeometryError, KeyError, TypeError, ValueError):
        return 0


def prefill_transfer(decode: Transfer, input_tokens: int, name: str) -> Transfer:
    """A prefill pass's transfer: as the decode step's, each carrying the whole prompt."""
    from dataclasses import replace

    size = dict(decode.message_size)
    size["value"] = size["value"] * input_tokens
    return replace(decode, name=name, message_size=size)


def collective_transfer(
    coll: Collective, name: str, pattern: str, ranks: int, count: int, size: Fraction
) -> Transfer:
    """A per-layer collective of the tensor-parallel strategy, on `coll`'s links and curves.

    Its message, `size` bytes derived from TP_CLASS, scales with the batch; `coll.rails`
    says whether its group spans nodes.
    """
    from kb.kinds.placement import Transfer

    return Transfer(
        name=name,
        pattern=pattern,
        link=coll.link,
        ranks=ranks,
        count=count,
        message_size={"value": size, "unit": "B", "basis": "derived", "source": TP_CLASS},
        scales_with_batch=True,
        algorithm=coll.algorithm,
        cuda_graphs=coll.cuda_graphs,
        receipt=coll.receipt,
        link_latency=coll.link_latency,
        overlap=None,
        strategy="strategies/tensor-parallel",
        rails=coll.rails,
    )
