"""The SymPy-free half of claim checking: bindings, expectations, comparison, outcomes.

claims.py (the symbolic path) and plan.py (bound values re-checked from a
compiled plan, no SymPy) both go through these functions, so a claim's items and
issues are the same text whichever path produced them: the binding checks
(EQ002/EQ003/EQ012 and the resolver's own codes), the `expect:` checks, the
comparison under `round`, `rel_tol` or `abs_tol` on exact fractions, and the
item and issue a claim's outcome becomes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Protocol

from kb.equations.bind import BindError, Bound
from kb.equations.numtext import n_format, number_text
from kb.equations.results import PROVED, REFUTED, UNVERIFIED, Issue, Item
from kb.equations.units import Dims, Unit, UnitError, exact_number, format_dims, parse_unit
from kb.findings import Location, pointer_join

Resolver = Callable[[Any], "Bound | BindError"]
CODES = {"numeric": "EQ007", "scaling": "EQ008", "effect": "EQ009"}


class Sink(Protocol):
    """What a claim check reads and writes: declared symbols and units, items, issues."""

    symbols: Mapping[str, Any]
    units: Mapping[str, Unit]
    items: list[Item]
    issues: list[Issue]

    def add(self, code: str, pointer: str, message: str, hint: str = "",
            related: tuple[Location, ...] = ()) -> None: ...


class ClaimError(ValueError):
    """A malformed claim: reported with its own code at a field of the claim."""

    def __init__(self, code: str, field: str, message: str, hint: str = "",
                 related: tuple[Location, ...] = ()) -> None:
        super().__init__(message)
        self.code, self.field, self.hint, self.related = code, field, hint, related

    def __reduce__(self) -> tuple[Any, ...]:  # survives the trip back from a budget child
        return (type(self), (self.code, self.field, str(self), self.hint, self.related))


@dataclass
class Context:
    """What one claim check needs: the system, the resolver, and where it is."""

    system: Any  # a Sink: system.System on the symbolic path, plan.Ledger on the plan path
    resolve: Resolver
    claim: Mapping[str, Any]
    pointer: str
    related: tuple[Location, ...] = ()


def report_claim_error(ctx: Context, claim_id: str, exc: ClaimError) -> None:
    pointer = pointer_join(ctx.pointer, *exc.field.split("/"))
    ctx.system.add(exc.code, pointer, f"claim {claim_id}: {exc}", exc.hint,
                   exc.related or ctx.related)


def record_outcome(ctx: Context, claim_id: str, kind: str, outcome: tuple[str, ...]) -> None:
    state, detail, claimed, computed = outcome
    ctx.system.items.append(Item("claim", claim_id, ctx.pointer, state, detail, claimed, computed))
    if state == REFUTED:
        ctx.system.add(CODES[kind], ctx.pointer, f"claim {claim_id} is refuted: {detail}",
                       "correct the claim (or the record it binds) and bump the version",
                       ctx.related)
    elif state == UNVERIFIED and "timeout" not in detail:
        ctx.system.add("EQ015", ctx.pointer, f"claim {claim_id} is unverified: {detail}",
                       "bind an operating point or state a regime", ctx.related)


def related_locations(claim: Mapping[str, Any], resolve: Resolver) -> tuple[Location, ...]:
    """List the bound records' fields, so a finding on the claim names both files."""
    found: list[Location] = []
    for field in ("bind", "change"):
        specs = claim.get(field)
        for spec in specs.values() if isinstance(specs, Mapping) else ():
            if isinstance(spec, str) and "#" in spec:
                bound = resolve(spec)
                location = bound.location if isinstance(bound, Bound) else bound.related
                if location is not None and location not in found:
                    found.append(location)
    return tuple(found)


def declared_name(ctx: Context, name: Any, field: str) -> str:
    """Return `name` if the record declares it as a symbol, else raise EQ002."""
    if not isinstance(name, str) or name not in ctx.system.symbols:
        raise ClaimError("EQ002", field, f"{name!r} is not a declared symbol",
                         "declare it under symbols: with a meaning and a unit")
    return name


def bound_values(ctx: Context, specs: Any, field: str) -> dict[str, Fraction]:
    """Resolve `bind:` to exact values in base units, checking each unit, in order."""
    values: dict[str, Fraction] = {}
    if not isinstance(specs, Mapping):
        return values
    for name, spec in specs.items():
        values[declared_name(ctx, name, field)] = bound_value(ctx, name, spec, f"{field}/{name}")
    return values


