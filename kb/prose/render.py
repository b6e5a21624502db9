"""Resolve a prose template to the value it shows, its unit and its provenance.

A figure template resolves through kb.equations.bind (the binding resolver the
equations engine uses) and converts through kb.quantities; a claim template
shows the claim's value: what the engine computed when `computed` is given (a
mapping claim id -> (state, computed text)), else what the claim expects.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Any

from kb.equations.bind import BindError, resolve
from kb.equations.results import UNREADABLE
from kb.model import KnowledgeBase, Record
from kb.prose.fields import record_templates
from kb.prose.scan import Template
from kb.quantities import UnitError, exact_number, format_dims, parse_unit

ClaimValues = Callable[[str, str], "tuple[str, str] | None"]  # (record, claim) -> (state, text)
UNRESOLVED, BAD_UNIT = "PR001", "PR002"
_EXACT_DIGITS = 12


@dataclass(frozen=True)
class Shown:
    """What a template shows: `value unit`, and where it comes from."""

    template: Template
    value: str
    unit: str  # "" for a count or ratio
    record_id: str
    anchor: str  # the figure's dotted path, or `claim:<id>`
    basis: str  # a figure's basis, or how kb knows a claim's value
    source: str = ""  # a figure's source record, if it names one

    @property
    def text(self) -> str:
        return f"{self.value} {self.unit}" if self.unit else self.value


@dataclass(frozen=True)
class Broken:
    """A template that does not resolve (PR001), converts to no unit (PR002), or dangles."""

    template: Template
    code: str  # PR001 | PR002 | RF001 (a missing record: the reference rule reports it)
    message: str
    hint: str = ""


def show(
    kb: KnowledgeBase, owner: Record, template: Template, computed: ClaimValues | None = None
) -> Shown | Broken:
    """Resolve `template`, written in a prose field of `owner`."""
    if template.error:
        return Broken(template, UNRESOLVED, f"template {template.raw} is malformed", template.error)
    if template.claim:
        return _claim(kb, owner, template, computed)
    return _figure(kb, owner, template)


def _figure(kb: KnowledgeBase, owner: Record, template: Template) -> Shown | Broken:
    spec = f"{template.record_id or owner.id}#{template.field}"
    bound = resolve(kb, spec)
    if isinstance(bound, BindError):
        code = "RF001" if bound.code in ("RF001", UNREADABLE) else UNRESOLVED
        return Broken(
            template, code, f"template {template.raw}: {_tail(bound.message)}", bound.hint
        )
    target: Any = kb.records[bound.record_id].get(template.field)
    if isinstance(target, Mapping):
        value, unit = target.get("value"), str(target.get("unit"))
        basis, source = str(target.get("basis") or "unverified"), str(target.get("source") or "")
    else:
        value, unit, basis, source = target, "1", "count", ""
    return _converted(
        template,
        exact_number(value),
        unit,
        _authored(value),
        (bound.record_id, template.field, basis, source),
    )


def _claim(
    kb: KnowledgeBase, owner: Record, template: Template, computed: ClaimValues | None
) -> Shown | Broken:
    record = kb.get(template.record_id) if template.record_id else owner
    if record is None:
        return Broken(
            template,
            "RF001",
            f"template {template.raw}: no record {template.record_id!r}",
            "check the id under records/ (kb list)",
        )
    claim = _find_claim(record, template.claim)
    expect = claim.get("expect") if claim is not None else None
    if claim is None:
        return Broken(
            template,
            UNRESOLVED,
            f"template {template.raw}: {record.id} has no claim {template.claim!r}",
            "use the id of one of its claims",
        )
    if claim.get("kind", "numeric") != "numeric" or not isinstance(expect, Mapping):
        return Broken(
            template,
            UNRESOLVED,
            f"template {template.raw}: claim "
            f"{template.claim!r} is a {claim.get('kind')} claim, not numeric",
            "a template shows a numeric claim's value (kind: numeric, expect)",
        )
    try:
        value, unit, authored = exact_number(expect.get("value")), str(expect.get("unit")), None
    except ValueError:
        return Broken(
            template,
            UNRESOLVED,
            f"template {template.raw}: the claim's expected value is not a number",
        )
    basis = "claimed (not recomputed here)"
    found = computed(record.id, template.claim) if computed is not None else None
    number = _number(found[1]) if found is not None else None
    if found is not None and number is not None:
        # what kb computed, at the claim's own stated rounding (else four significant
        # digits): a reader sees 274.7 tokens, not the engine's 274.72222
        value, basis = (
            _at_claim_precision(number, expect.get("round")),
            f"computed by kb: {found[0]}",
        )
        authored = value_text(value, expect.get("round"))
    else:
        authored = _authored(expect.get("value"))
    return _converted(
        template, value, unit, authored, (record.id, f"claim:{template.claim}", basis, "")
    )


def _step(round_to: Any) -> Fraction | None:
    if isinstance(round_to, bool) or not isinstance(round_to, (int, float)) or round_to <= 0:
        return None
    return Fraction(str(round_to))


def _at_claim_precision(value: Fraction, round_to: Any) -> Fraction:
    """`value` rounded to a multiple of the claim's `round` (half to even), if it states one."""
    step = _step(round_to)
    return value if step is None else round(value / step) * step


