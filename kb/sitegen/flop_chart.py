"""The chart of a flop class: its derived quantity over its main input, records marked.

Taken from the record's numeric claims (the equation they evaluate and what they
bind): the x axis is the symbol bound to interconnect records (the link
bandwidth for the seed), one line per accelerator the class names (the symbol
bound to an accelerator field, e.g. `BW_hbm`, re-bound to each accelerator's
same field), every other symbol held at the first claim's binding. The
interconnect records are marks on the x axis and each claim that holds the other
symbols at the same bindings is a point (a claim at another operating point, e.g.
another TP degree, is not on these lines and is not drawn). Values
come from the equations engine (exact bindings, SymPy substitution); nothing is
evaluated from text.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from kb.kinds import views
from kb.kinds.flop_class import Bound, Claim, EquationSections
from kb.model import KnowledgeBase, Record, split_binding
from kb.sitegen.charts import Chart, Mark, Series, line_chart

SAMPLES = 24


def flop_charts(record: Record, kb: KnowledgeBase) -> list[dict[str, Any]]:
    """Zero or one chart for a flop class (none when no numeric claim gives one).

    A flop class that does not pass its schema has no view (kb.kinds) and no chart:
    its page's equations section says why nothing is shown.
    """
    sections = views(kb).equations(record)
    claims = _numeric_claims(sections) if sections is not None else []
    if sections is None or not claims:
        return []
    try:
        plan = _plan(record, kb, sections, claims)
    except Exception:  # noqa: BLE001 - a chart that cannot be drawn must not stop the build
        return []
    return [plan] if plan else []


def _numeric_claims(sections: EquationSections) -> list[Claim]:
    """The numeric claims of the first target any numeric claim names."""
    found = sections.numeric_claims()
    return [c for c in found if c.of == found[0].of]


def _kind_of(spec: Bound, kb: KnowledgeBase) -> str:
    if not isinstance(spec, str) or "#" not in spec:  # a literal quantity names no record
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
) -> dict[str, Any] | None:
    from kb.equations.bind import Bound, resolve

    x_name = _pick(claims, kb, "interconnect")
    if not x_name:
        return None
    line_name = _pick(claims, kb, "accelerator")
    function = _target_function(_composed(record, kb), str(claims[0].of))
    held = {str(k): v for k, v in claims[0].bind.items() if str(k) != x_name}
    lines = _line_bindings(sections, kb, held.get(line_name), line_name)
    x_marks = _x_marks(claims, kb, x_name, lines)
    if not x_marks or function is None:
        return None
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
        return None
    on_lines = [
        c for c in claims if all(c.bind.get(k) == v for k, v in held.items() if k != line_name)
    ]
    meanings = {symbol.name: symbol.meaning for symbol in sections.symbols}
    axes = _Axes(x_name, x_unit, function.lhs_name, y_unit, meanings)
    return _chart(record, kb, on_lines, series, bindings, x_marks, axes)


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


def _composed(record: Record, kb: KnowledgeBase) -> Record:
    """The record with its `uses` equations resolved (kb/equations/compose.py)."""
    from kb.equations.compose import compose

    return compose(kb, record).record


def _target_function(record: Record, of: str) -> _Function | None:
    """Build the claim's target once per distinct (symbols, equations, of) text.

    A family of flop classes shares its equations; parsing and expanding them is
    most of a chart's cost, and SymPy expressions are immutable, so one is shared.
    """
    key = json.dumps(
        [record.data.get("symbols"), record.data.get("equations"), of], default=repr
    )  # authored order kept: it is part of the text
    if key not in _FUNCTIONS:
        if len(_FUNCTIONS) >= FUNCTION_CACHE:
            _FUNCTIONS.clear()
        _FUNCTIONS[key] = _build_function(record.data, of)
    return _FUNCTIONS[key]


FUNCTION_CACHE = 512
_FUNCTIONS: dict[str, _Function | None] = {}


def _build_function(data: Mapping[str, Any], of: str) -> _Function | None:
    from kb.equations.algebra import expand_definitions
    from kb.equations.system import build_system

    system = build_system(data)
    equation = system.equations.get(of)
    if equation is None:
        return None
    expr = expand_definitions(equation.rhs.value, system.definitions())
    unit = system.units.get(str(equation.lhs.value))
    if unit is None:
        return None
    return _Function(expr, str(equation.lhs.value), (unit.text, unit.factor))


def _value(
    function: _Function, x_name: str, x: Fraction, exact: Mapping[str, Fraction]
) -> Fraction | float:
    return sympy_value(function.expr, {**exact, x_name: x})


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


def _line_bindings(
    sections: EquationSections, kb: KnowledgeBase, spec: Bound | None, name: str
) -> list[tuple[str, str | None]]:
    """(label, binding) per accelerator the class names, at the claim's field path."""
    if not name or not isinstance(spec, str):  # no accelerator symbol, or bound to a literal
        return [("as claimed", None)] if not name else []
    field = split_binding(spec)[1]
    ids = set(sections.hardware)
    ids.add(split_binding(spec)[0])
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


