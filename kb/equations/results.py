"""The engine's result types, free of SymPy: `Issue` (becomes a finding) and `Item`.

An `Item` is one checked equation, derivation step, claim or derived figure,
with its state (proved | refuted | unverified | invalid), a detail sentence and
the claimed and computed values, for the site, the ledger and `kb calc`. Both
round-trip through JSON (the result cache and plans keep them so).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from kb.findings import Location

PROVED, REFUTED, UNVERIFIED, INVALID = "proved", "refuted", "unverified", "invalid"
# What the engine did this process (engine.STATS is this dict): records served from the
# cache, from plans and checked symbolically; systems, claims and derivations really built.
STATS: dict[str, int] = {"symbolic": 0, "cached": 0, "planned": 0, "built_systems": 0,
                         "built_claims": 0, "built_derivations": 0}


@dataclass(frozen=True)
class Issue:
    """A problem the engine found; a rule module turns it into a Finding."""

    code: str
    pointer: str
    message: str
    hint: str = ""
    related: tuple[Location, ...] = ()


@dataclass(frozen=True)
class Item:
    """One checked thing of a record: an equation, a derivation step or a claim."""

    section: str
    id: str
    pointer: str
    state: str
    detail: str
    claimed: str = ""
    computed: str = ""




def item_json(item: Item) -> dict[str, str]:
    return dict(item.__dict__)  # dataclasses.asdict deep-copies: ~10x slower here


def issue_json(issue: Issue) -> dict[str, Any]:
    return {"code": issue.code, "pointer": issue.pointer, "message": issue.message,
            "hint": issue.hint, "related": [asdict(loc) for loc in issue.related]}


def item_from(data: Mapping[str, Any]) -> Item:
    return Item(**data)


def issue_from(data: Mapping[str, Any]) -> Issue:
    return Issue(data["code"], data["pointer"], data["message"], data["hint"],
                 tuple(Location(**loc) for loc in data["related"]))
