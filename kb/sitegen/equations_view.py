"""The equations section of a record page: symbols, equations, derivations and claims.

Equations are printed as MathML from their authored expression trees; the state
of each equation, derivation step and claim (proved / refuted / unverified, with
claimed and computed values) comes from the equations engine (`kb.equations`).
If the engine cannot be imported the section still shows the maths and says
that nothing was checked.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from kb.findings import pointer_join
from kb.model import KnowledgeBase, Record
from kb.sitegen.fields import format_scalar
from kb.sitegen.mathml import UnprintableExpression, equation_to_mathml, print_name

EXPRESSION_KEYS = ("expr", "equation", "result", "from", "to")
NOT_CHECKED = "not checked: the equations engine (kb.equations) is not available in this build"


def equations_context(record: Record, kb: KnowledgeBase) -> dict[str, Any]:
    """Symbols, equations, derivations and claims of a record, each with its state."""
    data = record.data
    items, note = checked_items(record, kb)
    context = {
        "symbols": symbol_rows(data.get("symbols")),
        "equations": equation_rows(data.get("equations"), items),
        "derivations": derivation_rows(data.get("derivations"), items),
        "claims": claim_rows(data.get("claims"), items),
        "note": note,
    }
    context["shown"] = any(context[k] for k in ("symbols", "equations", "derivations", "claims"))
    return context


def checked_items(record: Record, kb: KnowledgeBase) -> tuple[dict[str, Any], str]:
    """The engine's results for `record`, keyed by JSON pointer, and a note if unavailable."""
    if not any(record.data.get(k) for k in ("equations", "derivations", "claims")):
        return {}, ""
    try:
        engine = importlib.import_module("kb.equations")
        analyse = engine.analyse_record
    except (ImportError, AttributeError):
        return {}, NOT_CHECKED
    try:
        items = analyse(kb, record)
    except Exception as exc:  # the page must still build; the note says what failed
        return {}, f"not checked: the equations engine failed on this record ({exc})"
    return {item.pointer: item for item in items}, ""


def _state(items: Mapping[str, Any], *pointers: str) -> Any:
    for pointer in pointers:
        if pointer in items:
            return items[pointer]
    return None


def symbol_rows(symbols: Any) -> list[dict[str, Any]]:
    """One row per declared symbol: its printed form, meaning and unit."""
    if not isinstance(symbols, Mapping):
        return []
    rows = []
    for name, spec in symbols.items():
        spec = spec if isinstance(spec, Mapping) else {}
        rows.append({
            "name": str(name),
            "mathml": _symbol_mathml(str(name)),
            "meaning": str(spec.get("meaning") or spec.get("description") or ""),
            "unit": str(spec.get("unit") or ""),
            "anchor": f"sym-{_slug(str(name))}",
        })
    return rows


def _symbol_mathml(name: str) -> str:
    import xml.etree.ElementTree as ET

    if not name.replace("_", "").isalnum():
        return ""
    math = ET.Element("math", {"alttext": name})
    math.append(print_name(name))
    return ET.tostring(math, encoding="unicode")


def equation_rows(equations: Any, items: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One entry per equation: MathML (or the reason it is shown as source), state, detail."""
    if not isinstance(equations, Mapping):
        return []
    rows = []
    for eq_id, spec in equations.items():
        source = str(spec.get("expr", "") if isinstance(spec, Mapping) else spec)
        pointer = pointer_join("/equations", eq_id)
        item = _state(items, pointer_join(pointer, "expr"), pointer)
        row = {"id": str(eq_id), "source": source, "anchor": f"eq-{_slug(str(eq_id))}",
               "text": str(spec.get("text", "")) if isinstance(spec, Mapping) else "",
               **_item_fields(item), **_mathml(source)}
        rows.append(row)
    return rows


def derivation_rows(derivations: Any, items: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each derivation with its steps; a step's state is the engine's verdict on it."""
    if not isinstance(derivations, list):
        return []
    rows = []
    for index, derivation in enumerate(derivations):
        if not isinstance(derivation, Mapping):
            continue
        pointer = pointer_join("/derivations", index)
        steps = derivation.get("steps") if isinstance(derivation.get("steps"), list) else []
        name = str(derivation.get("id", index))
        rows.append({
            "id": name, "anchor": f"der-{_slug(name)}",
            "text": str(derivation.get("text") or derivation.get("goal") or ""),
            "state": _item_fields(_state(items, pointer))["state"],
            "steps": [_step_row(step, pointer_join(pointer, "steps", i), items)
                      for i, step in enumerate(steps)],
        })
    return rows


def _step_row(step: Any, pointer: str, items: Mapping[str, Any]) -> dict[str, Any]:
    step = step if isinstance(step, Mapping) else {"expr": step}
    source = next((str(step[k]) for k in EXPRESSION_KEYS if isinstance(step.get(k), str)), "")
    rule = str(step.get("rule") or step.get("step") or "")
    fields = _item_fields(_state(items, pointer))
    return {"rule": rule, "source": source, **fields, **(_mathml(source) if "=" in source else
                                                         {"mathml": "", "error": ""})}


def claim_rows(claims: Any, items: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each claim with its state and the claimed versus the computed value."""
    if not isinstance(claims, list):
        return []
    rows = []
    for index, claim in enumerate(claims):
        if not isinstance(claim, Mapping):
            continue
        item = _state(items, pointer_join("/claims", index))
        name = str(claim.get("id", index))
        fields = _item_fields(item)
        rows.append({
            "id": name, "anchor": f"claim-{_slug(name)}",
            "text": str(claim.get("text") or claim.get("statement") or ""),
            "claimed": fields["claimed"] or _claimed(claim),
            "computed": fields["computed"] or "\u2014",
            "state": fields["state"] or "unverified",
            "detail": fields["detail"] or ("" if item else "not checked"),
        })
    return rows


def _claimed(claim: Mapping[str, Any]) -> str:
    value = claim.get("claimed", claim.get("value", claim.get("expect")))
    if isinstance(value, Mapping):
        unit = value.get("unit")
        shown_unit = unit if unit not in (None, "1") else ""
        return f"{format_scalar(value.get('value'))} {shown_unit}".strip()
    return format_scalar(value) if value is not None else "\u2014"


def _item_fields(item: Any) -> dict[str, str]:
    if item is None:
        return {"state": "", "detail": "", "claimed": "", "computed": ""}
    return {"state": str(item.state), "detail": str(item.detail),
            "claimed": str(getattr(item, "claimed", "")),
            "computed": str(getattr(item, "computed", ""))}


def _mathml(source: str) -> dict[str, str]:
    try:
        return {"mathml": equation_to_mathml(source), "error": ""}
    except UnprintableExpression as exc:
        return {"mathml": "", "error": str(exc)}


def _slug(text: str) -> str:
    return "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else "-" for c in text)
