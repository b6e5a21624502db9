"""The equation sections of a schema-valid flop class (or strategy), typed.

Symbols, equations, derivations and claims as equations.schema.json shapes them,
plus the flop class's hardware lists. Built only for a record the schema stage
passed (kb.kinds.views), so nothing here checks a type: a field the schema makes
optional is None or empty, never of another type.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kb.model import Record

# The prose items that may name an erratum claim (`erratum: <claim id>`, EQ020).
ERRATUM_SECTIONS = ("scales_with", "workarounds")
# A claim's bound value: a binding `record#field` or a literal quantity mapping.
Bound = str | Mapping[str, Any]


@dataclass(frozen=True)
class Symbol:
    name: str
    meaning: str
    unit: str
    display: str = ""
    note: str = ""


@dataclass(frozen=True)
class Equation:
    """`expr` is "" for a `uses` entry that kb could not resolve (compose.py says why)."""

    id: str
    expr: str
    uses: str = ""
    text: str = ""


@dataclass(frozen=True)
class Step:
    rule: str
    result: str
    sources: tuple[str, ...]  # `from`: one id or a list, always a tuple here
    extra: tuple[tuple[str, str], ...]  # every other key, as text, in authored order


@dataclass(frozen=True)
class Derivation:
    id: str
    text: str
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class Erratum:
    source: str
    reason: str
    corrected_by: str = ""


@dataclass(frozen=True)
class Claim:
    """One claim; `data` is the claim's mapping as written (the site prints its inputs)."""

    index: int
    id: str
    kind: str
    text: str
    of: str | None
    bind: Mapping[str, Bound]
    change: Mapping[str, Any]  # symbol -> expression text, number, binding or quantity
    expect: Mapping[str, Any] | None
    measured: str | None
    accepted: str  # the reason a contradiction is accepted ("" if none is)
    bound: str  # a bound's side: upper | lower ("" for another kind)
    erratum: Erratum | None
    data: Mapping[str, Any]


@dataclass(frozen=True)
class Evidence:
    """A receipt that confirms, refutes or gives context to a flop class."""

    receipt: str
    verdict: str
    note: str = ""


@dataclass(frozen=True)
class EquationSections:
    """What a record's equation sections say; of a flop class, its hardware and evidence too."""

    symbols: tuple[Symbol, ...]
    equations: tuple[Equation, ...]
    derivations: tuple[Derivation, ...]
    claims: tuple[Claim, ...]
    hardware: tuple[str, ...] = ()  # affected_by_hardware, then every values_for, as written
    evidence: tuple[Evidence, ...] = ()
    calibration: tuple[str, ...] = ()  # the receipts a parameter was fitted to
    # (JSON pointer of an `erratum:` field, the claim id it names), in ERRATUM_SECTIONS order
    erratum_links: tuple[tuple[str, str], ...] = ()

    def numeric_claims(self) -> tuple[Claim, ...]:
        """The numeric claims that name their target (`of`)."""
        return tuple(c for c in self.claims if c.kind == "numeric" and c.of is not None)


def equation_sections(record: Record) -> EquationSections:
    """The view of a schema-valid record's equation sections (kb.kinds.views builds it)."""
    data = record.data
    hardware = [*data.get("affected_by_hardware", ())]
    for row in data.get("hardware_parameters", ()):
        hardware.extend(row.get("values_for", ()))
    return EquationSections(
        symbols=tuple(_symbol(name, spec) for name, spec in data.get("symbols", {}).items()),
        equations=equations_of(data.get("equations", {})),
        derivations=tuple(_derivation(d) for d in data.get("derivations", ())),
        claims=tuple(_claim(i, c) for i, c in enumerate(data.get("claims", ()))),
        hardware=tuple(str(h) for h in hardware),
        evidence=tuple(
            Evidence(str(e["receipt"]), str(e["verdict"]), str(e.get("note", "")))
            for e in data.get("evidence", ())
        ),
        calibration=tuple(str(r) for r in data.get("calibration", ())),
        erratum_links=tuple(
            (f"/{section}/{index}/erratum", str(entry["erratum"]))
            for section in ERRATUM_SECTIONS
            for index, entry in enumerate(data.get(section, ()))
            if "erratum" in entry
        ),
    )


def equations_of(equations: Mapping[str, Mapping[str, Any]]) -> tuple[Equation, ...]:
    """Equations from a schema-valid `equations` mapping (or its composed form, uses resolved)."""
    return tuple(
        Equation(
            str(eq_id),
            str(spec.get("expr", "")),
            str(spec.get("uses", "")),
            str(spec.get("text", "")),
        )
        for eq_id, spec in equations.items()
    )


def _symbol(name: str, spec: Mapping[str, Any]) -> Symbol:
    return Symbol(
        str(name),
        str(spec["meaning"]),
        str(spec["unit"]),
        str(spec.get("display") or ""),
        str(spec.get("note") or ""),
    )


def _derivation(node: Mapping[str, Any]) -> Derivation:
    return Derivation(
        str(node["id"]), str(node.get("text") or ""), tuple(_step(s) for s in node["steps"])
    )


def _step(node: Mapping[str, Any]) -> Step:
    sources = node.get("from")
    return Step(
        str(node["rule"]),
        str(node["result"]),
        (sources,) if isinstance(sources, str) else tuple(sources or ()),  # schema: one or a list
        tuple((k, str(v)) for k, v in node.items() if k not in ("rule", "result", "from")),
    )


def _claim(index: int, node: Mapping[str, Any]) -> Claim:
    erratum = node.get("erratum")
    accepted = node.get("accepted")
    return Claim(
        index=index,
        id=str(node["id"]),
        kind=str(node["kind"]),
        text=str(node.get("text") or ""),
        of=node.get("of"),
        bind=node.get("bind", {}),
        change=node.get("change", {}),
        expect=node.get("expect"),
        measured=node.get("measured"),
        accepted=str(accepted["reason"]) if accepted is not None else "",
        bound=str(node.get("bound") or ""),
        erratum=None
        if erratum is None
        else Erratum(
            str(erratum["source"]), str(erratum["reason"]), str(erratum.get("corrected_by", ""))
        ),
        data=node,
    )
