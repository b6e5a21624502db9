"""The engine's result types, free of SymPy: `Issue` (becomes a finding) and `Item`.

An `Item` is one checked equation, derivation step, claim or derived figure,
with its state, a detail sentence and the claimed and computed values, for the
site, `kb show`, the ledger and `kb calc`. Both round-trip through JSON (the
result cache and plans keep them so). The states say what kb did (one
vocabulary for kb show, JSON and the site; docs/equations.md):

- equation: consistent (its dimensions check) | invalid;
- derivation step: derived | refuted | unverified | invalid;
- numeric, effect, scaling claim and a model's derived figure: recomputed (kb
  recomputed it from the bound figures and it holds: arithmetic, not a
  measurement) | refuted | unverified | invalid; a model's published total that
  differs for a reason the record states: explained;
- prediction: validated (within its band of the measurement) | contradicted
  (outside it; `accepted` carries the record's reason when it accepts the miss) |
  unverified | invalid;
- bound (a predicted upper or lower bound on a measured figure): holds (the
  measurement is on the bound's side; `tightness` is measured/bound) |
  contradicted (as a prediction's) | unverified | invalid;
- erratum claim: erratum (refuted, as the source's statement should be) |
  recomputed (it holds: an EQ017 finding) | unverified | invalid.

`unverified` always carries its reason in `detail`; `invalid` is a claim or step
kb could not check, with its finding.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from kb.findings import Location

CONSISTENT, DERIVED, RECOMPUTED = "consistent", "derived", "recomputed"
VALIDATED, CONTRADICTED, HOLDS, ERRATUM = "validated", "contradicted", "holds", "erratum"
EXPLAINED = "explained"
REFUTED, UNVERIFIED, INVALID = "refuted", "unverified", "invalid"
# The code of an error whose cause has its own finding elsewhere (claimbase.ClaimError,
# bind.BindError): the item is invalid with the reason, and no second finding is made.
DOWNSTREAM = "downstream"
# The code of an input the tree has but kb could not read (a record with its own load
# finding, LD004 say): no second finding either, and the item is `unverified` with the
# reason, not `invalid`: nothing is wrong with the claim, kb just cannot see its input.
UNREADABLE = "unreadable"


@dataclass(frozen=True)
class Issue:
    """A problem the engine found; the checker makes it a finding (kb.rules._eq: its EQ module).

    `hint` is this issue's own hint ("" for none); None leaves it to the rule module's HINT.
    """

    code: str
    pointer: str
    message: str
    hint: str | None = ""
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
    kind: str = ""  # a claim's kind (numeric, effect, scaling, prediction, bound); "" otherwise
    # A prediction or bound: `computed` is the predicted figure, `claimed` the measured
    # one, in the measurement's unit; `error` the signed relative error, `band` the
    # accepted one (a bound's: `upper bound` or `lower bound`), `receipt` the measuring
    # record, `tightness` a bound's measured/bound, `accepted` the record's reason for
    # accepting a contradiction. An erratum: `claimed` is what the source says,
    # `computed` what kb computes, `source` who said it.
    error: str = ""
    band: str = ""
    receipt: str = ""
    source: str = ""
    tightness: str = ""
    accepted: str = ""


def item_json(item: Item) -> dict[str, str]:
    return dict(item.__dict__)  # dataclasses.asdict deep-copies: ~10x slower here


def issue_json(issue: Issue) -> dict[str, Any]:
    return {
        "code": issue.code,
        "pointer": issue.pointer,
        "message": issue.message,
        "hint": issue.hint,
        "related": [asdict(loc) for loc in issue.related],
    }


def item_from(data: Mapping[str, Any]) -> Item:
    return Item(**data)


def issue_from(data: Mapping[str, Any]) -> Issue:
    return Issue(
        data["code"],
        data["pointer"],
        data["message"],
        data["hint"],
        tuple(Location(**loc) for loc in data["related"]),
    )
