"""The chart of a flop class: its derived quantity over its main input, records marked.

Taken from the record's numeric claims (the equation they evaluate and what they
bind): the x axis is the symbol bound to interconnect records (the link
bandwidth for the seed), one line per accelerator the class names (the symbol
bound to an accelerator field, e.g. `BW_hbm`, re-bound to each accelerator's
same field), every other symbol held at the first claim's binding. The
interconnect records are marks on the x axis and each claim that holds the other
symbols at the same bindings is a point (a claim at another operating point, e.g.
another TP degree, is not on these lines and is not drawn). A claim with an
`erratum` (a figure the source states and kb refutes) is never drawn as one of
kb's points: it is a cross, labelled "erratum: the source says X; kb computes Y"
on the chart, in the legend and in the data table. Its bindings still say which
field of an interconnect the x symbol reads (a single link, a whole device), so
the interconnect marks come from every claim's binding, errata included: only
the claimed value of an erratum is false, not what it binds. Values
come from the equations engine (exact bindings, SymPy substitution); nothing is
evaluated from text.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from kb import numfmt
from kb.kinds import views
from kb.kinds.flop_class import Claim, EquationSections
from kb.model import KnowledgeBase, Record, split_binding
from kb.sitegen.charts import Chart, Mark, Series, line_chart

SAMPLES = 24


class NoChart(Exception):
    """Why a flop class has no chart, in a reader's words (the page prints it)."""


NO_CLAIM = (
    "no numeric claim of this record evaluates one of its equations (`of:` with `bind:`), "
    "so there is no curve to draw"
)
NO_VIEW = "the record does not pass its schema (kb validate lists the findings)"


def chart_or_reason(record: Record, kb: KnowledgeBase) -> tuple[list[dict[str, Any]], str]:
    """The flop class's chart, or no chart and the reason the page states ("" with a chart).

    A chart that cannot be computed never stops the build, and never goes missing in
    silence: its page says what was missing. It is drawn from the flop class's typed
    view (kb.kinds): a flop class that fails its schema has none, and no chart.
    """
    sections = views(kb).equations(record)
    if sections is None:
        return [], NO_VIEW
    claims = _numeric_claims(sections, kb)
    if not claims:
        return [], NO_CLAIM
    try:
        return [_plan(record, kb, sections, claims)], ""
    except NoChart as reason:
        return [], str(reason)
    except Exception as error:  # noqa: BLE001 - stated on the page, never a stopped build
        return [], f"the chart could not be computed ({type(error).__name__}: {error})"


def _numeric_claims(sections: EquationSections, kb: KnowledgeBase) -> list[Claim]:
    """The numeric claims of one equation: the first one whose claims bind an interconnect.

    Without such an equation, the first equation's claims (the chart then says why
    it has no fabric axis). A claim that states no `bind:` draws nothing.
    """
    groups: dict[str, list[Claim]] = {}
    for claim in sections.numeric_claims():
        if "bind" in claim.data:
            groups.setdefault(str(claim.of), []).append(claim)
    for group in groups.values():
        if _pick(group, kb, "interconnect"):
            return group
    return next(iter(groups.values()), [])


def _kind_of(spec: Any, kb: KnowledgeBase) -> str:
    if not isinstance(spec, str) or "#" not in spec:
        return ""
    record = kb.get(split_binding(spec)[0])
    return record.kind if record is not None else ""


def _pick(claims: list[Claim], kb: KnowledgeBase, kind: str) -> str:
    """Return the first bound symbol whose binding names a record of `kind`."""
    for claim in claims:
        for name, spec in claim.bind.items():
            if _kind_of(spec, kb) == kind:
                return str(name)
    return ""


