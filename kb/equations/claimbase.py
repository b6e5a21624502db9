"""The SymPy-free half of claim checking: bindings, expectations, comparison, outcomes.

This is the one judge of numeric, effect and prediction claims: claims.py (the
symbolic path) and plan.py (bound values re-checked from a compiled plan, no
SymPy) only evaluate, and both hand the exact value to these functions
(judge_numeric, judge_factor, judge_prediction), so a claim's items and issues
are the same text whichever path produced them: the binding checks
(EQ002/EQ003/EQ012 and the resolver's own codes), the `expect:` checks, the
comparison under `round`, `rel_tol` or `abs_tol` on exact fractions, a
prediction's comparison with its measurement under its band, and the item and
issue a claim's outcome becomes (an erratum's outcome turned around: refuted is
what it should be, holding is EQ017).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from kb.equations import codes
from kb.equations.bind import BindError, Bound
from kb.equations.numtext import n_text, number_text
from kb.equations.results import (
    CONTRADICTED,
    DOWNSTREAM,
    ERRATUM,
    INVALID,
    LIMITATION,
    RECOMPUTED,
    REFUTED,
    UNREADABLE,
    UNVERIFIED,
    VALIDATED,
    Issue,
    Item,
)
from kb.findings import Location, pointer_join
from kb.quantities import Dims, Unit, UnitError, exact_number, format_dims, parse_unit

Resolver = Callable[[Any], "Bound | BindError"]
CODES = codes.CLAIM_REFUTED  # a claim's kind -> its refutation code
ERRATUM_HOLDS = codes.ERRATUM_NOT_REFUTED
Outcome = tuple[Any, ...]
"""(state, detail, claimed, computed) or, for a prediction, with a 5th element: a dict of
the Item's extra fields (error, band, receipt)."""


# One root cause, one finding: a ClaimError with code DOWNSTREAM (kb.equations.results) has
# its cause reported elsewhere (an equation that does not parse, a symbol whose unit is
# refused, a bound field with its own load error). The claim is not checked (its item is
# `invalid`, with the reason) and no second finding repeats the cause at every claim; the
# root finding names the claims that wait on it (claims.name_waiting_claims).


class ClaimError(ValueError):
    """A malformed claim: reported with its own code at a field of the claim."""

    def __init__(
        self,
        code: str,
        field: str,
        message: str,
        hint: str = "",
        related: tuple[Location, ...] = (),
    ) -> None:
        super().__init__(message)
        self.code, self.field, self.hint, self.related = code, field, hint, related

    def __reduce__(self) -> tuple[Any, ...]:  # survives the trip back from a budget child
        return (type(self), (self.code, self.field, str(self), self.hint, self.related))


@dataclass
class ClaimSink:
    """What claims are checked against and add to: declared names and units, items, issues.

    system.System extends it (the symbolic path); the plan path replays into it, no SymPy.
    """

    symbols: Mapping[str, Any] = field(default_factory=dict)
    units: Mapping[str, Unit] = field(default_factory=dict)
    issues: list[Issue] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)

    def add(
        self,
        code: str,
        pointer: str,
        message: str,
        hint: str | None = "",
        related: tuple[Location, ...] = (),
    ) -> None:
        """Add an issue; `hint` None leaves the hint to the code's rule module (its HINT)."""
        self.issues.append(Issue(code, pointer, message, hint, related))


@dataclass
class Context:
    """What one claim check needs: the system, the resolver, and where it is."""

    system: Any  # a ClaimSink: system.System on the symbolic path (claims.py reads more of it)
    resolve: Resolver
    claim: Mapping[str, Any]
    pointer: str
    related: tuple[Location, ...] = ()


def contexts(system: Any, claims: Any, resolve: Resolver) -> Iterator[tuple[Context, str]]:
    """Each mapping under `claims:` with its Context and its id (its index if it has none)."""
    for index, claim in enumerate(claims if isinstance(claims, list) else []):
        if isinstance(claim, Mapping):
            ctx = Context(system, resolve, claim, pointer_join("/claims", index))
            ctx.related = related_locations(claim, resolve)
            yield ctx, str(claim.get("id", index))


