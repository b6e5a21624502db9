"""Stated ratios of placements and proposals, walked safely (junk types are skipped).

Shared by LG001 and LG006: each yields `(pointer, candidate name, ratio mapping)`;
wrong types are the schema's to report, so they are skipped here, never raised on.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from kb.findings import pointer_join
from kb.model import Record

Stated = tuple[str, str, Mapping[str, Any]]


def _mapping(node: Any) -> Mapping[str, Any]:
    return node if isinstance(node, Mapping) else {}


def _items(node: Any) -> list[Any]:
    return node if isinstance(node, list) else []


def reference_name(placement: Record) -> str:
    return str(_mapping(placement.data.get("reference")).get("name", ""))


def placement_ratios(placement: Record) -> Iterator[Stated]:
    """Every stated ratio of a placement's candidates."""
    for i, cand in enumerate(_items(placement.data.get("candidates"))):
        name = str(_mapping(cand).get("name", ""))
        for j, ratio in enumerate(_items(_mapping(cand).get("stated_ratios"))):
            if isinstance(ratio, Mapping):
                yield pointer_join("/candidates", i, "stated_ratios", j), name, ratio


def proposal_ratios(proposal: Record) -> Iterator[Stated]:
    """Every stated ratio of a proposal, with the candidate it names (or the proposal's)."""
    default = str(proposal.data.get("candidate", ""))
    for j, ratio in enumerate(_items(proposal.data.get("stated_ratios"))):
        if isinstance(ratio, Mapping):
            yield pointer_join("/stated_ratios", j), str(ratio.get("candidate") or default), ratio