def _plan(
    record: Record, kb: KnowledgeBase, sections: EquationSections, claims: list[Claim]
) -> dict[str, Any]:
    from kb.equations.bind import Bound, resolve

    of = str(claims[0].of)
    x_name = _pick(claims, kb, "interconnect")
    if not x_name:
        raise NoChart(
            "no numeric claim of this record binds a symbol to an interconnect record, "
            "so there is no fabric to draw its equations over"
        )
    line_name = _pick(claims, kb, "accelerator")
    own = [c for c in claims if c.erratum is None]
    reference = own[0] if own else claims[0]  # the lines sit at one of kb's own claims
    bound = frozenset(str(k) for k in reference.bind)  # kept, as kb calc keeps them
    function = _target_function(_composed(record, kb), of, bound)
    if function is None:
        raise NoChart(f"equation {of} is not of the form `symbol = expression`")
    missing = sorted(set(function.names) - bound)
    if missing:
        raise NoChart(
            f"equation {of} needs {', '.join(missing)}, which claim {reference.id} does not bind"
        )
    held = {str(k): v for k, v in reference.bind.items() if str(k) != x_name}
    lines = _line_bindings(sections, kb, held.get(line_name), line_name)
    x_marks = _x_marks(claims, kb, x_name, lines)
    if not x_marks:
        raise NoChart(f"no interconnect field bound to {x_name} holds a positive figure")
    xs = [m[0] for m in x_marks]
    grid = _grid(min(xs) / 2, max(xs) * 2)
    x_unit = _display_unit(claims[0].bind[x_name], kb)
    y_unit = function.unit  # the declared unit of the target: series and claims both in it
    series, bindings = [], []
    for label, binding in lines:
        values = {**held, **({line_name: binding} if line_name else {})}
        resolved = {name: resolve(kb, spec) for name, spec in values.items()}
        exact = {name: b.value for name, b in resolved.items() if isinstance(b, Bound)}
        if len(exact) < len(resolved):
            continue
        points = tuple(
            (float(x / x_unit[1]), float(_value(function, x_name, x, exact) / y_unit[1]))
            for x in grid
        )
        series.append(Series(label, points))
        bindings.append(values)
    if not series:
        raise NoChart(
            f"the bindings of claim {reference.id} do not all resolve to figures "
            f"for any accelerator drawn"
        )
    on_lines = [
        c for c in claims if all(c.bind.get(k) == v for k, v in held.items() if k != line_name)
    ]
    meanings = {symbol.name: symbol.meaning for symbol in sections.symbols}
    axes = _Axes(x_name, x_unit, function.lhs_name, y_unit, meanings)
    drawn = _Drawn(series, bindings, x_marks, reference, function)
    return _chart(record, kb, on_lines, drawn, axes)


@dataclass(frozen=True)
class _Drawn:
    """What the chart draws besides its points: lines, their bindings, interconnect marks."""

    series: list[Series]
    bindings: list[dict[str, Any]]
    x_marks: list[tuple[Fraction, str, str, str]]
    reference: Claim  # the claim whose bindings the lines hold
    function: _Function


@dataclass(frozen=True)
class _Axes:
    """The chart's two quantities: symbol, (unit, size of the unit in base units), meanings."""

    x_name: str
    x_unit: tuple[str, Fraction]
    y_name: str
    y_unit: tuple[str, Fraction]
    meanings: Mapping[str, str]

    def label(self, name: str, unit: str, limit: int = 40) -> str:
        """`crossover batch under TP degree N (B_tp)`, `bandwidth per rank (GB/s)`."""
        meaning = _short(self.meanings.get(name, ""), limit) or name
        return f"{meaning} ({unit})" if unit not in ("", "1") else f"{meaning} ({name})"


def _short(meaning: str, limit: int = 46) -> str:
    """A symbol's meaning cut to an axis label: first clause, at most `limit` characters."""
    text = meaning.replace("`", "")
    for stop in (": ", " (", ", ", "; "):
        if len(text) > limit and stop in text:
            text = text.split(stop, 1)[0]
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "\u2026"


class _Function:
    """The claim's target as a SymPy expression of named symbols (definitions expanded).

    `unit` is the target's declared unit and its size in base units: the expression
    gives base units, the chart's y axis shows the declared unit.
    """

    def __init__(self, expr: Any, lhs_name: str, unit: tuple[str, Fraction]) -> None:
        self.expr, self.lhs_name, self.unit = expr, lhs_name, unit
        self.names = sorted(str(s) for s in expr.free_symbols)
        self.evaluate = compiled(expr)  # sampled at every grid point of every line