def error_state(exc: ClaimError | None) -> str:
    """A claim kb could not check: `unverified` if an input cannot be read, else `invalid`."""
    return UNVERIFIED if exc is not None and exc.code == UNREADABLE else INVALID


def report_claim_error(ctx: Context, claim_id: str, exc: ClaimError) -> None:
    if exc.code in (DOWNSTREAM, UNREADABLE):
        return  # its cause is reported once, where it is
    pointer = pointer_join(ctx.pointer, *exc.field.split("/"))
    ctx.system.add(
        exc.code, pointer, f"claim {claim_id}: {exc}", exc.hint, exc.related or ctx.related
    )


def record_outcome(
    ctx: Context, claim_id: str, kind: str, outcome: Outcome, cause: ClaimError | None = None
) -> None:
    """Turn a claim's outcome into its item and its issues (the same on both paths).

    `cause`: the error that stopped the check, if one did; an input that cannot be
    read has its own finding, so the claim gets none (no EQ015 beside the LD004).
    """
    state, detail, claimed, computed = outcome[:4]
    extra: dict[str, str] = dict(outcome[4]) if len(outcome) > 4 else {}
    erratum = ctx.claim.get("erratum")
    if isinstance(erratum, Mapping) and kind in ("numeric", "scaling", "effect"):
        state, detail = _erratum_outcome(ctx, claim_id, state, detail, claimed, computed)
        extra["source"] = str(erratum.get("source") or "")
    ctx.system.items.append(
        Item("claim", claim_id, ctx.pointer, state, detail, claimed, computed, kind, **extra)
    )
    if state in (REFUTED, CONTRADICTED):
        verb = "refuted" if state == REFUTED else "contradicted by its measurement"
        hint = (
            "correct the claim (or the record it binds) and bump the version"
            if state == REFUTED
            else "correct the model, state `limitation: {reason}` or check the receipt's figure"
        )
        ctx.system.add(
            CODES[kind], ctx.pointer, f"claim {claim_id} is {verb}: {detail}", hint, ctx.related
        )
    elif state == UNVERIFIED and "timeout" not in detail and error_state(cause) != UNVERIFIED:
        ctx.system.add(
            codes.CLAIM_UNVERIFIED,
            ctx.pointer,
            f"claim {claim_id} is unverified: {detail}",
            "bind an operating point or state a regime",
            ctx.related,
        )


def _erratum_outcome(
    ctx: Context, claim_id: str, state: str, detail: str, claimed: str, computed: str
) -> tuple[str, str]:
    """An erratum is right when refuted; when it holds, the error it keeps is gone (EQ017)."""
    if state == REFUTED:
        return ERRATUM, f"erratum: {detail}"
    if state == RECOMPUTED:
        ctx.system.add(
            ERRATUM_HOLDS,
            ctx.pointer,
            f"claim {claim_id}: erratum no longer "
            f"refuted: kb now computes {computed}, as the source says ({claimed})",
            "the statement holds now: drop `erratum:` (or correct what it binds) "
            "and bump the version",
            ctx.related,
        )
    return state, detail


