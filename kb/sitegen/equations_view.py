"""The equations section of a record page: symbols, equations, derivations and claims.

Equations are printed as MathML from their authored expression trees; the state
of each equation, derivation step and claim (what kb checked: consistent,
derived, recomputed, validated, contradicted, limitation, erratum, refuted,
unverified with its reason; kb/equations/results.py), with claimed and computed
values, comes from the equations engine (`kb.equations`), and so does the
record's verdict (kb/equations/verdict.py) shown at the top of its page. An
erratum claim is shown red, "the source says X; kb computes Y"; predictions get
a predicted-versus-measured table. If the engine cannot be imported the section
still shows the maths and says that nothing was checked.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from kb.equations.results import ERRATUM
from kb.equations.verdict import erratum_text, has_verdict, record_verdict, state_text
from kb.findings import pointer_join
from kb.model import KnowledgeBase, Record
from kb.sitegen.fields import format_scalar, link_for, provenance_of, value_tree
from kb.sitegen.mathml import UnprintableExpression, equation_to_mathml, name_to_mathml
from kb.sitegen.prose_view import has_markup, prose_parts


def equations_context(record: Record, kb: KnowledgeBase) -> dict[str, Any]:
    """Symbols, equations, derivations and claims of a record, each with its state."""
    data = record.data
    items, note = checked_items(record, kb)
    found = _composed_equations(record, kb)
    equations: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    names = display_names(data.get("symbols"))
    claims = claim_rows(data.get("claims"), items, kb, record)
    context: dict[str, Any] = {
        "symbols": symbol_rows(data.get("symbols")),
        "equations": equation_rows(equations, items, names),
        "derivations": derivation_rows(data.get("derivations"), equations, items, names),
        "claims": claims,
        "predictions": [c for c in claims if c["kind"] == "prediction"],
        "note": note,
        "verdict": _verdict(record, items, note),
    }
    context["checks"] = other_checks(items, data)
    sections = ("symbols", "equations", "derivations", "claims", "checks")
    context["shown"] = any(context[k] for k in sections)
    return context


def _composed_equations(record: Record, kb: KnowledgeBase) -> Any:
    """The record's equations with each `uses` entry resolved to the text kb checked."""
    from kb.equations.compose import composed_data

    return composed_data(kb, record).get("equations")


def _verdict(record: Record, items: Mapping[str, Any], note: str) -> dict[str, str] | None:
    """The record's one-line verdict for the top of its page (None: it has no model)."""
    if not has_verdict(record.kind, record.data):
        return None
    if note:
        return {"text": f"not validated: {note}", "tone": "none"}
    verdict = record_verdict(items.values(), record.data)
    return {"text": verdict.text, "tone": verdict.tone}


def errata_by_claim(record: Record, kb: KnowledgeBase) -> dict[str, dict[str, str]]:
    """Claim id -> what an erratum link on a scales_with/workaround item shows of it."""
    items, _ = checked_items(record, kb)
    found = {}
    for item in items.values():
        if item.section == "claim" and item.state == ERRATUM:
            found[item.id] = {
                "text": erratum_text(item),
                "anchor": f"claim-{_slug(item.id)}",
                "state": item.state,
            }
        elif item.section == "claim":
            found[item.id] = {
                "text": f"{state_text(item)} (not an erratum now)",
                "anchor": f"claim-{_slug(item.id)}",
                "state": item.state,
            }
    return found


def display_names(symbols: Any) -> dict[str, str]:
    """Symbol name -> its `display` form, where the record gives one."""
    if not isinstance(symbols, Mapping):
        return {}
    return {
        str(name): str(spec["display"])
        for name, spec in symbols.items()
        if isinstance(spec, Mapping) and spec.get("display")
    }


def other_checks(items: Mapping[str, Any], data: Mapping[str, Any]) -> list[dict[str, str]]:
    """Engine results outside the equation sections (a model's derived figures)."""
    sections = ("/symbols", "/equations", "/derivations", "/claims")
    return [
        {"id": item.id, "pointer": pointer, **_item_fields(item)}
        for pointer, item in sorted(items.items())
        if not pointer.startswith(sections)
    ]


def checked_items(record: Record, kb: KnowledgeBase) -> tuple[dict[str, Any], str]:
    """Return the engine's results for `record` by JSON pointer, and a note if it failed."""
    from kb.equations.engine import analyse

    try:
        result = analyse(kb).results.get(record.id)
    except Exception as exc:  # the page must still build; the note says what failed
        return {}, f"not checked: the equations engine failed ({type(exc).__name__}: {exc})"
    items = result.items if result is not None else []
    return {item.pointer: item for item in items}, ""