def _composed(record: Record, kb: KnowledgeBase) -> Record:
    """The record with its `uses` equations resolved (kb/equations/compose.py)."""
    from kb.equations.compose import compose

    return compose(kb, record).record


def _target_function(record: Record, of: str, keep: frozenset[str]) -> _Function | None:
    """Build the claim's target once per distinct (symbols, equations, of, kept) text.

    Definitions are expanded except for the symbols the claim binds (`keep`), as
    `kb calc` expands them (kb.equations.evaluate.prepare): a claim that binds `W`
    is drawn over `W`, not over the `G*BW_nic` another equation defines it as.
    A family of flop classes shares its equations; parsing and expanding them is
    most of a chart's cost, and SymPy expressions are immutable, so one is shared.
    """
    key = json.dumps(
        [record.data.get("symbols"), record.data.get("equations"), of, sorted(keep)],
        default=repr,
    )  # authored order kept: it is part of the text
    if key not in _FUNCTIONS:
        if len(_FUNCTIONS) >= FUNCTION_CACHE:
            _FUNCTIONS.clear()
        _FUNCTIONS[key] = _build_function(record.data, of, keep)
    return _FUNCTIONS[key]


FUNCTION_CACHE = 512
_FUNCTIONS: dict[str, _Function | None] = {}


def _build_function(data: Mapping[str, Any], of: str, keep: frozenset[str]) -> _Function | None:
    from kb.equations.algebra import expand_definitions
    from kb.equations.system import build_system

    system = build_system(data)
    equation = system.equations.get(of)
    if equation is None:
        return None
    kept = [system.symbols[n] for n in sorted(keep) if n in system.symbols]
    expr = expand_definitions(equation.rhs.value, system.definitions(), kept)
    unit = system.units.get(str(equation.lhs.value))
    if unit is None:
        return None
    return _Function(expr, str(equation.lhs.value), (unit.text, unit.factor))


def _value(
    function: _Function, x_name: str, x: Fraction, exact: Mapping[str, Fraction]
) -> Fraction | float:
    return function.evaluate({**exact, x_name: x})


def sympy_value(expr: Any, values: Mapping[str, Fraction]) -> Fraction | float:
    """Evaluate a SymPy expression at exact `values` (walks the tree; nothing is eval'd)."""
    import sympy as sp

    if expr.is_Rational:
        return Fraction(int(expr.p), int(expr.q))
    if expr.is_Symbol:
        return values[expr.name]
    args = [sympy_value(arg, values) for arg in expr.args]
    if expr.is_Add:
        return sum(args, Fraction(0))
    if expr.is_Mul:
        product: Fraction | float = Fraction(1)
        for arg in args:
            product *= arg
        return product
    if expr.is_Pow:
        base, exponent = args
        if isinstance(exponent, Fraction) and exponent.denominator == 1:
            return base ** int(exponent)
        real: float = float(base) ** float(exponent)  # typeshed: float ** float is Any
        return real
    if isinstance(expr, sp.Max):
        return max(args)
    if isinstance(expr, sp.Min):
        return min(args)
    substituted = {s: sp.Rational(str(values[s.name])) for s in expr.free_symbols}
    return float(expr.xreplace(substituted))


Evaluator = Callable[[Mapping[str, Fraction]], "Fraction | float"]