def claim_specs(claim: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """(field, spec) of every value a claim binds: `measured` first, then `bind:`, `change:`."""
    if "measured" in claim:
        yield "measured", claim["measured"]
    for name in ("bind", "change"):
        specs = claim.get(name)
        for spec in specs.values() if isinstance(specs, Mapping) else ():
            yield name, spec


def binds_records(claim: Mapping[str, Any]) -> bool:
    """Whether the claim's result can depend on another record (an `id#field` binding).

    Literal quantities and expressions are part of the claim's own text, which keys
    the plan, so a claim with only those is fixed. A prediction's `measured` binds.
    """
    return any(isinstance(spec, str) and "#" in spec for _, spec in claim_specs(claim))


def related_locations(claim: Mapping[str, Any], resolve: Resolver) -> tuple[Location, ...]:
    """List the measured and bound records' fields, so a finding names both files."""
    found: list[Location] = []
    for _, spec in claim_specs(claim):
        if isinstance(spec, str) and "#" in spec:
            bound = resolve(spec)
            location = bound.location if isinstance(bound, Bound) else bound.related
            if location is not None and location not in found:
                found.append(location)
    return tuple(found)


def declared_name(ctx: Context, name: Any, field: str) -> str:
    """Return `name` if the record declares it as a symbol, else raise EQ002."""
    if name is None:
        raise ClaimError(
            codes.SYMBOL_UNDECLARED,
            field,
            f"{field}: is missing: the claim names no symbol",
            f"set {field}: to one of the symbols declared under symbols:",
        )
    if not isinstance(name, str) or name not in ctx.system.symbols:
        from kb.suggest import did_you_mean

        close = did_you_mean(str(name), ctx.system.symbols)
        raise ClaimError(
            codes.SYMBOL_UNDECLARED,
            field,
            f"symbol {name} is not declared in symbols:",
            f"{close + ' If not, ' if close else ''}declare {name} under symbols:"
            " with a meaning and a unit",
        )
    return name


def bound_values(ctx: Context, specs: Any, field: str) -> dict[str, Fraction]:
    """Resolve `bind:` to exact values in base units, checking each unit, in order."""
    values: dict[str, Fraction] = {}
    if not isinstance(specs, Mapping):
        return values
    for name, spec in specs.items():
        # the name first: an undeclared name has no unit to check the binding against
        declared = declared_name(ctx, name, f"{field}/{name}")
        values[declared] = bound_value(ctx, name, spec, f"{field}/{name}")
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
        raise ClaimError(DOWNSTREAM, field, f"symbol {name} has no usable unit (EQ003 at its unit)")
    if declared.dims != bound.dims:
        raise ClaimError(
            codes.BINDING_UNIT_MISMATCH,
            field,
            f"{name} is declared {declared.text} "
            f"({format_dims(declared.dims)}) but is bound to {bound.shown} "
            f"({format_dims(bound.dims)})",
            "bind a field with a matching unit",
            ctx.related,
        )
    return bound.value


def expected(expect: Any, dims: Dims) -> tuple[Fraction, Unit]:
    """Return a numeric claim's expected value and unit, checked against the result's dims."""
    if not isinstance(expect, Mapping):
        raise ClaimError(
            codes.EXPRESSION_UNSAFE, "expect", "numeric claim needs expect: {value, unit}"
        )
    try:
        claimed = exact_number(expect.get("value"))
    except ValueError:
        raise ClaimError(
            codes.EXPRESSION_UNSAFE,
            "expect/value",
            f"expected value {expect.get('value')!r} is not a number",
            "write 1.0e+9, not 1e9",
        ) from None
    try:
        unit = parse_unit(expect.get("unit", "1"))
    except UnitError as exc:
        raise ClaimError(codes.UNIT_UNKNOWN, "expect/unit", str(exc), exc.hint) from None
    if unit.dims != dims:
        raise ClaimError(
            codes.BINDING_UNIT_MISMATCH,
            "expect/unit",
            f"the result is {format_dims(dims)} but expect "
            f"is in {unit.text} ({format_dims(unit.dims)})",
            "state the expected value in a unit of the result's dimension",
        )
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
    return (RECOMPUTED if ok else REFUTED), detail, claimed_text, computed_text


def judge_factor(
    ratio: Fraction, factor: Any, spec: Mapping[str, Any]
) -> tuple[str, str, str, str]:
    """Judge an effect claim whose new/old ratio came to `ratio` (exact) against `factor`."""
    claimed_text, computed_text = f"factor {factor}", f"factor {number_text(ratio)}"
    ok, how = compare(ratio, exact_number(factor), spec)
    detail = f"{computed_text}, claimed {factor} ({how})"
    return (RECOMPUTED if ok else REFUTED), detail, claimed_text, computed_text


def compare(computed: Fraction, claimed: Fraction, spec: Mapping[str, Any]) -> tuple[bool, str]:
    """Compare under `round`, `rel_tol` or `abs_tol` (else exactly); say how."""
    if "round" in spec:
        step = _spec_number(spec, "round")
        if step <= 0:
            raise ClaimError(
                codes.EXPRESSION_UNSAFE, "expect/round", f"round must be positive, not {step}"
            )
        rounded = (computed / step + Fraction(1, 2)).__floor__() * step
        return rounded == claimed, f"rounded to a multiple of {step}: {rounded}"
    if "rel_tol" in spec:
        tol = _spec_number(spec, "rel_tol")
        error = abs(computed - claimed) / abs(claimed) if claimed else abs(computed)
        return error <= tol, f"relative error {n_text(error, 3)} vs rel_tol {tol}"
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
        raise ClaimError(
            codes.EXPRESSION_UNSAFE,
            f"expect/{key}",
            f"{key} {raw!r} is not a number",
            "write a number such as 0.01",
        ) from None


def judge_prediction(ctx: Context, value: Fraction, dims: Dims) -> Outcome:
    """Judge a prediction that came to `value` (exact, base units) against its measurement."""
    bound = measured_bound(ctx, dims)
    band = _band(ctx.claim.get("band"))
    unit = parse_unit(bound.unit)
    error = (value - bound.value) / bound.value
    suffix = "" if unit.text == "1" else f" {unit.text}"
    predicted = f"{n_text(value / unit.factor, 4)}{suffix}"
    measured = f"{n_text(bound.value / unit.factor, 4)}{suffix}"
    shown_error, shown_band = _percent(error, signed=True), f"\u00b1{_percent(band)}"
    where = bound.record_id or "the measurement"
    detail = (
        f"predicted {predicted}, measured {measured} ({where}), error {shown_error} "
        f"{'within' if abs(error) <= band else 'outside'} the band {shown_band}"
    )
    limitation = ctx.claim.get("limitation")
    if abs(error) <= band:
        state = VALIDATED
    elif isinstance(limitation, Mapping):
        state = LIMITATION
        detail += f"; a stated limitation: {limitation.get('reason', '')}"
    else:
        state = CONTRADICTED
    extra = {"error": shown_error, "band": shown_band, "receipt": bound.record_id}
    return state, detail, measured, predicted, extra


def measured_bound(ctx: Context, dims: Dims) -> Bound:
    """The measured figure a prediction names (`measured: id#field`), checked against dims."""
    spec = ctx.claim.get("measured")
    if not isinstance(spec, str) or "#" not in spec:
        raise ClaimError(
            codes.BINDING_UNRESOLVED,
            "measured",
            f"measured: {spec!r} is not id#field",
            "name the receipt's measured figure: receipts/<id>#results.0.latency",
        )
    bound = ctx.resolve(spec)
    if isinstance(bound, BindError):
        related = (bound.related,) if bound.related else ()
        raise ClaimError(bound.code, "measured", f"measured: {bound.message}", bound.hint, related)
    if bound.dims != dims:
        raise ClaimError(
            codes.BINDING_UNIT_MISMATCH,
            "measured",
            f"the prediction is {format_dims(dims)} but the "
            f"measurement {bound.shown} is {format_dims(bound.dims)}",
            "predict the quantity the receipt measured",
            ctx.related,
        )
    if bound.value == 0:
        raise ClaimError(
            codes.BINDING_NOT_A_QUANTITY,
            "measured",
            f"measured: {spec} is zero: no relative error",
            "name a nonzero measured figure",
            ctx.related,
        )
    return bound


def _band(band: Any) -> Fraction:
    if not isinstance(band, Mapping) or "rel" not in band:
        raise ClaimError(
            codes.EXPRESSION_UNSAFE,
            "band",
            "a prediction needs band: {rel: 0.25}",
            "state the accepted |predicted - measured| / measured",
        )
    raw = band["rel"]
    try:
        if isinstance(raw, bool):
            raise ValueError(raw)
        rel = Fraction(str(raw))
    except (ValueError, ZeroDivisionError):
        raise ClaimError(
            codes.EXPRESSION_UNSAFE,
            "band/rel",
            f"band rel {raw!r} is not a number",
            "write a number such as 0.25",
        ) from None
    if rel < 0:
        raise ClaimError(
            codes.EXPRESSION_UNSAFE, "band/rel", f"band rel must not be negative, not {raw}"
        )
    return rel


def _percent(value: Fraction, signed: bool = False) -> str:
    """A relative figure as a percentage to 0.1 (`+3.2%`, `-41%`, `25%`)."""
    text = f"{float(abs(value) * 100):.1f}".removesuffix(".0")
    sign = ("+" if value > 0 else "-" if value < 0 else "") if signed else ""
    return f"{sign if text != '0' else ''}{text}%"
