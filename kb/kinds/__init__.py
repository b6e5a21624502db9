"""Typed views of schema-valid records: one module per kind, built in one place.

A view is a small frozen dataclass of the fields its consumers read (a flop
class's symbols, equations, derivations and claims; an accelerator's memory,
compute and links; an engine's fitted parameters; a placement's envelope and
options; an interconnect's
figures; a receipt's rows; a proposal's candidate and ratios), built
from a record's data only after the schema stage (kb.checker.schema_stage) has
passed that record: a consumer of a view reads typed fields and re-checks no
type. `views(kb)` is the one accessor; it lives in the run context
(under `VIEWS`) and builds each record's view once per run.

A record with a schema finding (SC001, LD009, LD010 on its file) has no view:
the accessor returns None and the caller decides, in its own code, what it does
instead (the site says so on the page; the ledger is not computed from such a
record and says which one: kb.ledger.inputs; a rule does not check it, its
schema findings already failing the run). Asking before the schema stage has
run raises StageNotRun: nothing is built from unchecked data, so a record-local
rule that reads views declares READS = "views" and runs in the rules stage
(kb.checker). Code that must report on schema-invalid records (the loader, the
schema stage, the record-local rules of the per-file stage) reads `Record.data`
and stays defensive.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from kb.findings import Finding
from kb.model import KnowledgeBase, Record
from kb.run import Kept, StageNotRun

if TYPE_CHECKING:
    from kb.kinds.accelerator import Accelerator
    from kb.kinds.engine import Engine
    from kb.kinds.flop_class import EquationSections
    from kb.kinds.interconnect import Interconnect
    from kb.kinds.placement import Placement
    from kb.kinds.proposal import Proposal
    from kb.kinds.receipt import Receipt

__all__ = ["EQUATION_KINDS", "Views", "views"]

V = TypeVar("V")
# The kinds whose schema carries the equation sections (equations.schema.json).
EQUATION_KINDS = ("flop_class", "strategy")


@dataclass
class Views:
    """The views of one run's records.

    `schema` is the schema stage's findings the views were made for and `failed`
    the files they fall on; a view is built on first use and kept.
    """

    schema: list[Finding]
    failed: frozenset[str]
    _built: dict[tuple[str, str], object] = field(default_factory=dict)
    _builders: dict[str, Callable[[Record], Any]] = field(default_factory=dict)

    def passed(self, record: Record) -> bool:
        """True when the schema stage found nothing on this record's file."""
        return record.path not in self.failed

    def findings(self, record: Record) -> list[Finding]:
        """The schema stage's findings on this record's file (empty when it passed)."""
        if self.passed(record):
            return []
        return [f for f in self.schema if f.location.path == record.path]

    def equations(self, record: Record) -> EquationSections | None:
        """The equation sections of a flop class or strategy; None when schema-invalid."""
        if record.kind not in EQUATION_KINDS:
            raise ValueError(f"{record.id} is a {record.kind}: it has no equation sections")
        return self._view("equations", record, _equation_sections)

    def accelerator(self, record: Record) -> Accelerator | None:
        """The memory, compute and links of an accelerator; None when schema-invalid."""
        return self._view("accelerator", _of("accelerator", record), _accelerator)

    def engine(self, record: Record) -> Engine | None:
        """An engine's version, collective and fitted per-layer overhead; None when invalid."""
        return self._view("engine", _of("engine", record), _engine)

    def placement(self, record: Record) -> Placement | None:
        """The envelope, reference and candidates of a placement; None when schema-invalid."""
        return self._view("placement", _of("placement", record), _placement)

    def interconnect(self, record: Record) -> Interconnect | None:
        """The bandwidth and latency figures of an interconnect; None when schema-invalid."""
        return self._view("interconnect", _of("interconnect", record), _interconnect)

    def receipt(self, record: Record) -> Receipt | None:
        """What a receipt measured and its result rows; None when schema-invalid."""
        return self._view("receipt", _of("receipt", record), _receipt)

    def proposal(self, record: Record) -> Proposal | None:
        """The placement, candidate and stated ratios of a proposal; None when schema-invalid."""
        return self._view("proposal", _of("proposal", record), _proposal)

    def _view(
        self, name: str, record: Record, builder: Callable[[], Callable[[Record], V]]
    ) -> V | None:
        """The view `name` of `record`, built on first use by what `builder` returns."""
        if not self.passed(record):
            return None
        key = (name, record.path)
        if key not in self._built:
            build = self._builders.get(name)
            if build is None:
                build = self._builders[name] = builder()
            self._built[key] = build(record)
        return self._built[key]  # type: ignore[return-value]


# Each kind's module is imported when a run first builds a view of that kind (a run that
# reads no placement never imports kb.kinds.placement, twelve dataclasses: ~20 ms).


def _equation_sections() -> Callable[[Record], EquationSections]:
    from kb.kinds.flop_class import equation_sections

    return equation_sections


def _accelerator() -> Callable[[Record], Accelerator]:
    from kb.kinds.accelerator import accelerator

    return accelerator


def _engine() -> Callable[[Record], Engine]:
    from kb.kinds.engine import engine

    return engine


def _placement() -> Callable[[Record], Placement]:
    from kb.kinds.placement import placement

    return placement


def _interconnect() -> Callable[[Record], Interconnect]:
    from kb.kinds.interconnect import interconnect

    return interconnect


def _receipt() -> Callable[[Record], Receipt]:
    from kb.kinds.receipt import receipt

    return receipt


def _proposal() -> Callable[[Record], Proposal]:
    from kb.kinds.proposal import proposal

    return proposal


def _of(kind: str, record: Record) -> Record:
    """`record`, when it is of `kind` (asking for another kind's view is a programming error)."""
    if record.kind != kind:
        article = "an" if kind[0] in "aeiou" else "a"
        raise ValueError(f"{record.id} is a {record.kind}, not {article} {kind}")
    return record


VIEWS: Kept[Views] = Kept("typed views")  # views(kb), once per schema stage


def views(kb: KnowledgeBase) -> Views:
    """The typed views of `kb`'s records (kept in the run under VIEWS once the schema stage ran)."""
    schema = kb.run.schema
    if schema is None:
        raise StageNotRun("typed views read the schema stage, which has not run (kb.checker)")
    found = kb.run.kept(VIEWS)
    if found is None or found.schema is not schema:  # a new schema stage: new views
        found = kb.run.keep(VIEWS, Views(schema, frozenset(f.location.path for f in schema)))
    return found