def is_binding(spec: Any) -> bool:
    """Whether a `change:` value is resolved as a binding (a quantity or `id#field`)."""
    return isinstance(spec, Mapping) or (isinstance(spec, str) and "#" in spec)


def bound_value(ctx: Context, name: str, spec: Any, field: str) -> Fraction:
    bound = ctx.resolve(spec)
    if isinstance(bound, BindError):
        related = (bound.related,) if bound.related else ()
        raise ClaimError(bound.code, field, f"{name}: {bound.message}", bound.hint, related)
    declared = ctx.system.units.get(name)
    if declared is None:
        raise ClaimError("EQ003", field, f"symbol {name} has no usable unit")
    if declared.dims != bound.dims:
        raise ClaimError("EQ012", field, f"{name} is declared {declared.text} "
                         f"({format_dims(declared.dims)}) but is bound to {bound.shown} "
                         f"({format_dims(bound.dims)})", "bind a field with a matching unit",
                         ctx.related)
    return bound.value


def expected(expect: Any, dims: Dims) -> tuple[Fraction, Unit]:
    """Return a numeric claim's expected value and unit, checked against the result's dims."""
    if not isinstance(expect, Mapping):
        raise ClaimError("EQ001", "expect", "numeric claim needs expect: {value, unit}")
    try:
        claimed = exact_number(expect.get("value"))
    except ValueError:
        raise ClaimError("EQ001", "expect/value", f"expected value {expect.get('value')!r} "
                         "is not a number", "write 1.0e+9, not 1e9") from None
    try:
        unit = parse_unit(expect.get("unit", "1"))
    except UnitError as exc:
        raise ClaimError("EQ003", "expect/unit", str(exc), exc.hint) from None
    if unit.dims != dims:
        raise ClaimError("EQ012", "expect/unit", f"the result is {format_dims(dims)} but expect "
                         f"is in {unit.text} ({format_dims(unit.dims)})",
                         "state the expected value in a unit of the result's dimension")
    return claimed, unit


def judge_numeric(value: Fraction, expect: Any, dims: Dims) -> tuple[str, str, str, str]:
    """Judge a numeric claim whose expression came to `value` (exact, in base units)."""
    claimed, unit = expected(expect, dims)
    shown = value / unit.factor
    ok, how = compare(shown, claimed, expect)
    suffix = "" if unit.text == "1" else f" {unit.text}"
    claimed_text = f"{expect.get('value')}{suffix}"
    computed_text = f"{number_text(shown)}{suffix}"
    detail = f"computed {computed_text}, claimed {claimed_text} ({how})"
    return (PROVED if ok else REFUTED), detail, claimed_text, computed_text


def compare(computed: Fraction, claimed: Fraction, spec: Mapping[str, Any]) -> tuple[bool, str]:
    """Compare under `round`, `rel_tol` or `abs_tol` (else exactly); say how."""
    if "round" in spec:
        step = _spec_number(spec, "round")
        if step <= 0:
            raise ClaimError("EQ001", "expect/round", f"round must be positive, not {step}")
        rounded = (computed / step + Fraction(1, 2)).__floor__() * step
        return rounded == claimed, f"rounded to a multiple of {step}: {rounded}"
    if "rel_tol" in spec:
        tol = _spec_number(spec, "rel_tol")
        error = abs(computed - claimed) / abs(claimed) if claimed else abs(computed)
        return error <= tol, f"relative error {n_format(error, 3)} vs rel_tol {tol}"
    if "abs_tol" in spec:
        tol = _spec_number(spec, "abs_tol")
        return abs(computed - claimed) <= tol, f"abs_tol {tol}"
    return computed == claimed, "exact comparison"


def _spec_number(spec: Mapping[str, Any], key: str) -> Fraction:
    """A tolerance or step as written (`0.01` is exactly 1/100)."""
    raw = spec[key]
    try:
        if isinstance(raw, bool):
            raise ValueError(raw)
        return Fraction(str(raw))
    except (ValueError, ZeroDivisionError):
        raise ClaimError("EQ001", f"expect/{key}", f"{key} {raw!r} is not a number",
                         "write a number such as 0.01") from None
