"""A schema-valid engine, typed: its name, versions, collective and fitted overheads.

engine.schema.json shapes every field read here. The per-layer overhead's figure
stays the quantity or `record#field` binding the schema checked (kb.ledger.inputs
resolves it); its calibration receipts are the runs it was fitted to, which never
validate it. The per-sequence overhead (t_s per sequence per layer of the decode
step) is read the same way, with the accelerators it is declared for.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kb.model import Record

FigureNode = Mapping[str, Any] | str


@dataclass(frozen=True)
class Overhead:
    """`per_layer_overhead`: the fitted t_o and what it was fitted to."""

    figure: FigureNode
    calibration: tuple[str, ...]
    hardware: str | None
    cuda_graphs: bool | None


@dataclass(frozen=True)
class PerSequence:
    """`per_sequence_overhead`: the fitted t_s, its accelerators and what it was fitted to."""

    figure: FigureNode
    calibration: tuple[str, ...]
    hardware: tuple[str, ...]  # the accelerators it is declared for; no other gets it
    cuda_graphs: bool | None
    mechanism: str | None


@dataclass(frozen=True)
class Engine:
    id: str
    name: str
    versions: str | None
    cuda_graphs: str | None
    collective: str | None  # the all-reduce implementation, in words
    collective_receipts: tuple[str, ...]
    per_layer_overhead: Overhead | None
    per_sequence_overhead: PerSequence | None = None


def engine(record: Record) -> Engine:
    """The view of a schema-valid engine record (kb.kinds.views builds it)."""
    data = record.data
    coll = data.get("collective") or {}
    over = data.get("per_layer_overhead")
    seq = data.get("per_sequence_overhead")
    return Engine(
        id=record.id,
        name=str(data["name"]),
        versions=data.get("versions"),
        cuda_graphs=data.get("cuda_graphs"),
        collective=coll.get("implementation"),
        collective_receipts=tuple(str(r) for r in coll.get("receipts", ())),
        per_layer_overhead=None
        if over is None
        else Overhead(
            over["figure"],
            tuple(str(r) for r in over["calibration"]),
            over.get("hardware"),
            over.get("cuda_graphs"),
        ),
        per_sequence_overhead=None
        if seq is None
        else PerSequence(
            seq["figure"],
            tuple(str(r) for r in seq["calibration"]),
            tuple(str(h) for h in seq["hardware"]),
            seq.get("cuda_graphs"),
            seq.get("mechanism"),
        ),
    )
