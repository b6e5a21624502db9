"""The equations section of a record page: symbols, equations, derivations and claims.

Equations are printed as MathML from their authored expression trees; the state
of each equation, derivation step and claim (what kb checked: consistent,
derived, recomputed, validated, holds, contradicted, erratum, refuted,
unverified with its reason; kb/equations/results.py), with claimed and computed
values, comes from the equations engine (`kb.equations`), and so does the
record's verdict (kb/equations/verdict.py) shown at the top of its page. An
erratum claim is shown red, "the source says X; kb computes Y"; predictions get
a predicted-versus-measured table (bounds too: side and tightness), where a
contradiction is red with its error (and its reason when the record accepts it).
If the engine cannot be imported the section still shows the maths and says
that nothing was checked.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from kb.equations.codes import MEASURED_KINDS
from kb.equations.results import CONTRADICTED, ERRATUM
from kb.equations.verdict import (
    erratum_text,
    has_verdict,
    record_verdict,
    state_text,
)
from kb.findings import pointer_join
from kb.kinds import EQUATION_KINDS, views
from kb.kinds.flop_class import (
    Claim,
    Derivation,
    Equation,
    EquationSections,
    Step,
    Symbol,
    equations_of,
)
from kb.model import KnowledgeBase, Record
from kb.sitegen.fields import format_scalar, link_for, provenance_of, value_tree
from kb.sitegen.mathml import UnprintableExpression, equation_to_mathml, name_to_mathml
from kb.sitegen.prose_view import has_markup, prose_parts


def equations_context(record: Record, kb: KnowledgeBase) -> dict[str, Any]:
    """Symbols, equations, derivations and claims of a record, each with its state.

    The sections come from the record's typed view (kb.kinds): a flop class or
    strategy with schema findings has none, and the section says so instead.
    """
    items, note = checked_items(record, kb)
    sections = views(kb).equations(record) if record.kind in EQUATION_KINDS else None
    if sections is None:
        sections = EMPTY
        if record.kind in EQUATION_KINDS:
            note = note or UNCHECKED_SCHEMA
    equations = _composed_equations(record, kb) if sections is not EMPTY else ()
    names = display_names(sections.symbols)
    claims = claim_rows(sections.claims, items, kb, record)
    context: dict[str, Any] = {
        "symbols": symbol_rows(sections.symbols),
        "equations": equation_rows(equations, items, names),
        "derivations": derivation_rows(sections.derivations, equations, items, names),
        "claims": claims,
        "predictions": [c for c in claims if c["kind"] in MEASURED_KINDS],
        "note": note,
        "verdict": _verdict(record, items, note),
    }
    context["checks"] = other_checks(items, record.data)
    sections_shown = ("symbols", "equations", "derivations", "claims", "checks")
    context["shown"] = any(context[k] for k in sections_shown) or note == UNCHECKED_SCHEMA
    return context


EMPTY = EquationSections((), (), (), ())
UNCHECKED_SCHEMA = "not shown: the record does not pass its schema (kb validate lists the findings)"


def _composed_equations(record: Record, kb: KnowledgeBase) -> tuple[Equation, ...]:
    """The record's equations with each `uses` entry resolved to the text kb checked."""
    from kb.equations.compose import composed_data

    return equations_of(composed_data(kb, record).get("equations", {}))


def _verdict(record: Record, items: Mapping[str, Any], note: str) -> dict[str, str] | None:
    """The record's one-line verdict for the top of its page (None: it has no model)."""
    if not has_verdict(record.kind, record.data):
        return None
    if note:
        return {"text": f"not validated: {note}", "tone": "none", "why": ""}
    verdict = record_verdict(items.values(), record.data)
    text, why = verdict.text, ""
    reason = record.data.get("unvalidated")
    if isinstance(reason, str) and reason and f": {reason}" in text:  # one line; the why below
        text, why = text.replace(f": {reason}", "", 1), reason
    checked = sum(1 for item in items.values() if item.section == "claim")
    if checked:
        text += f" \u00b7 kb checks its {checked} claim{'' if checked == 1 else 's'}"
    return {"text": text, "tone": verdict.tone, "why": why}


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


def display_names(symbols: tuple[Symbol, ...]) -> dict[str, str]:
    """Symbol name -> its `display` form, where the record gives one."""
    return {symbol.name: symbol.display for symbol in symbols if symbol.display}


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


def symbol_rows(symbols: tuple[Symbol, ...]) -> list[dict[str, Any]]:
    """One row per declared symbol: its printed form, meaning, unit and note."""
    return [
        {
            "name": symbol.name,
            "mathml": name_to_mathml(symbol.name, symbol.display),
            "meaning": symbol.meaning,
            "unit": symbol.unit,
            "note": symbol.note,
            "anchor": f"sym-{_slug(symbol.name)}",
        }
        for symbol in symbols
    ]


def equation_rows(
    equations: tuple[Equation, ...], items: Mapping[str, Any], names: Mapping[str, str]
) -> list[dict[str, Any]]:
    """One entry per equation: MathML (or the reason it is shown as source), state, detail."""
    rows = []
    for equation in equations:
        pointer = pointer_join("/equations", equation.id)
        item = _state(items, pointer_join(pointer, "expr"), pointer_join(pointer, "uses"), pointer)
        text, uses = equation.text, equation.uses
        row = {
            "id": equation.id,
            "source": equation.expr,
            "anchor": f"eq-{_slug(equation.id)}",
            "text": f"uses {uses}" + (f": {text}" if text else "") if uses else text,
            **_item_fields(item),
            **_mathml(equation.expr, names),
        }
        rows.append(row)
    return rows