def compiled(expr: Any) -> Evaluator:
    """`sympy_value` of `expr` as a function of the values: the tree is walked once.

    The same exact operations in the same order (arguments first, left to right), so
    the values, and any error a value raises, are sympy_value's.
    """
    import sympy as sp

    if expr.is_Rational:
        constant = Fraction(int(expr.p), int(expr.q))
        return lambda values: constant
    if expr.is_Symbol:
        name = expr.name
        return lambda values: values[name]
    parts = [compiled(arg) for arg in expr.args]
    if expr.is_Add:
        return lambda values: sum([part(values) for part in parts], Fraction(0))
    if expr.is_Mul:
        return lambda values: _product([part(values) for part in parts])
    if expr.is_Pow:
        return lambda values: _power(*[part(values) for part in parts])
    if isinstance(expr, sp.Max):
        return lambda values: max([part(values) for part in parts])
    if isinstance(expr, sp.Min):
        return lambda values: min([part(values) for part in parts])

    def other(values: Mapping[str, Fraction]) -> float:
        for part in parts:
            part(values)
        substituted = {s: sp.Rational(str(values[s.name])) for s in expr.free_symbols}
        return float(expr.xreplace(substituted))

    return other


def _product(args: list[Any]) -> Fraction | float:
    product: Fraction | float = Fraction(1)
    for arg in args:
        product *= arg
    return product


def _power(base: Any, exponent: Any) -> Fraction | float:
    if isinstance(exponent, Fraction) and exponent.denominator == 1:
        return base ** int(exponent)  # type: ignore[no-any-return]
    real: float = float(base) ** float(exponent)  # typeshed: float ** float is Any
    return real


def _line_bindings(
    sections: EquationSections, kb: KnowledgeBase, spec: Any, name: str
) -> list[tuple[str, str | None]]:
    """(label, binding) per accelerator the class names, at the claim's field path."""
    if not name or not isinstance(spec, str):
        return [("as claimed", None)] if not name else []
    field = split_binding(spec)[1]
    ids = {*sections.hardware, split_binding(spec)[0]}
    found = [(kb.get(i), i) for i in sorted(ids)]
    return [(r.title or i, f"{i}#{field}") for r, i in found if r is not None and r.get(field)]


def _x_marks(
    claims: list[Claim],
    kb: KnowledgeBase,
    x_name: str,
    lines: list[tuple[str, str | None]],
) -> list[tuple[Fraction, str, str, str]]:
    """(x in base units, label, title, binding) for the interconnects the chart is about.

    Those are the interconnects the claims bind and the scale-up and host links of
    the accelerators drawn, each at the fields the claims bind (per link, per
    device): a bounded set however many interconnect records the base holds.
    """
    from kb.equations.bind import Bound, resolve

    specs = [str(c.bind[x_name]) for c in claims if x_name in c.bind]
    fields = sorted({split_binding(spec)[1] for spec in specs})
    ids = {split_binding(spec)[0] for spec in specs}
    for _label, binding in lines:
        accelerator = kb.get(split_binding(str(binding))[0]) if binding else None
        ids.update(_links_of(accelerator, kb) if accelerator is not None else ())
    marks = []
    for link_id in sorted(ids):
        link = kb.get(link_id)
        for field in fields:
            bound = resolve(kb, f"{link_id}#{field}") if link is not None else None
            if link is not None and isinstance(bound, Bound) and bound.value > 0:
                name = (link.title or link_id).split(" (")[0]
                label = f"{_short(name, 24)} {field.rpartition('.')[2]}"
                title = f"{link.title}: {field}"
                marks.append((bound.value, label.replace("_", " "), title, f"{link_id}#{field}"))
    return sorted(marks)


def _links_of(accelerator: Record, kb: KnowledgeBase) -> tuple[str, ...]:
    """The interconnects an accelerator names (none when it fails its schema: no view)."""
    view = views(kb).accelerator(accelerator) if accelerator.kind == "accelerator" else None
    return view.interconnects() if view is not None else ()


@functools.lru_cache(maxsize=256)
def _grid(low: Fraction, high: Fraction) -> tuple[Fraction, ...]:
    ratio = float(high / low) ** (1 / (SAMPLES - 1))
    return tuple(low * Fraction(ratio**i).limit_denominator(10**6) for i in range(SAMPLES))