def _state(items: Mapping[str, Any], *pointers: str) -> Any:
    for pointer in pointers:
        if pointer in items:
            return items[pointer]
    return None


def symbol_rows(symbols: Any) -> list[dict[str, Any]]:
    """One row per declared symbol: its printed form, meaning, unit and note."""
    if not isinstance(symbols, Mapping):
        return []
    rows = []
    for name, spec in symbols.items():
        spec = spec if isinstance(spec, Mapping) else {}
        rows.append(
            {
                "name": str(name),
                "mathml": name_to_mathml(str(name), str(spec.get("display") or "")),
                "meaning": str(spec.get("meaning") or ""),
                "unit": str(spec.get("unit") or ""),
                "note": str(spec.get("note") or ""),
                "anchor": f"sym-{_slug(str(name))}",
            }
        )
    return rows


def equation_rows(
    equations: Any, items: Mapping[str, Any], names: Mapping[str, str]
) -> list[dict[str, Any]]:
    """One entry per equation: MathML (or the reason it is shown as source), state, detail."""
    if not isinstance(equations, Mapping):
        return []
    rows = []
    for eq_id, spec in equations.items():
        source = str(spec.get("expr", "") if isinstance(spec, Mapping) else spec)
        pointer = pointer_join("/equations", eq_id)
        uses = str(spec.get("uses", "")) if isinstance(spec, Mapping) else ""
        item = _state(items, pointer_join(pointer, "expr"), pointer_join(pointer, "uses"), pointer)
        text = str(spec.get("text", "")) if isinstance(spec, Mapping) else ""
        row = {
            "id": str(eq_id),
            "source": source,
            "anchor": f"eq-{_slug(str(eq_id))}",
            "text": f"uses {uses}" + (f": {text}" if text else "") if uses else text,
            **_item_fields(item),
            **_mathml(source, names),
        }
        rows.append(row)
    return rows


def derivation_rows(
    derivations: Any,
    equations: Mapping[str, Any],
    items: Mapping[str, Any],
    names: Mapping[str, str],
) -> list[dict[str, Any]]:
    """Each derivation with its steps; a step's state is the engine's verdict on it."""
    if not isinstance(derivations, list):
        return []
    rows = []
    for index, derivation in enumerate(derivations):
        if not isinstance(derivation, Mapping):
            continue
        pointer = pointer_join("/derivations", index)
        listed = derivation.get("steps")
        steps: list[Any] = listed if isinstance(listed, list) else []
        step_rows = [
            _step_row(step, pointer_join(pointer, "steps", i), equations, items, names)
            for i, step in enumerate(steps)
        ]
        name = str(derivation.get("id", index))
        rows.append(
            {
                "id": name,
                "anchor": f"der-{_slug(name)}",
                "text": str(derivation.get("text") or derivation.get("goal") or ""),
                "state": overall_state([s["state"] for s in step_rows]),
                "steps": step_rows,
            }
        )
    return rows


def overall_state(states: list[str]) -> str:
    """Refuted if any step is, derived only if every step is, else unverified."""
    if not states:
        return ""
    if any(s in ("refuted", "invalid") for s in states):
        return "refuted"
    return "derived" if all(s == "derived" for s in states) else "unverified"


def _step_row(
    step: Any,
    pointer: str,
    equations: Mapping[str, Any],
    items: Mapping[str, Any],
    names: Mapping[str, str],
) -> dict[str, Any]:
    step = step if isinstance(step, Mapping) else {}
    result = str(step.get("result", ""))
    spec = equations.get(result)
    source = str(spec.get("expr", "") if isinstance(spec, Mapping) else spec or "")
    sources = step.get("from")
    sources = (
        [str(s) for s in sources]
        if isinstance(sources, list)
        else ([str(sources)] if sources else [])
    )
    fields = _item_fields(_state(items, pointer))
    return {
        "rule": str(step.get("rule") or ""),
        "result": result,
        "source": source,
        "from": [{"id": s, "anchor": f"eq-{_slug(s)}"} for s in sources],
        "extra": {k: str(v) for k, v in step.items() if k not in ("rule", "result", "from")},
        **fields,
        **(_mathml(source, names) if source else {"mathml": "", "error": ""}),
    }


