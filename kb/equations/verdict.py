"""What kb says it checked, in words: a record's one-line verdict and each item's state text.

One vocabulary for `kb show`, its JSON and the site (results.py lists the
states). A record's verdict counts its predictions and errata:

    validated against 2 measurements; carries 1 erratum
    contradicted by 2 measurements (2 accepted); validated against 1 measurement
    4 bounds hold against their measurements
    not validated: no receipt measures the per-layer overhead yet

`not validated` (with the record's `unvalidated:` reason, if any) when no
prediction was validated or contradicted and no bound held. The tone (the
site's colour): `contradicted` (red) for any contradiction, accepted or not, or
a refuted claim; `erratum` (red) for an erratum; `validated` (green) only when
a prediction was held to a measurement within its band; `none` (neutral)
otherwise: a bound that holds, and arithmetic (recomputed) or algebra
(derived), are not validation. No SymPy here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kb.equations.results import (
    CONTRADICTED,
    DERIVED,
    ERRATUM,
    HOLDS,
    INVALID,
    RECOMPUTED,
    REFUTED,
    UNVERIFIED,
    VALIDATED,
    Item,
)
from kb.kinds.flop_class import ERRATUM_SECTIONS

MODEL_KINDS = ("flop_class", "strategy")  # records whose maths a measurement can validate
LINKED = ERRATUM_SECTIONS  # prose items that may point at an erratum claim


@dataclass(frozen=True)
class Verdict:
    """A record's overall verdict: its text, its tone for the site, and the counts."""

    text: str
    tone: str  # validated | contradicted | erratum | none
    validated: int = 0
    contradicted: int = 0
    accepted: int = 0
    holds: int = 0
    errata: int = 0
    refuted: int = 0

    def as_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _plural(count: int, word: str, many: str = "") -> str:
    return f"{count} {word if count == 1 else many or word + 's'}"


def record_verdict(items: Iterable[Item], data: Mapping[str, Any]) -> Verdict:
    """Count validated and contradicted predictions, errata and refuted claims of a record."""
    claims = [item for item in items if item.section == "claim"]
    states = [item.state for item in claims]
    validated, contradicted = states.count(VALIDATED), states.count(CONTRADICTED)
    accepted = sum(1 for item in claims if item.state == CONTRADICTED and item.accepted)
    holds, errata, refuted = states.count(HOLDS), states.count(ERRATUM), states.count(REFUTED)
    parts = []
    if contradicted:
        known = f" ({accepted} accepted)" if accepted else ""
        parts.append(f"contradicted by {_plural(contradicted, 'measurement')}{known}")
    if validated:
        parts.append(f"validated against {_plural(validated, 'measurement')}")
    if holds:
        held = "holds against its" if holds == 1 else "hold against their"
        parts.append(f"{_plural(holds, 'bound')} {held} {'measurement' + 's' * (holds > 1)}")
    if not validated and not contradicted:
        reason = data.get("unvalidated")
        parts.insert(
            0,
            "not validated" + (f": {reason}" if isinstance(reason, str) and reason else ""),
        )
    if errata:
        parts.append(f"carries {_plural(errata, 'erratum', 'errata')}")
    if refuted:
        parts.append(f"{_plural(refuted, 'claim')} refuted")
    tone = (
        "contradicted"
        if contradicted or refuted
        else "erratum"
        if errata
        else "validated"
        if validated
        else "none"
    )
    return Verdict(
        "; ".join(parts), tone, validated, contradicted, accepted, holds, errata, refuted
    )


def has_verdict(kind: str, data: Mapping[str, Any]) -> bool:
    """Whether a record has a model to validate (a flop class, a strategy, or claims)."""
    return kind in MODEL_KINDS or isinstance(data.get("claims"), list)


# What a state that is not a measurement's verdict means, in words beside it (kb show,
# the site): only `validated` is held to a measurement within a band.
STATE_WORDS = {
    RECOMPUTED: "computed by kb, not measured",
    DERIVED: "algebra, not measured",
    HOLDS: "a bound, not a point prediction",
}


def state_words(state: str) -> str:
    """The words shown beside a state that is not validation ("" for the others)."""
    return STATE_WORDS.get(state, "")


def state_text(item: Item) -> str:
    """The state as kb show and the site print it: `unverified (why)` carries its reason.

    A contradiction the record accepts reads `contradicted (accepted: reason)`; a bound
    that holds `holds (tightness 0.52)`.
    """
    if item.state in (UNVERIFIED, INVALID):
        return f"{item.state} ({item.detail})" if item.detail else item.state
    if item.state == CONTRADICTED and item.accepted:
        return f"{item.state} (accepted: {item.accepted})"
    if item.state == HOLDS and item.tightness:
        return f"{item.state} (tightness {item.tightness})"
    return item.state


def prediction_state(item: Item) -> str:
    """A prediction's or bound's state for kb list --predictions and the README table.

    `validated`, `bound holds`, `contradicted (accepted: reason)` or `contradicted`.
    """
    if item.state == HOLDS:
        return "bound holds"
    if item.state == CONTRADICTED and item.accepted:
        return f"contradicted (accepted: {item.accepted})"
    return item.state


def erratum_text(item: Item) -> str:
    """`the source says X; kb computes Y` for an erratum claim."""
    return f"the source says {item.claimed}; kb computes {item.computed}"


def summary_text(item: Item) -> str:
    """One line per item for kb show: the state and what it came to."""
    if item.state == ERRATUM:
        return f"erratum: {erratum_text(item)}"
    if item.kind in ("prediction", "bound") and item.state in (VALIDATED, CONTRADICTED, HOLDS):
        return f"{item.state}: {item.detail}"
    if item.state in (UNVERIFIED, INVALID):
        return state_text(item)
    if item.section == "claim" and item.computed:
        words = f" ({state_words(item.state)})" if state_words(item.state) else ""
        return f"{item.state}{words}: {item.computed}" + (
            f" (claimed {item.claimed})" if item.state == REFUTED and item.claimed else ""
        )
    if item.state == DERIVED:
        return f"{item.state} ({state_words(item.state)})"
    return item.state


def erratum_links(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(JSON pointer of the `erratum:` field, claim id) on scales_with and workaround items."""
    found = []
    for section in LINKED:
        entries = data.get(section)
        for index, entry in enumerate(entries if isinstance(entries, list) else []):
            if isinstance(entry, Mapping) and isinstance(entry.get("erratum"), str):
                found.append((f"/{section}/{index}/erratum", entry["erratum"]))
    return found


def alarming(item: Item) -> bool:
    """Whether kb show and the site print the item red."""
    return item.state in (ERRATUM, REFUTED, CONTRADICTED)
