"""What the EQ rules share: the equations stage's findings of one code.

The checker runs the equations stage (kb.equations.engine.analyse) once per run
and keeps its analysis in its run context (`engine.analysed(kb)`); each EQ rule module only selects
its own code, so no rule runs the engine or touches its cache. Each declares
READS = "equations" (kb.reads): the checker runs the rules that do not beside
the equations stage. The engine's
issues become findings with the rule module's severity and hint (finding_of).
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.findings import Finding, Location, Problem
from kb.model import KnowledgeBase
from kb.rules._base import StageNotRun, finding_of


def engine_findings(kb: KnowledgeBase, code: str) -> Iterator[Finding]:
    """Yield the findings with `code` from this run's equations analysis of `kb`."""
    from kb.equations.engine import analysed  # local: the engine loads only when checking

    analysis = analysed(kb)
    if analysis is None:
        raise StageNotRun(
            f"{code} reads the equations stage, which has not run (kb.checker.run_rules)"
        )
    for result, issue in analysis.issues(code):
        location = Location(result.path, 0, 0, issue.pointer)
        yield finding_of(Problem(code, location, issue.message, issue.hint, issue.related))
