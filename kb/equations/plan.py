"""Re-check a record from its plan when only the values its claims bind changed; no SymPy.

A plan is what a record's symbolic check leaves behind that does not depend on
the values its claims bind (planbuild.py writes it; cached by the content of the
record's equation sections):

    {"symbols": [declared names], "units": {name: unit text},
     "items": [...], "issues": [...],        # equations and derivations
     "claims": [{"fixed": {"items", "issues"}}     # a claim that binds nothing
                | {"numeric": tree, "dims": [[base, exponent], ...]}
                | {"symbolic": true}, ...]}         # one per mapping under claims:

`run_plan` replays it: fixed parts as they were, numeric claims by resolving
their bindings, evaluating the tree with fractions (exact.py) and judging with
the very functions the symbolic path uses (claimbase.py). It returns None when
the plan cannot answer (a symbolic claim, a division by zero, an unbound
symbol): the caller then runs the symbolic path, which words those cases.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from kb.equations.claimbase import (
    ClaimError,
    Context,
    Resolver,
    bound_values,
    judge_numeric,
    record_outcome,
    related_locations,
    report_claim_error,
)
from kb.equations.exact import Inexact, evaluate
from kb.equations.results import INVALID, Issue, Item, issue_from, item_from
from kb.equations.units import Dims, Unit, make_dims, parse_unit
from kb.findings import Location, pointer_join

PLAN_FORMAT = 1


@dataclass
class Ledger:
    """The plan path's stand-in for system.System: declared names, units, items, issues."""

    symbols: Mapping[str, Any]
    units: Mapping[str, Unit]
    items: list[Item] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)

    def add(self, code: str, pointer: str, message: str, hint: str = "",
            related: tuple[Location, ...] = ()) -> None:
        self.issues.append(Issue(code, pointer, message, hint, related))


def run_plan(plan: Mapping[str, Any], data: Mapping[str, Any],
             resolve: Resolver) -> tuple[list[Item], list[Issue]] | None:
    """Return the record's items and issues from `plan`, or None if it cannot answer."""
    try:
        ledger = Ledger(dict.fromkeys(plan["symbols"]),
                        {name: parse_unit(text) for name, text in plan["units"].items()},
                        [item_from(i) for i in plan["items"]],
                        [issue_from(i) for i in plan["issues"]])
        entries = iter(plan["claims"])
        claims = data.get("claims")
        for index, claim in enumerate(claims if isinstance(claims, list) else []):
            if isinstance(claim, Mapping) and not _replay(ledger, next(entries), claim, index,
                                                          resolve):
                return None
    except (KeyError, TypeError, ValueError, StopIteration):  # a plan of another shape
        return None
    return ledger.items, ledger.issues


def _replay(ledger: Ledger, entry: Mapping[str, Any], claim: Mapping[str, Any], index: int,
            resolve: Resolver) -> bool:
    """Add one claim's items and issues; False if only the symbolic path can."""
    if "fixed" in entry:
        ledger.items.extend(item_from(i) for i in entry["fixed"]["items"])
        ledger.issues.extend(issue_from(i) for i in entry["fixed"]["issues"])
        return True
    if "numeric" not in entry:
        return False
    ctx = Context(ledger, resolve, claim, pointer_join("/claims", index))
    ctx.related = related_locations(claim, resolve)
    claim_id = str(claim.get("id", index))
    dims: Dims = make_dims((base, Fraction(exponent)) for base, exponent in entry["dims"])
    try:
        values = bound_values(ctx, claim.get("bind"), "bind")
        value = evaluate(entry["numeric"], values)
        outcome = judge_numeric(value, claim.get("expect"), dims)
    except Inexact:
        return False
    except ClaimError as exc:
        report_claim_error(ctx, claim_id, exc)
        outcome = (INVALID, str(exc), "", "")
    record_outcome(ctx, claim_id, "numeric", outcome)
    return True
