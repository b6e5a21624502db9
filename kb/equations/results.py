"""The engine's result types, free of SymPy: `Issue` (becomes a finding) and `Item`.

An `Item` is one checked equation, derivation step, claim or derived figure,
with its state (proved | refuted | unverified | invalid), a detail sentence and
the claimed and computed values, for the site, the ledger and `kb calc`.
"""

from __future__ import annotations

from dataclasses import dataclass

from kb.findings import Location

PROVED, REFUTED, UNVERIFIED, INVALID = "proved", "refuted", "unverified", "invalid"


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


