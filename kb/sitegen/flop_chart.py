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
from fractions import Fraction
from typing import Any

from kb.model import KnowledgeBase, Record, split_binding
from kb.sitegen.charts import Chart, Mark, Series, line_chart

SAMPLES = 24


def flop_charts(record: Record, kb: KnowledgeBase) -> list[dict[str, Any]]:
    """Zero or one chart for a flop class (none when no numeric claim gives one)."""
    claims = _numeric_claims(record)
    if not claims:
        return []
    try:
        plan = _plan(record, kb, claims)
    except Exception:  # noqa: BLE001 - a chart that cannot be drawn must not stop the build
        return []
    return [plan] if plan else []


def _numeric_claims(record: Record) -> list[Mapping[str, Any]]:
    claims = record.data.get("claims")
    if not isinstance(claims, list):
        return []
    found = [
        c
        for c in claims
        if isinstance(c, Mapping)
        and c.get("kind") == "numeric"
        and isinstance(c.get("bind"), Mapping)
        and isinstance(c.get("of"), str)
    ]
    first_of = found[0]["of"] if found else None
    return [c for c in found if c["of"] == first_of]


def _kind_of(spec: Any, kb: KnowledgeBase) -> str:
    if not isinstance(spec, str) or "#" not in spec:
        return ""
    record = kb.get(split_binding(spec)[0])
    return record.kind if record is not None else ""


def _pick(claims: list[Mapping[str, Any]], kb: KnowledgeBase, kind: str) -> str:
    """Return the first bound symbol whose binding names a record of `kind`."""
    for claim in claims:
        for name, spec in claim["bind"].items():
            if _kind_of(spec, kb) == kind:
                return str(name)
    return ""


def _plan(
    record: Record, kb: KnowledgeBase, claims: list[Mapping[str, Any]]
) -> dict[str, Any] | None:
    from kb.equations.bind import Bound, resolve

    x_name = _pick(claims, kb, "interconnect")
    if not x_name:
        return None
    line_name = _pick(claims, kb, "accelerator")
    function = _target_function(_composed(record, kb), claims[0]["of"])
    held = {str(k): v for k, v in claims[0]["bind"].items() if str(k) != x_name}
    lines = _line_bindings(record, kb, held.get(line_name), line_name)
    x_marks = _x_marks(claims, kb, x_name, lines)
    if not x_marks or function is None:
        return None
    xs = [m[0] for m in x_marks]
    grid = _grid(min(xs) / 2, max(xs) * 2)
    x_unit = _display_unit(claims[0]["bind"][x_name], kb)
    series = []
    for label, binding in lines:
        values = {**held, **({line_name: binding} if line_name else {})}
        resolved = {name: resolve(kb, spec) for name, spec in values.items()}
        exact = {name: b.value for name, b in resolved.items() if isinstance(b, Bound)}
        if len(exact) < len(resolved):
            continue
        series.append(
            Series(
                label,
                tuple((float(x / x_unit[1]), _value(function, x_name, x, exact)) for x in grid),
            )
        )
    if not series:
        return None
    on_lines = [
        c for c in claims if all(c["bind"].get(k) == v for k, v in held.items() if k != line_name)
    ]
    return _chart(record, kb, on_lines, series, x_marks, x_name, x_unit, function.lhs_name)


class _Function:
    """The claim's target as a SymPy expression of named symbols (definitions expanded)."""

    def __init__(self, expr: Any, lhs_name: str) -> None:
        self.expr, self.lhs_name = expr, lhs_name


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
    return _Function(expr, str(equation.lhs.value))


def _value(function: _Function, x_name: str, x: Fraction, exact: Mapping[str, Fraction]) -> float:
    return float(sympy_value(function.expr, {**exact, x_name: x}))


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
    record: Record, kb: KnowledgeBase, spec: Any, name: str
) -> list[tuple[str, str | None]]:
    """(label, binding) per accelerator the class names, at the claim's field path."""
    if not name or not isinstance(spec, str):
        return [("as claimed", None)] if not name else []
    field = split_binding(spec)[1]
    ids = set(_strings(record.data.get("affected_by_hardware")))
    for row in record.data.get("hardware_parameters") or []:
        if isinstance(row, Mapping):
            ids.update(_strings(row.get("values_for")))
    ids.add(split_binding(spec)[0])
    found = [(kb.get(i), i) for i in sorted(ids)]
    return [(r.title or i, f"{i}#{field}") for r, i in found if r is not None and r.get(field)]