def _display_unit(spec: Any, kb: KnowledgeBase) -> tuple[str, Fraction]:
    """Return the unit the claim's binding is written in (GB/s) and its size in base units."""
    from kb.equations.bind import Bound, quantity

    if isinstance(spec, str):
        record_id, field = split_binding(spec)
        record = kb.get(record_id)
        spec = record.get(field) if record is not None else None
    unit = str(spec.get("unit", "")) if isinstance(spec, Mapping) else ""
    bound = quantity({"value": 1, "unit": unit}, "unit")
    return (unit, bound.value) if isinstance(bound, Bound) else ("B/s", Fraction(1))


def _chart(
    record: Record,
    kb: KnowledgeBase,
    claims: list[Claim],
    drawn: _Drawn,
    axes: _Axes,
) -> dict[str, Any]:
    (x_unit, x_scale), (y_unit, y_scale) = axes.x_unit, axes.y_unit
    x_name, y_name = axes.x_name, axes.y_name
    series, x_marks = drawn.series, drawn.x_marks
    marks = [
        Mark(float(x / x_scale), label, f"{i + 1}. {title}: {float(x / x_scale):g} {x_unit}")
        for i, (x, label, title, _spec) in enumerate(x_marks)
    ]
    scales = (x_name, x_scale, y_scale, y_unit)
    points = _claim_points([c for c in claims if c.erratum is None], kb, scales)
    errata = _erratum_points(
        [c for c in claims if c.erratum is not None], kb, scales, drawn.function
    )
    x_label, y_label = axes.label(x_name, x_unit, 80), axes.label(y_name, y_unit)
    y_shown = "" if y_unit == "1" else f" ({y_unit})"
    crosses = (
        "; crosses mark errata, figures the source states that kb computes otherwise"
        if errata
        else ""
    )
    chart = Chart(
        anchor="chart-" + record.id.replace("/", "-"),
        title=f"{y_label} over {x_label}: {y_name} against {x_name} ({record.title})",
        desc=(
            f"{axes.meanings.get(y_name) or y_name} ({y_name}{y_shown}) against "
            f"{axes.meanings.get(x_name) or x_name} ({x_name}, {x_unit}) on log-log axes, one "
            f"line per accelerator ({', '.join(s.name for s in series)}); labelled vertical "
            f"rules mark the interconnect records, and circles mark the claimed values kb "
            f"checks{crosses}."
        ),
        x_label=x_label,
        y_label=y_label,
        caption=(
            f"{y_name} from equation {claims[0].of} with the bindings of claim "
            f"{drawn.reference.id}; each line re-binds the accelerator field. "
            f"Vertical rules: interconnect records. Circles: the record's claims, as kb "
            f"checks them."
            + (" Crosses: errata (the source's figure, refuted by kb's)." if errata else "")
        ),
        table={
            "caption": "Interconnect marks",
            "head": ["#", "interconnect field", f"{x_name} ({x_unit})"],
            "rows": [
                [str(i + 1), title, f"{float(x / x_scale):g}"]
                for i, (x, _label, title, _spec) in enumerate(x_marks)
            ],
        },
        tables=[
            _series_table(series, x_name, x_unit, y_name, y_unit),
            _claims_table(points),
            _errata_table(errata, x_name, x_unit),
        ],
    )
    data = line_chart(chart, series, marks + [p for p, _ in points] + [e.mark for e in errata])
    data["legend_marks"] = ([{"kind": "claim", "text": "a claim of this record, as kb checks it"}]
                            if points else []) + [
        {"kind": "erratum", "text": e.label} for e in errata
    ]  # fmt: skip
    data["units"] = {
        "x": {"name": x_name, "unit": x_unit},
        "y": {"name": y_name, "unit": y_unit},
        "of": str(claims[0].of),
        "series": [
            {"name": s.name, "bind": b, "points": s.points}
            for s, b in zip(series, drawn.bindings, strict=True)
        ],
        "marks": [
            {"spec": spec, "x": m.x} for m, (_x, _l, _t, spec) in zip(marks, x_marks, strict=True)
        ],
        "claims": [{"id": c, "x": p.x, "y": p.y} for p, c in points],
        "errata": [{"id": e.claim, "x": e.mark.x, "y": e.mark.y, "kb": e.computed} for e in errata],
    }
    return data