def derivation_rows(
    derivations: tuple[Derivation, ...],
    equations: tuple[Equation, ...],
    items: Mapping[str, Any],
    names: Mapping[str, str],
) -> list[dict[str, Any]]:
    """Each derivation with its steps; a step's state is the engine's verdict on it."""
    exprs = {equation.id: equation.expr for equation in equations}
    rows = []
    for index, derivation in enumerate(derivations):
        pointer = pointer_join("/derivations", index)
        step_rows = [
            _step_row(step, pointer_join(pointer, "steps", i), exprs, items, names)
            for i, step in enumerate(derivation.steps)
        ]
        rows.append(
            {
                "id": derivation.id,
                "anchor": f"der-{_slug(derivation.id)}",
                "text": derivation.text,
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
    step: Step,
    pointer: str,
    exprs: Mapping[str, str],
    items: Mapping[str, Any],
    names: Mapping[str, str],
) -> dict[str, Any]:
    source = exprs.get(step.result, "")
    fields = _item_fields(_state(items, pointer))
    return {
        "rule": step.rule,
        "result": step.result,
        "source": source,
        "from": [{"id": s, "anchor": f"eq-{_slug(s)}"} for s in step.sources],
        "extra": dict(step.extra),
        **fields,
        **(_mathml(source, names) if source else {"mathml": "", "error": ""}),
    }


def claim_rows(
    claims: tuple[Claim, ...],
    items: Mapping[str, Any],
    kb: KnowledgeBase,
    owner: Record | None = None,
) -> list[dict[str, Any]]:
    """Each claim with its state and the claimed versus the computed value.

    Prose inside a claim (its note, an erratum's reason) is prose of `owner`: its
    templates show their values (kb.sitegen.prose_view), as everywhere on the page.
    """
    rows = []
    for claim in claims:
        item = _state(items, pointer_join("/claims", claim.index))
        fields = _item_fields(item)
        rows.append(
            {
                "id": claim.id,
                "anchor": f"claim-{_slug(claim.id)}",
                "kind": claim.kind,
                "text": claim.text,
                "text_parts": _parts(claim.text, kb, owner),
                "claimed": fields["claimed"] or _claimed(claim),
                "provenance": _claimed_provenance(claim, kb),
                "computed": fields["computed"] or "\u2014",
                "state": fields["state"] or "unverified",
                "shown": state_text(item) if item is not None else "unverified (not checked)",
                "detail": fields["detail"] or ("" if item else "not checked"),
                "inputs": value_tree(
                    {k: v for k, v in claim.data.items() if k not in ("id", "text")},
                    kb,
                    f"claims.{claim.index}",
                    owner,
                ),
                "accepted": "",
                **_erratum_fields(claim, item, kb, owner),
                **_prediction_fields(claim, item, kb),
            }
        )
    return rows


def _erratum_fields(
    claim: Claim, item: Any, kb: KnowledgeBase, owner: Record | None = None
) -> dict[str, Any]:
    """An erratum claim: what the source says, what kb computes, why, and the correction."""
    erratum = claim.erratum
    if erratum is None:
        return {"erratum": None}
    corrected = erratum.corrected_by
    return {
        "erratum": {
            "text": erratum_text(item) if item is not None and item.state == ERRATUM else "",
            "reason": erratum.reason,
            "reason_parts": _parts(erratum.reason, kb, owner),
            "source": link_for(erratum.source, kb) if erratum.source else None,
            "corrected_by": {"id": corrected, "anchor": f"claim-{_slug(corrected)}"}
            if corrected
            else None,
        }
    }


def _parts(text: str, kb: KnowledgeBase, owner: Record | None) -> list[dict[str, Any]] | None:
    """Prose parts of `text` (templates shown, quotations kept), or None for plain text."""
    return prose_parts(text, kb, owner) if owner is not None and has_markup(text) else None


def _prediction_fields(claim: Claim, item: Any, kb: KnowledgeBase) -> dict[str, Any]:
    """A prediction or bound: predicted, measured (its receipt), error, band or side.

    Also a bound's tightness, and the reason a contradiction is accepted.
    """
    if claim.kind not in MEASURED_KINDS:
        return {}
    return {
        "predicted": str(getattr(item, "computed", "") or "\u2014"),
        "measured": str(getattr(item, "claimed", "") or "\u2014"),
        "measured_link": link_for(claim.measured, kb) if claim.measured is not None else None,
        "error": str(getattr(item, "error", "") or "\u2014"),
        "band": str(getattr(item, "band", "") or "\u2014"),
        "tightness": str(getattr(item, "tightness", "") or ""),
        "accepted": claim.accepted if getattr(item, "state", "") == CONTRADICTED else "",
    }


def _claimed_provenance(claim: Claim, kb: KnowledgeBase) -> dict[str, Any] | None:
    if claim.expect is not None and claim.expect.get("basis"):
        return provenance_of(claim.expect, kb)
    return None


def _claimed(claim: Claim) -> str:
    expect = claim.expect
    if expect is None:
        return "\u2014"
    unit = expect.get("unit")
    shown_unit = unit if unit not in (None, "1") else ""
    return f"{format_scalar(expect['value'])} {shown_unit}".strip()


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