def _strings(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def _x_marks(
    claims: list[Mapping[str, Any]],
    kb: KnowledgeBase,
    x_name: str,
    lines: list[tuple[str, str | None]],
) -> list[tuple[Fraction, str, str]]:
    """(x in base units, label, title) for the interconnects the chart is about.

    Those are the interconnects the claims bind and the scale-up and host links of
    the accelerators drawn, each at the fields the claims bind (per link, per
    device): a bounded set however many interconnect records the base holds.
    """
    from kb.equations.bind import Bound, resolve

    specs = [str(c["bind"][x_name]) for c in claims if x_name in c["bind"]]
    fields = sorted({split_binding(spec)[1] for spec in specs})
    ids = {split_binding(spec)[0] for spec in specs}
    for _label, binding in lines:
        accelerator = kb.get(split_binding(str(binding))[0]) if binding else None
        ids.update(_links_of(accelerator) if accelerator is not None else ())
    marks = []
    for link_id in sorted(ids):
        link = kb.get(link_id)
        for field in fields:
            bound = resolve(kb, f"{link_id}#{field}") if link is not None else None
            if link is not None and isinstance(bound, Bound) and bound.value > 0:
                marks.append((bound.value, link_id.split("/")[-1], f"{link.title}: {field}"))
    return sorted(marks)


def _links_of(accelerator: Record) -> list[str]:
    links = accelerator.data.get("links")
    found = (
        [
            str(link.get("interconnect"))
            for link in links
            if isinstance(link, Mapping) and link.get("interconnect")
        ]
        if isinstance(links, list)
        else []
    )
    host = accelerator.data.get("host_link")
    if isinstance(host, Mapping) and host.get("interconnect"):
        found.append(str(host["interconnect"]))
    return found


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
    claims: list[Mapping[str, Any]],
    series: list[Series],
    x_marks: list[tuple[Fraction, str, str]],
    x_name: str,
    x_unit: tuple[str, Fraction],
    y_name: str,
) -> dict[str, Any]:
    unit, scale = x_unit
    marks = [
        Mark(float(x / scale), str(i + 1), f"{i + 1}. {title}: {float(x / scale):g} {unit}")
        for i, (x, _label, title) in enumerate(x_marks)
    ]
    marks += _claim_points(claims, kb, x_name, scale)
    chart = Chart(
        anchor="chart-" + record.id.replace("/", "-"),
        title=f"{y_name} over {x_name} ({record.title})",
        desc=(
            f"{y_name} against {x_name} in {unit} on log-log axes, one line per "
            f"accelerator ({', '.join(s.name for s in series)}); numbered vertical rules "
            f"mark the interconnect records listed below the chart, and circles mark the "
            f"claimed values."
        ),
        x_label=f"{x_name} ({unit})",
        y_label=y_name,
        caption=(
            f"{y_name} from equation {claims[0]['of']} with the bindings of claim "
            f"{claims[0].get('id', 1)}; each line re-binds the accelerator field. "
            f"Circles: the record's claims."
        ),
        table={
            "head": ["#", "interconnect field", f"{x_name} ({unit})"],
            "rows": [
                [str(i + 1), title, f"{float(x / scale):g}"]
                for i, (x, _label, title) in enumerate(x_marks)
            ],
        },
    )
    return line_chart(chart, series, marks)


def _claim_points(
    claims: list[Mapping[str, Any]], kb: KnowledgeBase, x_name: str, scale: Fraction
) -> list[Mark]:
    """Mark each claim with a circle at its bound x and its claimed value."""
    from kb.equations.bind import Bound, resolve

    points = []
    for claim in claims:
        expect = claim.get("expect")
        x = resolve(kb, claim["bind"].get(x_name))
        if not isinstance(expect, Mapping) or not isinstance(x, Bound):
            continue
        value = float(expect.get("value", 0) or 0)
        if value > 0:
            points.append(
                Mark(
                    float(x.value / scale),
                    "",
                    f"claim {claim.get('id', '')}: claimed {expect.get('value')}",
                    y=value,
                    line=False,
                )
            )
    return points