def _links_of(record: Record, kb: KnowledgeBase) -> tuple[str, ...]:
    """The interconnects an accelerator names (none for one that fails its schema)."""
    device = views(kb).accelerator(record) if record.kind == "accelerator" else None
    return device.interconnects() if device is not None else ()


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
    series: list[Series],
    bindings: list[dict[str, Any]],
    x_marks: list[Any],
    axes: _Axes,
) -> dict[str, Any]:
    (x_unit, x_scale), (y_unit, y_scale) = axes.x_unit, axes.y_unit
    x_name, y_name = axes.x_name, axes.y_name
    marks = [
        Mark(float(x / x_scale), label, f"{i + 1}. {title}: {float(x / x_scale):g} {x_unit}")
        for i, (x, label, title, _spec) in enumerate(x_marks)
    ]
    points = _claim_points(claims, kb, x_name, x_scale, y_scale)
    x_label, y_label = axes.label(x_name, x_unit, 80), axes.label(y_name, y_unit)
    y_shown = "" if y_unit == "1" else f" ({y_unit})"
    chart = Chart(
        anchor="chart-" + record.id.replace("/", "-"),
        title=f"{y_label} over {x_label}: {y_name} against {x_name} ({record.title})",
        desc=(
            f"{axes.meanings.get(y_name) or y_name} ({y_name}{y_shown}) against "
            f"{axes.meanings.get(x_name) or x_name} ({x_name}, {x_unit}) on log-log axes, one "
            f"line per accelerator ({', '.join(s.name for s in series)}); labelled vertical "
            f"rules mark the interconnect records, and circles mark the claimed values."
        ),
        x_label=x_label,
        y_label=y_label,
        caption=(
            f"{y_name} from equation {claims[0].of} with the bindings of claim "
            f"{claims[0].id}; each line re-binds the accelerator field. "
            f"Vertical rules: interconnect records. Circles: the record's claims."
        ),
        table={
            "caption": "Interconnect marks",
            "head": ["#", "interconnect field", f"{x_name} ({x_unit})"],
            "rows": [
                [str(i + 1), title, f"{float(x / x_scale):g}"]
                for i, (x, _label, title, _spec) in enumerate(x_marks)
            ],
        },
        tables=[_series_table(series, x_name, x_unit, y_name, y_unit), _claims_table(points)],
    )
    data = line_chart(chart, series, marks + [p for p, _ in points])
    data["units"] = {
        "x": {"name": x_name, "unit": x_unit},
        "y": {"name": y_name, "unit": y_unit},
        "of": str(claims[0].of),
        "series": [
            {"name": s.name, "bind": b, "points": s.points}
            for s, b in zip(series, bindings, strict=True)
        ],
        "marks": [
            {"spec": spec, "x": m.x} for m, (_x, _l, _t, spec) in zip(marks, x_marks, strict=True)
        ],
        "claims": [{"id": c, "x": p.x, "y": p.y} for p, c in points],
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
        "caption": "Claims drawn",
        "head": ["claim", "x", "claimed"],
        "rows": [[claim, f"{p.x:g}", f"{p.y:g}"] for p, claim in points],
    }


def _claim_points(
    claims: list[Claim], kb: KnowledgeBase, x_name: str, x_scale: Fraction, y_scale: Fraction
) -> list[tuple[Mark, str]]:
    """A circle per claim at its bound x and its claimed value, converted to the y unit."""
    from kb.equations.bind import Bound, quantity, resolve

    points = []
    for claim in claims:
        expect = claim.expect
        x = resolve(kb, claim.bind.get(x_name))
        if expect is None or not isinstance(x, Bound):
            continue
        claimed = quantity(
            {"value": expect.get("value"), "unit": expect.get("unit", "1")}, "expect"
        )
        if not isinstance(claimed, Bound) or claimed.value <= 0:
            continue
        y = float(claimed.value / y_scale)
        title = f"claim {claim.id}: claimed {claimed.shown}"
        points.append((Mark(float(x.value / x_scale), "", title, y=y, line=False), claim.id))
    return points