def value_text(value: Fraction, round_to: Any) -> str:
    """A claim's value as prose shows it: exact at its `round` step, else 4 significant digits."""
    if _step(round_to) is not None:
        return decimal_text(value)
    from kb.numfmt import significant

    return significant(value)


def _converted(
    template: Template,
    value: Fraction,
    unit_text: str,
    authored: str | None,
    where: tuple[str, str, str, str],
) -> Shown | Broken:
    record_id, anchor, basis, source = where
    try:
        unit = parse_unit(unit_text)
    except UnitError as exc:
        return Broken(
            template, UNRESOLVED, f"template {template.raw}: the figure's unit: {exc}", exc.hint
        )
    if not template.unit:
        shown = authored if authored is not None else decimal_text(value)
        return Shown(template, shown, _unit_label(unit.text), record_id, anchor, basis, source)
    try:
        target = parse_unit(template.unit)
    except UnitError as exc:
        return Broken(template, BAD_UNIT, f"template {template.raw}: {exc}", exc.hint)
    if target.dims != unit.dims:
        return Broken(
            template,
            BAD_UNIT,
            f"template {template.raw}: cannot show "
            f"{unit.text} ({format_dims(unit.dims)}) in {target.text} "
            f"({format_dims(target.dims)})",
            f"write a unit of {format_dims(unit.dims)}",
        )
    converted = value * unit.factor / target.factor
    computed = basis.startswith("computed by kb")
    return Shown(
        template,
        _significant(converted) if computed else decimal_text(converted),
        _unit_label(target.text),
        record_id,
        anchor,
        basis,
        source,
    )


def _significant(value: Fraction) -> str:
    from kb.numfmt import significant

    return significant(value)


def decimal_text(value: Fraction) -> str:
    """An exact decimal when it has one of at most 12 digits, else 4 significant (`≈`)."""
    with localcontext() as context:
        context.prec = 60
        number = Decimal(value.numerator) / Decimal(value.denominator)
        exact = Fraction(number) == value
        text = format(number.normalize(), "f")
    digits = len(text.replace("-", "").replace(".", "").lstrip("0"))
    if exact and digits <= _EXACT_DIGITS:
        return text
    return "≈" + f"{float(value):.4g}"


def _authored(value: Any) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return str(value)


def _unit_label(text: str) -> str:
    return "" if text == "1" else text


def _number(text: str) -> Fraction | None:
    try:
        return Fraction(text.split(" ", 1)[0].replace(",", ""))
    except (ValueError, ZeroDivisionError):
        return None


def _find_claim(record: Record, claim_id: str) -> Mapping[str, Any] | None:
    claims = record.data.get("claims")
    for claim in claims if isinstance(claims, list) else ():
        if isinstance(claim, Mapping) and claim.get("id") == claim_id:
            return claim
    return None


def _tail(message: str) -> str:
    """A binding error's message without its `binding '...':` lead."""
    return (
        message.split(": ", 1)[1] if message.startswith("binding ") and ": " in message else message
    )


def record_shown(
    kb: KnowledgeBase, record: Record, computed: ClaimValues | None = None
) -> list[tuple[str, Shown | Broken]]:
    """(pointer, what it shows) for every template in `record`'s prose, in document order."""
    return [
        (pointer, show(kb, record, t, computed)) for pointer, t in record_templates(record.data)
    ]


def engine_claims(kb: KnowledgeBase) -> ClaimValues:
    """Claim values as the equations engine computed them (it runs on first use)."""
    table: dict[tuple[str, str], tuple[str, str]] = {}

    def lookup(record_id: str, claim_id: str) -> tuple[str, str] | None:
        if not table:
            from kb.equations.engine import analyse

            for result in analyse(kb).results.values():
                for item in result.items:
                    if item.section == "claim" and item.computed:
                        table[(result.record_id, item.id)] = (item.state, item.computed)
            table[("", "")] = ("", "")  # analysed: never again
        return table.get((record_id, claim_id))

    return lookup


def describe(shown: Shown | Broken) -> str:
    """One line for `kb show`: `{template} = 3.35 TB/s (record field; basis; source)`."""
    if isinstance(shown, Broken):
        return f"{shown.template.raw} -> {shown.code}: {shown.message}"
    where = f"{shown.record_id} {shown.anchor}; {shown.basis}"
    if shown.source:
        where += f"; source: {shown.source}"
    return f"{shown.template.raw} = {shown.text} ({where})"


def as_json(pointer: str, shown: Shown | Broken) -> dict[str, Any]:
    """The JSON form `kb show --format json` gives a template."""
    if isinstance(shown, Broken):
        return {
            "pointer": pointer,
            "template": shown.template.raw,
            "error": shown.code,
            "message": shown.message,
        }
    return {
        "pointer": pointer,
        "template": shown.template.raw,
        "value": shown.value,
        "unit": shown.unit,
        "record": shown.record_id,
        "field": shown.anchor,
        "basis": shown.basis,
        "source": shown.source or None,
    }
