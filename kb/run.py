"""What one validation run knows besides the records: the typed run context.

The checker (kb.checker) creates a `RunContext` for the knowledge base it checks
and fills it stage by stage: the per-file stage's results, the schema stage's
findings, the equations analysis, the codes the catalogue knows and the waivers
that suppressed a finding. Rules read it through `kb.run` (one typed
attribute); the caches some rules share within a run (walked mappings, resolved
placements, the receipts index) are fields here too, so nothing is keyed by a
string or by `id()` of a knowledge base. Nothing here outlives the run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from kb.equations.engine import Analysis
    from kb.findings import Finding
    from kb.kinds import Views
    from kb.recordcache import RecordCache


@dataclass
class RunStats:
    """How a run went, returned to whoever asks (tests, bench), never kept in a global.

    `mode`: "full", "incremental" or "snapshot" (kb.incremental); `rechecked`: the
    files whose findings were recomputed; `loaded`: the records loaded to do it.
    The equations stage (kb.equations.engine) adds the records it served from its
    cache (`cached`), from plans (`planned`) and checked symbolically (`symbolic`),
    and what the run built for it, workers included (`built_*`, kb.equations.shared).
    """

    mode: str = ""
    rechecked: int = 0
    loaded: int = 0
    cached: int = 0
    planned: int = 0
    symbolic: int = 0
    built_systems: int = 0
    built_claims: int = 0
    built_derivations: int = 0


@dataclass
class Spending:
    """What one run's symbolic checks have spent: the budgets above a single check.

    Counted in steps (kb.equations.work), as a single check's budget is: a record's
    checks together get RECORD_BUDGETS check budgets, and the checks of a run that
    hit their budget together lose at most RUN_BUDGETS of them
    (kb.equations.timeout); after that every further check is unverified at once.
    Ordinary records spend a few thousand steps and never meet either limit; a
    hostile record (eight slow checks) or a hostile tree (thousands of them) stays
    bounded. Only the outermost budget counts: budgets nest.
    """

    record_left: int | None = None  # steps the open record's checks have left
    record_label: str = ""
    lost: int = 0  # steps lost to timeouts


@dataclass
class RunContext:
    """The per-run state of one knowledge base, filled by the checker's stages in order.

    `focus`, when set, holds the display paths whose findings are wanted; the
    other records are context (what the focus reads). `outside_ids` names the
    records of the tree that were not loaded, when only part of it was
    (kb.incremental): a rule that looks at every id sees them too. A stage
    result that is None has not been computed in this run.
    """

    cache: RecordCache | None = None
    focus: frozenset[str] | None = None
    outside_ids: frozenset[str] = frozenset()
    # The files that did not become records, by display path: the id each one's place names.
    unread_ids: dict[str, str] = field(default_factory=dict)
    # The per-file stage: each record's record-local rule findings, by display path.
    local: dict[str, list[Finding]] | None = None
    schema: list[Finding] | None = None
    equations: Analysis | None = None
    known_codes: frozenset[str] | None = None
    waivers_used: frozenset[tuple[str, int]] | None = None
    stats: RunStats = field(default_factory=RunStats)
    budget: Spending = field(default_factory=Spending)  # kb.equations.timeout spends it
    # Shared by several rules within the run (each documented where it is filled).
    mappings: dict[str, list[tuple[str, Mapping[str, Any]]]] = field(default_factory=dict)
    mapping_nodes: dict[str, list[Mapping[str, Any]]] = field(default_factory=dict)
    broken_templates: list[Any] | None = None
    # The per-file stage: the templates in each record's prose (kb.prose.fields.record_templates),
    # by display path, for the records it checked in this run (not those the cache knew).
    templates: dict[str, Sequence[Any]] | None = None
    prose_claims: Any = None
    ledger_resolved: dict[str, Any] = field(default_factory=dict)
    receipts_index: Any = None  # kb.ledger.transfers.ReceiptIndex, built on first use
    break_even_figures: Any = None  # kb.ledger.breakeven.Figures, read on first use
    dependency_graph: Any = None  # kb.reads.DependencyGraph of the frozen knowledge base
    # The files the validation of this tree saw, by display path (kb.api.open_kb(checked=)):
    # kb.reads.checked_nodes hands them out while they are the files it was loaded from.
    checked_files: Mapping[str, Any] | None = None
    views: Views | None = None  # the typed views of schema-valid records (kb.kinds.views)


class StageNotRun(RuntimeError):
    """A reader of a stage's results ran before the checker ran that stage."""
