"""A schema-valid interconnect, typed: the figures the ledger prices a transfer with.

Figures stay the `{value, unit, basis, source, ...}` mappings the schema checked
(kb.ledger.quantities converts them). Built only for a record the schema stage
passed (kb.kinds.views).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kb.model import Record

Quantity = Mapping[str, Any]  # a schema-valid quantity: value, unit and provenance


@dataclass(frozen=True)
class Interconnect:
    id: str
    per_device: Quantity | None  # all links of a device, per direction
    per_link: Quantity | None  # one link (or port), per direction
    latency: Quantity | None  # one-way latency

    def line_rate(self) -> tuple[str, Quantity] | None:
        """The per-direction line rate the ledger uses: per device if stated, else per link."""
        if self.per_device is not None:
            return "per_device", self.per_device
        if self.per_link is not None:
            return "per_link", self.per_link
        return None


def interconnect(record: Record) -> Interconnect:
    """The view of a schema-valid interconnect record (kb.kinds.views builds it)."""
    bandwidth = record.data["bandwidth"]
    return Interconnect(
        id=record.id,
        per_device=bandwidth.get("per_device"),
        per_link=bandwidth.get("per_link"),
        latency=record.data.get("latency"),
    )
