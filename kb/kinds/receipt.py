"""A schema-valid receipt, typed: what it measured, on what, and its result rows.

The ledger prices collectives from a receipt's rows (kb.ledger.curves); what is
typed here is which figures each row states. Figures stay the `{value, unit,
basis, source, ...}` mappings the schema checked. Built only for a record the
schema stage passed (kb.kinds.views).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kb.model import Record

Quantity = Mapping[str, Any]  # a schema-valid quantity: value, unit and provenance


@dataclass(frozen=True)
class ResultRow:
    """One result row (`results[index]`): the figures a collective's curve is made of."""

    index: int
    gpus: int | None
    tp: int | None  # the tensor-, pipeline- and expert-parallel degrees it states
    pp: int | None
    ep: int | None
    algorithm: str | None
    cuda_graphs: bool | None
    message_size: Quantity | None
    latency: Quantity | None
    bus_bandwidth: Quantity | None
    algorithm_bandwidth: Quantity | None
    outlier: str | None = None  # the source's reason this row is no point of its curve


@dataclass(frozen=True)
class Receipt:
    id: str
    evidence_class: str  # native, reference, benchmark or vendor-claim
    engine: str  # the engine's name
    provenance: Mapping[str, str]  # seed 000's provenance fields, as written
    pattern: str
    interconnect: str | None
    hardware: tuple[str, ...]  # the accelerators it was measured on, as written
    rows: tuple[ResultRow, ...]
    # kb.ledger.transfers' memo of this view's curves by (pattern, ranks): a view lives
    # one run (kb.kinds.views), and a receipt prices hundreds of transfers in it.
    curves_memo: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)


def receipt(record: Record) -> Receipt:
    """The view of a schema-valid receipt record (kb.kinds.views builds it)."""
    data = record.data
    return Receipt(
        id=record.id,
        evidence_class=str(data["evidence_class"]),
        engine=str(data["engine"]["name"]),
        provenance=data["provenance"],
        pattern=str(data["pattern"]),
        interconnect=data.get("interconnect"),
        hardware=tuple(str(h) for h in data.get("hardware", ())),
        rows=tuple(_row(index, row) for index, row in enumerate(data["results"])),
    )


def _row(index: int, row: Mapping[str, Any]) -> ResultRow:
    return ResultRow(
        index=index,
        gpus=row.get("gpus"),
        tp=row.get("tp"),
        pp=row.get("pp"),
        ep=row.get("ep"),
        algorithm=row.get("algorithm"),
        cuda_graphs=row.get("cuda_graphs"),
        message_size=row.get("message_size"),
        latency=row.get("latency"),
        bus_bandwidth=row.get("bus_bandwidth"),
        algorithm_bandwidth=row.get("algorithm_bandwidth"),
        outlier=row.get("outlier"),
    )