def claim_rows(
    claims: Any, items: Mapping[str, Any], kb: KnowledgeBase, owner: Record | None = None
) -> list[dict[str, Any]]:
    """Each claim with its state and the claimed versus the computed value.

    Prose inside a claim (its note, an erratum's reason) is prose of `owner`: its
    templates show their values (kb.sitegen.prose_view), as everywhere on the page.
    """
    if not isinstance(claims, list):
        return []
    rows = []
    for index, claim in enumerate(claims):
        if not isinstance(claim, Mapping):
            continue
        item = _state(items, pointer_join("/claims", index))
        name = str(claim.get("id", index))
        fields = _item_fields(item)
        rows.append(
            {
                "id": name,
                "anchor": f"claim-{_slug(name)}",
                "kind": str(claim.get("kind") or ""),
                "text": str(claim.get("text") or claim.get("statement") or ""),
                "claimed": fields["claimed"] or _claimed(claim),
                "provenance": _claimed_provenance(claim, kb),
                "computed": fields["computed"] or "\u2014",
                "state": fields["state"] or "unverified",
                "shown": state_text(item) if item is not None else "unverified (not checked)",
                "detail": fields["detail"] or ("" if item else "not checked"),
                "inputs": value_tree(
                    {k: v for k, v in claim.items() if k not in ("id", "text")},
                    kb,
                    f"claims.{index}",
                    owner,
                ),
                "limitation": "",
                **_erratum_fields(claim, item, kb, owner),
                **_prediction_fields(claim, item, kb),
            }
        )
    return rows


def _erratum_fields(
    claim: Mapping[str, Any], item: Any, kb: KnowledgeBase, owner: Record | None = None
) -> dict[str, Any]:
    """An erratum claim: what the source says, what kb computes, why, and the correction."""
    erratum = claim.get("erratum")
    if not isinstance(erratum, Mapping):
        return {"erratum": None}
    corrected = erratum.get("corrected_by")
    source = erratum.get("source")
    return {
        "erratum": {
            "text": erratum_text(item) if item is not None and item.state == ERRATUM else "",
            "reason": str(erratum.get("reason") or ""),
            "reason_parts": _parts(str(erratum.get("reason") or ""), kb, owner),
            "source": link_for(str(source), kb) if source else None,
            "corrected_by": {"id": str(corrected), "anchor": f"claim-{_slug(str(corrected))}"}
            if corrected
            else None,
        }
    }


def _parts(text: str, kb: KnowledgeBase, owner: Record | None) -> list[dict[str, Any]] | None:
    """Prose parts of `text` (templates shown, quotations kept), or None for plain text."""
    return prose_parts(text, kb, owner) if owner is not None and has_markup(text) else None


def _prediction_fields(claim: Mapping[str, Any], item: Any, kb: KnowledgeBase) -> dict[str, Any]:
    """A prediction: predicted, measured (and its receipt), error, band, limitation."""
    if claim.get("kind") != "prediction":
        return {}
    measured = claim.get("measured")
    limitation = claim.get("limitation")
    return {
        "predicted": str(getattr(item, "computed", "") or "\u2014"),
        "measured": str(getattr(item, "claimed", "") or "\u2014"),
        "measured_link": link_for(str(measured), kb) if isinstance(measured, str) else None,
        "error": str(getattr(item, "error", "") or "\u2014"),
        "band": str(getattr(item, "band", "") or "\u2014"),
        "limitation": str(limitation.get("reason") or "")
        if isinstance(limitation, Mapping)
        else "",
    }


def _claimed_provenance(claim: Mapping[str, Any], kb: KnowledgeBase) -> dict[str, Any] | None:
    expect = claim.get("expect")
    if isinstance(expect, Mapping) and expect.get("basis"):
        return provenance_of(expect, kb)
    return None


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
    return {
        "state": str(item.state),
        "detail": str(item.detail),
        "claimed": str(getattr(item, "claimed", "")),
        "computed": str(getattr(item, "computed", "")),
    }


def _mathml(source: str, names: Mapping[str, str]) -> dict[str, str]:
    mathml, error = _printed(source, tuple(names.items()))
    return {"mathml": mathml, "error": error}


@functools.lru_cache(maxsize=2048)
def _printed(source: str, names: tuple[tuple[str, str], ...]) -> tuple[str, str]:
    """Print an equation once per distinct text (families of records share equations)."""
    try:
        return equation_to_mathml(source, names=dict(names)), ""
    except UnprintableExpression as exc:
        return "", str(exc)


def _slug(text: str) -> str:
    return "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else "-" for c in text)
