"""Every number in a claim's text is the claim's computed value, one of its inputs, or a template.

A claim's `text` is the sentence a reader sees beside the claim's state, so its
numbers are checked like the claim itself. kb/prose/scan.py finds the numbers
(the words PR003 would flag: outside templates, quotations, code spans and URLs;
names such as H100, TP8 or Llama 3.1 are not numbers). Each must agree, at the
precision it is written to, with one of the claim's own values (a factor written
`x0.926` counts as the number 0.926; `x16`, a lane count, stays a name):

- its result: the value kb computed (a numeric claim's value, an effect's
  factor, a prediction's or bound's predicted figure, a scaling claim's
  elasticity or an affine claim's slope when they are numbers), also within the
  claim's own `round`, `rel_tol` or `abs_tol`; a ratio (a dimensionless result)
  also inverted, since `1.24x faster` states a factor 0.804;
- what it states or is held to: a numeric claim's `expect` value, an effect's
  `factor`, a scaling law's `exponent`, the claim's `round`, `rel_tol` or
  `abs_tol`, a prediction's measured figure, its band, its error and a bound's tightness;
- its inputs: every value it binds (`bind`, `change`, `measured`), literal or
  `id#field`, in the unit written.

"At the precision written" means the value rounds to the number: `19.84` agrees
with 19.841104 (|19.84 - 19.841104| <= 0.005), `3.8` does not agree with 2.9.
A unit written after the number (`19.84 ms`, `3.35 TB/s`, `42.0us`) converts the
value exactly first and must be of the value's dimension; `%` compares the
number with a ratio times 100 and `x` with a ratio; a count word (`k`,
`thousand`, `M`, `million`, `G`, `billion`) scales a count. A fraction of two
plain numbers (`1/8`, `4.8/3.35`) is one number, its quotient, and agrees within
half a percent. Any other number is an error
that names it and the computed value: write it as a template (`{claim:id}`, a
claim of the record itself; `{record-id#field|unit}`, any figure; the template
syntax of docs/record-format.md, "Numbers in prose"), bind it, or drop it. An
erratum claim keeps a source's words: its stated (refuted) value agrees too, and
so does anything in a quotation. A claim kb could not compute (invalid,
unverified) is not checked here: its own finding says why.

Why: a claim's text used to be exempt from every number check, so a text could
keep a figure from before a recalibration beside a green state and the correct
computed value (flops/tp-decode-allreduce-time said 16.34 ms where kb computes
19.84 ms).

Bad (kb computes 19.84 ms):

    claims:
      - id: tp8-step
        text: "TP8, B = 64, with the per-layer overhead: 16.34 ms per step."
        kind: numeric
        expect: {value: 19.84, unit: ms, round: 0.01}

Good (the number agrees, or is the claim's own template):

    claims:
      - id: tp8-step
        text: "TP8, B = 64, with the per-layer overhead: {claim:tp8-step} per step."

Cost: a claim's verdict is kept, by everything it is computed from (its text, the
claim as written, its analysis item, and the content digest of each record it
binds), for the next run in the same process (`kb lsp`: each edit is a run). An
edit then re-checks just the claims it reaches: those it changed and those binding
a record it changed; every other claim's verdict is the one computed before, which
is what computing it again gives (tests/lsp/test_claim_text_scoped.py holds the
kept verdicts to fresh ones on random edits).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from kb.equations import codes
from kb.findings import Finding, Severity, pointer_join
from kb.model import KnowledgeBase
from kb.quantities import Dims, UnitError, exact_number, parse_unit
from kb.rules._base import StageNotRun

READS = "equations"
CODE = codes.CLAIM_TEXT_NUMBER_MISMATCH
NAME = "claim-text-number-mismatch"
SEVERITY = Severity.ERROR
HINT = (
    "write the number as {claim:id} (or {record-id#field|unit}), correct it to the "
    "computed value, or drop it"
)

_COMPUTED = re.compile(
    r"^(?:factor )?(?P<n>[-+]?\d[\d.]*(?:E[-+]?\d+)?)"
    r"(?: \(exact (?P<p>-?\d+)/(?P<q>\d+)\))?(?: (?P<unit>\S.*))?$"
)
_PERCENT = re.compile(r"^(?P<n>[-+]?\d[\d.]*)%$")
_UNIT_WORD = re.compile(r"[A-Za-zµ%][A-Za-z0-9µ/^*%]*")
_ONE = parse_unit("1")
_COUNT_WORDS = {
    "k": Fraction(10**3),
    "K": Fraction(10**3),
    "thousand": Fraction(10**3),
    "M": Fraction(10**6),
    "million": Fraction(10**6),
    "G": Fraction(10**9),
    "billion": Fraction(10**9),
}
_SCALAR = re.compile(r"^(?:elasticity|slope) (?P<n>-?\d+(?:\.\d+)?(?:/\d+)?)(?:,|$)")
_FRACTION_SLACK = Fraction(1, 200)
_TIMES = re.compile(r"(?<![A-Za-z0-9_.])x(\d+\.\d+)(?![A-Za-z0-9_])")


@dataclass(frozen=True)
class Value:
    """A value the text may state: exact, in base units, with its dimension and its name."""

    value: Fraction
    dims: Dims
    label: str  # where it comes from, for the message (`computed 19.84 ms`, `bind t_o`)
    factor: Fraction = Fraction(1)  # base units per unit of the unit it was written in
    result: bool = False  # the claim's computed result (its tolerance applies)


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    """Records with no equations analysis (no claims, or out of focus) are not checked."""
    from kb.equations.engine import analysed
    from kb.rules._prose import in_text

    analysis = analysed(kb)
    if analysis is None:
        raise StageNotRun(f"{CODE} reads the equations stage, which has not run")
    for record in kb:
        result = analysis.results.get(record.id) if kb.in_focus(record) else None
        claims = record.data.get("claims")
        if result is None or not isinstance(claims, list):
            continue
        items = {item.pointer: item for item in result.items if item.section == "claim"}
        for index, claim in enumerate(claims):
            text = claim.get("text") if isinstance(claim, Mapping) else None
            pointer = pointer_join("/claims", index)
            item = items.get(pointer)
            if not isinstance(text, str) or item is None or item.state in ("invalid", "unverified"):
                continue
            for start, message in _verdict(kb, claim, item, text):
                yield in_text(
                    CODE, SEVERITY, record, pointer_join(pointer, "text"), start, message, HINT
                )


# Each claim's verdict, by what it is computed from (`_key`): process-wide, the oldest
# dropped beyond KEPT_VERDICTS, so memory stays bounded on any tree.
KEPT_VERDICTS = 4096
Verdict = tuple[tuple[int, str], ...]  # (offset in the text, message) of each mismatch
_VERDICTS: dict[tuple[Any, ...], Verdict] = {}


def _verdict(kb: KnowledgeBase, claim: Mapping[str, Any], item: Any, text: str) -> Verdict:
    """The mismatches of one claim's text: kept from an earlier run when its inputs are equal.

    A text without a number has none, whatever the claim: it is not keyed.
    """
    from kb.prose.scan import bare_numbers

    numbers = _numbers(text, bare_numbers(text))
    if not numbers:
        return ()
    key = _key(kb, claim, item, text)
    known = _VERDICTS.get(key) if key is not None else None
    if known is not None:
        return known
    found = tuple(_mismatches(kb, claim, item, text, numbers))
    if key is not None:
        if len(_VERDICTS) >= KEPT_VERDICTS:
            del _VERDICTS[next(iter(_VERDICTS))]
        _VERDICTS[key] = found
    return found


def _key(
    kb: KnowledgeBase, claim: Mapping[str, Any], item: Any, text: str
) -> tuple[Any, ...] | None:
    """Everything `_mismatches` reads, or None when a bound record has no digest to key on.

    The claim as written (`repr`: 1, 1.0, True and "1" differ), its item's printed
    figures and state, and for each `id#field` it binds what `resolve` reads of the
    tree: that record's content (its digest) or, when it is not loaded, whether the
    id exists.
    """
    from kb.equations.bind import referenced_records
    from kb.equations.claimbase import claim_specs
    from kb.model import is_valid_id

    bound: list[tuple[str, str, bool]] = []
    for _, spec in claim_specs(claim):
        record_id = referenced_records(spec)
        if record_id is None:
            continue  # a literal, a number or a bad spec: part of the claim as written
        record = kb.get(record_id) if is_valid_id(record_id) else None
        if record is not None and not record.digest:
            return None
        exists = record is None and is_valid_id(record_id) and kb.exists(record_id)
        bound.append((record_id, record.digest if record is not None else "", exists))
    figures = (item.state, item.kind, item.computed, item.claimed, item.error, item.tightness)
    return (text, repr(claim), figures, tuple(bound))


def _mismatches(
    kb: KnowledgeBase, claim: Mapping[str, Any], item: Any, text: str, numbers: list[Any]
) -> Iterator[tuple[int, str]]:
    """(offset, message) of each of `numbers` (the text's) that is none of the claim's values."""
    # the values are made a group at a time, the next only for a number none of the made
    # ones agrees with (most texts state the result): `_agrees` asks whether any value
    # agrees, so the order values are tried in changes no verdict
    makers = (
        lambda: _results(item),
        lambda: _inverted(groups[0]),
        lambda: _stated(claim, item),
        lambda: _inputs(kb, claim),
    )
    groups: list[list[Value]] = []
    for start, written, value, half, end in _written(text, numbers):
        unit_word = _unit_after(text, end)
        if not any(
            _agrees(value, half, unit_word, _group(groups, makers, index), claim)
            for index in range(len(makers))
        ):
            yield start, _message(claim, written, item, [v for group in groups for v in group])


def _group(groups: list[list[Value]], makers: Sequence[Any], index: int) -> list[Value]:
    """Group `index` of a claim's values, made now if it was not made yet."""
    while len(groups) <= index:
        groups.append(makers[len(groups)]())
    return groups[index]


def _numbers(text: str, bare: list[Any]) -> list[Any]:
    """The scanner's numbers and each factor written `x0.926` (a word scan.py leaves alone)."""
    from kb.prose.scan import Number, protected

    factors = list(_TIMES.finditer(text))
    spans = protected(text) if factors else []
    glued = [
        Number(m.start(1), m.end(1), m.group(1))
        for m in factors
        if not any(lo <= m.start() < hi for lo, hi, _ in spans)
    ]
    return sorted([*bare, *glued], key=lambda number: number.start)


def _written(text: str, numbers: list[Any]) -> Iterator[tuple[int, str, Fraction, Fraction, int]]:
    """(start, as written, value, half its last digit, end) of each number; `a/b` is one."""
    skip = False
    for here, after in zip(numbers, [*numbers[1:], None], strict=True):
        if skip:
            skip = False
            continue
        value = Fraction(here.text.replace(",", ""))
        if after is not None and after.start == here.end + 1 and text[here.end] == "/":
            divisor = Fraction(after.text.replace(",", ""))
            if divisor:
                skip = True
                quotient = value / divisor
                shown = f"{here.text}/{after.text}"
                yield here.start, shown, quotient, abs(quotient) * _FRACTION_SLACK, after.end
                continue
        yield here.start, here.text, value, _half_step(here.text), here.end


def _message(claim: Mapping[str, Any], number: str, item: Any, values: list[Value]) -> str:
    computed = item.computed or "no single value"
    inputs = sorted({v.label for v in values if not v.result})
    shown = ", ".join(inputs[:6]) + (f" and {len(inputs) - 6} more" if len(inputs) > 6 else "")
    return (
        f"claim {claim.get('id')}: its text says {number} but kb computes {computed}, "
        f"and {number} is none of its inputs ({shown or 'none'}) at the precision written"
    )


def _results(item: Any) -> list[Value]:
    """The claim's computed result (`_inverted` adds its inverse when it is a ratio)."""
    found = [
        _printed(item.computed, f"computed {item.computed}", result=True),
        _scalar(item.computed),
    ]
    return [value for value in found if value is not None]


def _inverted(results: list[Value]) -> list[Value]:
    """Each of the results that is a ratio, inverted (`1.24x faster` states a factor 0.804)."""
    return [
        Value(1 / v.value, v.dims, f"{v.label}, inverted", v.factor, v.result)
        for v in results
        if v.dims == _ONE.dims and v.value
    ]


def _stated(claim: Mapping[str, Any], item: Any) -> list[Value]:
    """What the claim states or is held to: its measurement, band, expect, factor, tolerances."""
    found: list[Value | None] = []
    if item.kind in codes.MEASURED_KINDS:
        found.append(_printed(item.claimed, f"measured {item.claimed}"))
        for label, text in (("error", item.error), ("tightness", item.tightness)):
            found.append(_ratio(text, f"{label} {text}"))
    band = claim.get("band")  # a prediction's band, as a fraction (`rel: 0.15` is 15%)
    if isinstance(band, Mapping):
        found.extend(_quantity(band.get(key), "1", f"band {key} {band.get(key)}") for key in band)
    expect = claim.get("expect")
    if isinstance(expect, Mapping):
        unit = expect.get("unit", "1")
        found.append(_quantity(expect.get("value"), unit, f"expect {expect.get('value')} {unit}"))
    spec = expect if isinstance(expect, Mapping) else claim
    for key, where in (("factor", claim), ("exponent", claim), *_tolerances(spec)):
        found.append(_quantity(where.get(key), "1", f"{key} {where.get(key)}"))
    return [value for value in found if value is not None]


def _tolerances(spec: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    return [(key, spec) for key in ("round", "rel_tol", "abs_tol") if key in spec]


def _scalar(computed: str) -> Value | None:
    """A scaling claim's elasticity or an affine claim's slope, when it is a number."""
    match = _SCALAR.match(computed or "")
    if match is None:
        return None
    return Value(abs(Fraction(match["n"])), _ONE.dims, f"computed {computed}", result=True)


def _inputs(kb: KnowledgeBase, claim: Mapping[str, Any]) -> list[Value]:
    from kb.equations.bind import Bound, resolve
    from kb.equations.claimbase import claim_specs

    found: list[Value] = []
    for field, spec in claim_specs(claim):
        if isinstance(spec, (int, float)) and not isinstance(spec, bool):  # `change: {N: 8}`
            value = _quantity(spec, "1", f"{field} {spec}")
            found += [value] if value is not None else []
        elif isinstance(spec, Mapping) or (isinstance(spec, str) and "#" in spec):
            bound = resolve(kb, spec)
            if isinstance(bound, Bound):
                label = spec if isinstance(spec, str) else f"{field} {bound.shown}"
                try:
                    factor = parse_unit(bound.unit).factor
                except UnitError:
                    continue
                found.append(Value(bound.value, bound.dims, label, factor))
        # an expression (`change: {N: 2*N}`) has no value of its own
    return found


def _printed(text: str, label: str, result: bool = False) -> Value | None:
    """A value as kb's printer wrote it (`19.841104 (exact 31/2) ms`, `factor 0.8`)."""
    match = _COMPUTED.match(text.strip()) if text else None
    if match is None:
        return None
    try:
        value = Fraction(int(match["p"]), int(match["q"])) if match["p"] else Fraction(match["n"])
        unit = parse_unit(match["unit"] or "1")
    except (ValueError, ZeroDivisionError, UnitError):
        return None
    return Value(_times(value, unit.factor), unit.dims, label, unit.factor, result)


def _ratio(text: str, label: str) -> Value | None:
    """A ratio printed as `+31.2%` or `0.773` (an error's size, a tightness)."""
    percent = _PERCENT.match(text or "")
    try:
        ratio = abs(Fraction(percent["n"])) / 100 if percent else Fraction(text)
    except (ValueError, ZeroDivisionError):
        return None
    return Value(ratio, _ONE.dims, label)


def _quantity(value: Any, unit: Any, label: str) -> Value | None:
    try:
        exact, parsed = exact_number(value), parse_unit(unit)
    except (ValueError, UnitError):
        return None
    return Value(_times(exact, parsed.factor), parsed.dims, label, parsed.factor)


def _agrees(
    written: Fraction, half: Fraction, unit_word: str, values: list[Value], claim: Mapping[str, Any]
) -> bool:
    """Whether `written` (followed by `unit_word`) is one of `values` within `half`."""
    for value in values:
        for shown in _in_unit(value, unit_word):
            if abs(shown - written) <= half:
                return True
            if value.result and _within_tolerance(shown, written, claim):
                return True
    return False


def _half_step(number: str) -> Fraction:
    """Half a unit of the last digit written: `19.84` -> 0.005, `1,659` -> 0.5."""
    plain = number.replace(",", "").lower()
    mantissa, _, exponent = plain.partition("e")
    power = int(exponent or 0) - len(mantissa.partition(".")[2])
    return Fraction(10**power, 2) if power >= 0 else Fraction(1, 2 * 10**-power)


def _unit_after(text: str, end: int) -> str:
    """The unit written right after a number (glued or after one space), or ""."""
    rest = text[end:]
    if rest.startswith(" "):
        rest = rest[1:]
    match = _UNIT_WORD.match(rest)
    return match.group().rstrip(".,;:") if match else ""


def _in_unit(value: Value, unit_word: str) -> list[Fraction]:
    """The value as a number in the unit written after it (else in the unit it was written in).

    `%` reads a ratio times 100 and `x` a ratio; a unit of another dimension matches
    nothing but a plain count (`8 GPUs`); a word that is no unit leaves the value
    in its own unit.
    """
    plain = value.dims == _ONE.dims
    if unit_word in _COUNT_WORDS:
        return [value.value / _COUNT_WORDS[unit_word]] if plain else []
    if unit_word in ("%", "percent"):
        return [value.value * 100] if plain else []
    if unit_word == "x":
        return [value.value] if plain else []
    try:
        unit = parse_unit(unit_word) if unit_word else None
    except UnitError:
        unit = None
    if unit is None:
        return [_over(value.value, value.factor)]
    if unit.dims != value.dims:
        return [value.value] if plain else []
    return [_over(value.value, unit.factor)]


def _times(value: Fraction, factor: Fraction) -> Fraction:
    """`value * factor`, without Fraction's arithmetic for the usual factor 1 (same value)."""
    return value if factor == 1 else value * factor


def _over(value: Fraction, factor: Fraction) -> Fraction:
    """`value / factor`, without Fraction's arithmetic for the usual factor 1 (same value)."""
    return value if factor == 1 else value / factor


def _within_tolerance(shown: Fraction, written: Fraction, claim: Mapping[str, Any]) -> bool:
    """The claim's own comparison (`round`, `rel_tol`, `abs_tol`) applied to the text."""
    from kb.equations.claimbase import ClaimError, compare

    expect = claim.get("expect")
    spec = expect if isinstance(expect, Mapping) else claim
    if not any(key in spec for key in ("round", "rel_tol", "abs_tol")):
        return False
    try:
        return compare(shown, written, spec)[0]
    except ClaimError:
        return False
