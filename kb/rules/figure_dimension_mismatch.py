"""A figure's unit must have the physical dimension its field declares.

Every quantity field of every schema declares what it measures (`x-kb-dimension`,
kb/dimensions.py): an accelerator's `memory.capacity` is a size in bytes, its
`memory.bandwidth` bytes per second, its `power` watts; a receipt row's `latency` is
a time; a placement's `useful.rate` is bytes or FLOP per second. Any unit of that
dimension will do (`GiB`, `MB`, `B` for a size), and no unit of another: the
finding stands at the figure and says what the field is and what the unit makes
the figure. A unit kb does not know (`TBps`) cannot be checked and is a finding too.
Fields that declare `*` (a claim's bound value or expected value, a receipt row's
generic `value`) get their dimension from the record itself and are checked there
(EQ012, EQ004). A figure given as a binding (`hardware/x#memory.capacity`) is
checked where it is written, against the field that holds it.

Why: a dimension error passes every other check. `capacity: {value: 128, unit:
TB/s}` is a well-formed figure with a basis and a source; the comparison page then
printed "128 TB/s" in the "Memory capacity (GiB)" row, and a placement would have
divided by it.

Bad:

    memory:
      capacity: {value: 128, unit: TB/s, basis: vendor-spec, source: sources/x}

Good:

    memory:
      capacity: {value: 128, unit: GiB, basis: vendor-spec, source: sources/x}
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

from kb.dimensions import Declared, declared, declared_figures, describe, figures
from kb.findings import Finding, Severity, pointer_parts
from kb.model import KnowledgeBase
from kb.quantities import UnitError, parse_unit
from kb.rules._base import found

READS = "record"
CODE = "SC002"
NAME = "figure-dimension-mismatch"
SEVERITY = Severity.ERROR
HINT = (
    "write the figure in a unit of the field's dimension, or put it in the field that measures it"
)


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    """Every record of a known kind; a field the record does not have is not checked.

    Most records have no such figure: a first walk without pointers answers that
    (`wrong`), and only a record that has one is walked again for the pointers.
    """
    for record in kb:
        if not any(
            wrong(figure, want) for figure, want in declared_figures(record.kind, record.data)
        ):
            continue
        for pointer, figure, want in figures(record.kind, record.data):
            problem = _problem(pointer, figure, want)
            if problem is not None:
                message, hint = problem
                yield found(CODE, SEVERITY, record.path, pointer, message, hint)


def wrong(figure: Mapping[str, Any], want: Declared) -> bool:
    """Whether `_problem` has something to say of this figure (without wording it)."""
    unit = figure.get("unit")
    if want.any or not isinstance(unit, str):
        return False  # a unit that is not text is a schema error (SC001)
    return not _fits(unit, want.written)


@lru_cache(maxsize=4096)  # a tree repeats a few dozen (unit, declaration) pairs ~50,000 times
def _fits(unit: str, written: tuple[str, ...]) -> bool:
    """Whether `unit` is kb's and of a dimension the declaration written `written` admits."""
    try:
        return declared(written).admits(parse_unit(unit).dims)
    except UnitError:
        return False


def _problem(pointer: str, figure: Mapping[str, Any], want: Declared) -> tuple[str, str] | None:
    unit = figure.get("unit")
    if want.any or not isinstance(unit, str):
        return None  # a unit that is not text is a schema error (SC001)
    field = ".".join(pointer_parts(pointer))
    written = f"{_number(figure.get('value'))} {unit}"
    try:
        dims = parse_unit(unit).dims
    except UnitError as exc:
        hint = exc.hint or HINT
        return (
            f"{field} holds {want.described()}, but the unit of {written} is not one kb knows "
            f"({exc}), so its dimension cannot be checked",
            hint,
        )
    if want.admits(dims):
        return None
    units = " or ".join(want.written)
    return (
        f"{field} holds {want.described()}, but {written} is {describe(dims)}",
        f"write {field} in a unit of {units} (any prefix), or move the figure to the "
        "field that measures it",
    )


def _number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return str(value)
