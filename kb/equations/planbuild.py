"""A record's symbolic check, leaving behind the plan that re-checks new bound values.

`check_record` runs what the engine always ran (symbols and equations, the
derivations, every claim) and, while it is at it, writes the record's plan
(see plan.py): the items and issues that do not depend on bound values, and for
each numeric claim that binds, its expression with definitions expanded and the
bound symbols kept, compiled to an exact tree (exact.py); so is an effect
claim at an operating point. Anything that is not exact arithmetic on
rationals (sqrt, log, a fractional power, an effect that needs cancelling, a
claim that a budget stopped or whose target is malformed) is marked symbolic, and a
plan with a symbolic claim is not kept: that record always takes this path.

Whether a budget decided anything is counted, not read from the wording of the
result (kb.equations.timeout.budgets_stopped): a check that ran out of its steps or
past its guard, or a simplification inside a check that gave up. Such a record
comes back `budgeted` and neither its plan nor its result is kept. A budget that
stopped the compiling of a claim's plan entry decides nothing (the claim is then
checked symbolically): it does not count.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sympy as sp

from kb.equations.claimbase import Context, Resolver, binds_records, contexts
from kb.equations.claims import changed_value, check_claim, is_binding, name_waiting_claims, target
from kb.equations.expr import to_tree  # the one compiler (exact: real=False)
from kb.equations.plan import PLAN_FORMAT, replay_claim
from kb.equations.results import issue_json, item_json
from kb.equations.shared import SharedWork, entry_key, finite_number, verdict_key
from kb.equations.system import System
from kb.equations.timeout import budgets_stopped, run_with_budget
from kb.run import Spending

Plan = dict[str, Any]


def check_record(
    data: Mapping[str, Any], resolve: Resolver, work: SharedWork
) -> tuple[System, Plan | None, bool]:
    """Run every symbolic check of one record; return the system, its plan (or None), budgeted.

    What another record with the same maths left in `work` (this run's) is reused;
    a fresh `work` checks the record as if alone. `budgeted`: a budget decided part
    of the result (see the module), so no store may keep it; its plan is None then.
    """
    run = work.run
    before, compiling = budgets_stopped(run), work.compile_stops
    system, key = work.system_of(data)
    work.derive(system, data)
    plan: dict[str, Any] = {
        "format": PLAN_FORMAT,
        "symbols": list(system.symbols),
        "units": {name: unit.text for name, unit in system.units.items()},
        "items": [item_json(i) for i in system.items],
        "issues": [issue_json(i) for i in system.issues],
        "claims": [],
    }
    claims = data.get("claims")
    for ctx, claim_id in contexts(system, claims, resolve):
        plan["claims"].append(_check(ctx, claim_id, key, work))
    if isinstance(claims, list):
        name_waiting_claims(system, claims)  # into a failed equation's own finding
    plan["issues"] = [issue_json(i) for i in system.issues[: len(plan["issues"])]]
    budgeted = budgets_stopped(run) - before != work.compile_stops - compiling
    usable = not budgeted and all("symbolic" not in entry for entry in plan["claims"])
    return system, plan if usable else None, budgeted


def _check(ctx: Context, claim_id: str, key: str | None, work: SharedWork) -> dict[str, Any]:
    """Check one claim with what records of the same maths left; return its plan entry.

    A claim that binds nothing takes its verdict from the memo and is a fixed
    entry (its items and issues). A binding claim is judged from its compiled
    entry as plan.py does, and checked symbolically only where that cannot answer.
    A claim whose symbolic check ran out of time has no entry: it is checked again.
    """
    items, issues, run = len(ctx.system.items), len(ctx.system.issues), work.run
    if binds_records(ctx.claim):
        known_key = entry_key(key, ctx.claim)
        entry = work.entries.get(known_key)
        if entry is None:
            compiling = budgets_stopped(run)
            entry = _compiled(ctx, run) or {"symbolic": True}
            work.compile_stops += budgets_stopped(run) - compiling  # decides nothing: not counted
            work.keep(work.entries, known_key, entry, "built_claims")
        if "symbolic" not in entry and replay_claim(ctx, entry, claim_id):
            return entry
        before = budgets_stopped(run)
        check_claim(ctx, claim_id, run=run)
    else:
        known_key = verdict_key(key, ctx.claim)
        known = work.verdicts.get(known_key)
        before = budgets_stopped(run)
        verdict = check_claim(ctx, claim_id, known, run)
        if known is None and verdict is not None:  # a verdict a budget stopped is not shared
            timeout = verdict[0] in ("timeout", "guard")
            work.keep(work.verdicts, None if timeout else known_key, verdict, "built_claims")
            work.note("verdicts", None if timeout else known_key, before)
        elif known is not None:
            work.reused("verdicts", known_key)
        fixed = {"items": [item_json(i) for i in ctx.system.items[items:]]}
        entry = {"fixed": {**fixed, "issues": [issue_json(i) for i in ctx.system.issues[issues:]]}}
    return {"symbolic": True} if budgets_stopped(run) != before else entry


def _compiled(ctx: Context, run: Spending | None) -> dict[str, Any] | None:
    """A binding claim's compiled entry (numeric, prediction or effect), or None."""
    compile_kind = {
        "numeric": _compile,
        "prediction": _compile,
        "bound": _compile,
        "effect": _compile_effect,
    }.get(str(ctx.claim.get("kind")))
    return compile_kind(ctx, run) if compile_kind is not None else None


def _compile(ctx: Context, run: Spending | None) -> dict[str, Any] | None:
    """The numeric claim's target as an exact tree and its dims, or None."""
    keep = _bound_symbols(ctx)
    try:
        expr, dims = run_with_budget(lambda: target(ctx, keep), run=run)
        tree = to_tree(expr)
    except Exception:  # malformed target, timeout, inexact: the symbolic path words it
        return None
    return {"numeric": tree, "dims": [[base, str(exponent)] for base, exponent in dims]}


def _bound_symbols(ctx: Context) -> set[sp.Symbol]:
    """The declared symbols the claim's `bind:` names (kept as symbols in its tree)."""
    symbols, bind = ctx.system.symbols, ctx.claim.get("bind")
    names = bind if isinstance(bind, Mapping) else ()
    return {symbols[n] for n in names if isinstance(n, str) and n in symbols}


def _compile_effect(ctx: Context, run: Spending | None) -> dict[str, Any] | None:
    """An effect `change:` at an operating point: both sides as exact trees, or None.

    A change bound to a quantity stays a placeholder symbol `change NAME` (its
    value is resolved at replay); a literal or expression change is substituted
    here. Only the plain-arithmetic case of claims._ratio (every symbol bound,
    a numeric factor claimed) is planned; the rest needs cancel/decide_zero.
    """
    claim, symbols, changes = ctx.claim, ctx.system.symbols, ctx.claim.get("change")
    if "replace" in claim or not isinstance(changes, Mapping) or not changes:
        return None
    if not finite_number(claim.get("factor")):
        return None
    bound = _bound_symbols(ctx)
    try:

        def build() -> dict[str, Any] | None:
            replaced = {
                symbols[n]: _placeholder(n) if is_binding(spec) else changed_value(ctx, n, spec)
                for n, spec in changes.items()
            }
            expr, _ = target(ctx, bound | set(replaced))
            changed = expr.xreplace(replaced)
            placeholders = {_placeholder(n) for n in changes}
            if (changed.free_symbols - placeholders) | expr.free_symbols <= bound:
                return {"effect": [to_tree(expr), to_tree(changed)]}
            # Not at an operating point: claims._ratio cancels changed/original first. The
            # cancelled form with placeholders equals it wherever both are defined.
            ratio = sp.cancel(sp.together(changed / expr))
            if not ratio.free_symbols <= bound | placeholders:
                return None  # the factor depends on the operating point: decide_zero's
            return {"effect_ratio": to_tree(ratio)}

        return run_with_budget(build, run=run)
    except Exception:  # undeclared names, malformed changes, inexact: the symbolic path
        return None


def _placeholder(name: str) -> sp.Symbol:
    return sp.Symbol(f"change {name}", positive=True)  # no record symbol has a space