def _series_table(
    series: list[Series], x_name: str, x_unit: str, y_name: str, y_unit: str
) -> dict[str, Any]:
    """The lines' data: one row per sampled x, one column per accelerator."""
    unit = "" if y_unit == "1" else f" ({y_unit})"
    xs = [x for x, _ in series[0].points]
    return {
        "caption": f"{y_name}{unit} per accelerator",
        "head": [f"{x_name} ({x_unit})", *(s.name for s in series)],
        "rows": [
            [f"{x:.4g}", *(f"{s.points[i][1]:.4g}" for s in series)] for i, x in enumerate(xs)
        ],
    }


def _claims_table(points: list[tuple[Mark, str]]) -> dict[str, Any]:
    return {
        "caption": "Claims drawn (as kb checks them)",
        "head": ["claim", "x", "claimed"],
        "rows": [[claim, f"{p.x:g}", f"{p.y:g}"] for p, claim in points],
    }


def _errata_table(errata: list[_Erratum], x_name: str, x_unit: str) -> dict[str, Any]:
    return {
        "caption": "Errata drawn (the source's figures, which kb refutes)",
        "head": ["claim", f"{x_name} ({x_unit})", "erratum"],
        "rows": [[e.claim, f"{e.mark.x:g}", e.label] for e in errata],
    }


Scales = tuple[str, Fraction, Fraction, str]  # x symbol, x unit size, y unit size, y unit


def _claim_points(claims: list[Claim], kb: KnowledgeBase, scales: Scales) -> list[tuple[Mark, str]]:
    """A circle per claim at its bound x and its claimed value, converted to the y unit."""
    points = []
    for claim in claims:
        found = _claimed(claim, kb, scales)
        if found is None:
            continue
        x, y, shown = found
        title = f"claim {claim.id}: claimed {shown}"
        points.append((Mark(x, "", title, y=y, line=False), claim.id))
    return points


def _claimed(claim: Claim, kb: KnowledgeBase, scales: Scales) -> tuple[float, float, str] | None:
    """(x, claimed y) in the axes' units and the figure as written, or None if not drawable."""
    from kb.equations.bind import Bound, quantity, resolve

    x_name, x_scale, y_scale, _ = scales
    expect = claim.expect
    x = resolve(kb, claim.bind.get(x_name))
    if expect is None or not isinstance(x, Bound):
        return None
    claimed = quantity({"value": expect.get("value"), "unit": expect.get("unit", "1")}, "expect")
    if not isinstance(claimed, Bound) or claimed.value <= 0:
        return None
    return float(x.value / x_scale), float(claimed.value / y_scale), claimed.shown


@dataclass(frozen=True)
class _Erratum:
    """A claim the source states and kb refutes: where it is drawn, and what kb computes."""

    claim: str
    mark: Mark
    computed: float
    label: str


def _erratum_points(
    claims: list[Claim], kb: KnowledgeBase, scales: Scales, function: _Function
) -> list[_Erratum]:
    """A cross per erratum at its bound x and the source's figure; kb's value at its bindings."""
    from kb.equations.bind import Bound, resolve

    x_name, _, y_scale, y_unit = scales
    found = []
    for claim in claims:
        drawn = _claimed(claim, kb, scales)
        resolved = {str(k): resolve(kb, v) for k, v in claim.bind.items()}
        exact = {k: b.value for k, b in resolved.items() if isinstance(b, Bound)}
        if drawn is None or len(exact) < len(resolved):
            continue
        value = _value(function, x_name, exact[x_name], exact)
        computed = value / y_scale
        unit = "" if y_unit == "1" else f" {y_unit}"
        kb_text = (
            numfmt.significant(computed) if isinstance(computed, Fraction) else f"{computed:.6g}"
        )
        label = f"erratum: the source says {drawn[2]}; kb computes {kb_text}{unit}"
        claim_id = claim.id
        mark = Mark(drawn[0], label, f"claim {claim_id}: {label}", y=drawn[1], line=False,
                    erratum=True)  # fmt: skip
        found.append(_Erratum(claim_id, mark, float(computed), label))
    return found
