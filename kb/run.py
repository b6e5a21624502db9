"""What one validation run knows besides the records: the typed run context.

The checker (kb.checker) creates a `RunContext` for the knowledge base it checks
and fills it stage by stage: the per-file stage's record-local findings and schema
verdicts, the schema stage's findings, the codes the catalogue knows and the waivers
that suppressed a finding; the run's statistics and what its checks spent. Rules read it through
`kb.run` (one typed attribute). Nothing here outlives the run.

What a module computes once per run from the knowledge base (the equations
analysis, the typed views, the dependency graph, the receipts index, ...) is kept
under a `Kept` place that the computing module declares beside the computation,
typed with its own result: `kb.run.kept(VIEWS)` is a `Views`. So this module names
no type above kb.findings, kb.model can hold a run context, and no import circles
back through the run machinery (tests/project/test_import_graph.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, TypeVar, cast

if TYPE_CHECKING:
    from collections.abc import Callable

    from kb.findings import Finding

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class Kept(Generic[T_co]):
    """The place of one thing a run computes once, declared by the module that computes it.

    A module-level constant (`VIEWS: Kept[Views] = Kept("views")`): the place is
    the same in every run, what is kept there belongs to one RunContext.
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"Kept({self.name!r})"


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
    # Checks a budget stopped, nested ones included (kb.equations.timeout.budgets_stopped):
    # a result whose checks moved this count was decided by a budget, and no store keeps it.
    stopped: int = 0


@dataclass
class RunContext:
    """The per-run state of one knowledge base, filled by the checker's stages in order.

    `focus`, when set, holds the display paths whose findings are wanted; the
    other records are context (what the focus reads). `outside_ids` names the
    records of the tree that were not loaded, when only part of it was
    (kb.incremental): a rule that looks at every id sees them too. A stage
    result that is None has not been computed in this run.
    """

    focus: frozenset[str] | None = None
    outside_ids: frozenset[str] = frozenset()
    # The files that did not become records, by display path: the id each one's place names.
    unread_ids: dict[str, str] = field(default_factory=dict)
    # The per-file stage: each record's record-local rule findings and schema findings,
    # by display path (the schema stage gathers the latter: kb.checker.schema_stage).
    local: dict[str, list[Finding]] | None = None
    file_schema: dict[str, list[Finding]] | None = None
    schema: list[Finding] | None = None
    known_codes: frozenset[str] | None = None
    waivers_used: frozenset[tuple[str, int]] | None = None
    stats: RunStats = field(default_factory=RunStats)
    budget: Spending = field(default_factory=Spending)  # kb.equations.timeout spends it
    # What modules compute once per run, each under the Kept place it declares.
    _kept: dict[object, object] = field(default_factory=dict, repr=False)

    def kept(self, place: Kept[T]) -> T | None:
        """What this run keeps at `place`, or None when nothing was kept there yet."""
        return cast("T | None", self._kept.get(place))

    def keep(self, place: Kept[T], value: T) -> T:
        """Keep `value` at `place` for the rest of the run; returns it."""
        self._kept[place] = value
        return value

    def once(self, place: Kept[T], build: Callable[[], T]) -> T:
        """What is kept at `place`, built (and kept) on the first call."""
        if place not in self._kept:
            self._kept[place] = build()
        return cast("T", self._kept[place])

    def drop(self, *places: Kept[object]) -> None:
        """Forget what is kept at `places` (a later reader builds it again)."""
        for place in places:
            self._kept.pop(place, None)


class StageNotRun(RuntimeError):
    """A reader of a stage's results ran before the checker ran that stage."""
