"""Re-check a record from its plan when only the values its claims bind changed; no SymPy.

A plan is what a record's symbolic check leaves behind that does not depend on
the values its claims bind (planbuild.py writes it; cached by the content of the
record's equation sections):

    {"symbols": [declared names], "units": {name: unit text},
     "items": [...], "issues": [...],        # equations and derivations
     "claims": [{"fixed": {"items", "issues"}}     # a claim that binds nothing
                | {"numeric": tree, "dims": [[base, exponent], ...]}  # or a prediction
                | {"effect": [tree before, tree after the change]}
                | {"effect_ratio": tree of after/before, cancelled}
                | {"symbolic": true}, ...]}         # one per mapping under claims:

`run_plan` replays it: fixed parts as they were, numeric claims (and effect
claims at an operating point) by resolving their bindings, evaluating the trees
with fractions (exact.py) and judging with
the very functions the symbolic path uses (claimbase.py; a prediction is
evaluated as a numeric claim and judged against its measurement). It returns None when
the plan cannot answer (a symbolic claim, a division by zero, an unbound
symbol): the caller then runs the symbolic path, which words those cases.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from kb.equations import codes
from kb.equations.claimbase import (
    ClaimError,
    ClaimSink,
    Context,
    Resolver,
    bound_value,
    bound_values,
    contexts,
    declared_name,
    error_state,
    is_binding,
    judge_factor,
    judge_numeric,
    judge_prediction,
    record_outcome,
    report_claim_error,
)
from kb.equations.exact import Inexact, evaluate_tree
from kb.equations.results import Issue, Item, issue_from, item_from
from kb.quantities import Dims, make_dims, parse_unit

PLAN_FORMAT = 2  # 2: items carry kind/error/band/receipt/source; states say what was checked


def run_plan(
    plan: Mapping[str, Any], data: Mapping[str, Any], resolve: Resolver
) -> tuple[list[Item], list[Issue]] | None:
    """Return the record's items and issues from `plan`, or None if it cannot answer."""
    try:
        sink = ClaimSink(
            symbols=dict.fromkeys(plan["symbols"]),
            units={name: parse_unit(text) for name, text in plan["units"].items()},
            items=[item_from(i) for i in plan["items"]],
            issues=[issue_from(i) for i in plan["issues"]],
        )
        entries = iter(plan["claims"])
        for ctx, claim_id in contexts(sink, data.get("claims"), resolve):
            entry = next(entries)
            if "fixed" in entry:  # a claim that binds nothing: as it was
                sink.items.extend(item_from(i) for i in entry["fixed"]["items"])
                sink.issues.extend(issue_from(i) for i in entry["fixed"]["issues"])
            elif not replay_claim(ctx, entry, claim_id):
                return None  # only the symbolic path can answer
    except (KeyError, TypeError, ValueError, StopIteration):  # a plan of another shape
        return None
    return sink.items, sink.issues


def replay_claim(ctx: Context, entry: Mapping[str, Any], claim_id: str) -> bool:
    """Judge a binding claim from its compiled entry at its own bound values.

    Adds the claim's item and issues to `ctx.system` and returns True, or adds
    nothing and returns False when only the symbolic path can answer.
    """
    kind = "numeric" if "numeric" in entry else None
    if kind == "numeric" and ctx.claim.get("kind") in codes.MEASURED_KINDS:
        kind = str(ctx.claim.get("kind"))
    kind = "effect" if "effect" in entry or "effect_ratio" in entry else kind
    if kind is None:
        return False
    cause = None
    try:
        outcome = _effect(ctx, entry) if kind == "effect" else _numeric(ctx, entry, kind)
    except Inexact:
        return False
    except ClaimError as exc:
        report_claim_error(ctx, claim_id, exc)
        outcome, cause = (error_state(exc), str(exc), "", ""), exc
    record_outcome(ctx, claim_id, kind, outcome, cause)
    return True


def _numeric(ctx: Context, entry: Mapping[str, Any], kind: str) -> tuple[Any, ...]:
    """claims._numeric (or claims._prediction) on the compiled expression."""
    dims: Dims = make_dims((base, Fraction(exponent)) for base, exponent in entry["dims"])
    values = bound_values(ctx, ctx.claim.get("bind"), "bind")
    value = evaluate_tree(entry["numeric"], values)
    if kind in codes.MEASURED_KINDS:
        return judge_prediction(ctx, value, dims)
    return judge_numeric(value, ctx.claim.get("expect"), dims)


def _effect(ctx: Context, entry: Mapping[str, Any]) -> tuple[str, str, str, str]:
    """claims._effect at an operating point: new over old value, against a numeric factor."""
    values = bound_values(ctx, ctx.claim.get("bind"), "bind")
    changed = dict(values)
    for name, spec in ctx.claim["change"].items():
        declared_name(ctx, name, "change")
        if is_binding(spec):
            changed[f"change {name}"] = bound_value(ctx, name, spec, f"change/{name}")
    if "effect_ratio" in entry:  # cancelled symbolically when the plan was built
        ratio = evaluate_tree(entry["effect_ratio"], changed)
    else:
        original, new = entry["effect"]
        before = evaluate_tree(original, values)
        if before == 0:
            raise Inexact("the symbolic path cancels first")
        ratio = evaluate_tree(new, changed) / before
    return judge_factor(ratio, ctx.claim.get("factor"), ctx.claim)
