"""What every rule module shares: the Rule protocol, a finding constructor, stage findings."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Protocol

from kb.findings import Finding, Location, Problem, Severity
from kb.model import KnowledgeBase
from kb.run import StageNotRun

__all__ = [
    "STAGES",
    "Rule",
    "StageNotRun",
    "finding_of",
    "found",
    "reported_by_stage",
    "rule_stage",
]

# Where a rule runs, as its READS decides (kb.reads.PLACES): "stage", it forwards what the
# load or schema stage found; "late", after the waivers stage; "rules", anywhere before.
STAGES = ("stage", "rules", "late")


class Rule(Protocol):
    """A rule module: CODE, NAME, SEVERITY, HINT, a docstring that is its documentation, check().

    `SEVERITY` and `HINT` are the single source for every finding of `CODE`: a
    stage (loader, schema, equations engine) emits problems and the checker gives
    them this module's severity and, unless the problem names its own, this hint
    (`finding_of`).

    READS declares what its findings on a record depend on (kb.reads: "record",
    "stage", "views", "claimants", "bound", "equations", "ledger", "all-ids", "base",
    "codes" or "findings"); tests/run/test_reads.py holds every rule to its declaration.
    It alone decides where the checker runs the rule (kb.reads.PLACES): the per-file
    stage for "record" (the record cache keeps those findings per file), after the
    equations stage for "equations", after the waivers stage for "codes" and
    "findings", beside the equations stage for the rest ("stage": the rule forwards
    the load or schema stage's findings; "views": it reads the typed views, kb.kinds,
    which a record with schema findings lacks, and does not check that record). And
    kb.incremental re-checks what a change can reach through the declarations.
    """

    READS: str

    CODE: str
    NAME: str
    SEVERITY: Severity
    HINT: str
    __doc__: str | None

    def check(self, kb: KnowledgeBase) -> Iterable[Finding]: ...


def rule_stage(rule: object) -> str:
    """Where a rule runs among STAGES, as its READS decides (kb.reads.PLACES)."""
    from kb.reads import PLACES, rule_reads  # local: kb.reads reads the rules' registry

    reads = rule_reads(rule)
    return "stage" if reads == "stage" else "late" if PLACES.get(reads) == "late" else "rules"


def found(
    code: str,
    severity: Severity,
    path: str,
    pointer: str,
    message: str,
    hint: str = "",
    related: tuple[Location, ...] = (),
) -> Finding:
    """A finding at a JSON pointer of a file; the checker resolves line:col later."""
    return Finding(code, severity, Location(path, 0, 0, pointer), message, hint, related)


def finding_of(problem: Problem) -> Finding:
    """The finding a stage's problem becomes: its owning rule module's severity and hint."""
    from kb.rules import owner  # local: kb.rules imports the rule modules, which import this

    rule = owner(problem.code)
    hint = rule.HINT if problem.hint is None else problem.hint
    return Finding(
        problem.code, rule.SEVERITY, problem.location, problem.message, hint, problem.related
    )


def reported_by_stage(kb: KnowledgeBase, code: str) -> Iterator[Finding]:
    """Findings of `code` that the load stage or the schema stage made in this run."""
    schema = kb.run.schema
    if schema is None:
        raise StageNotRun(
            f"{code} reads the schema stage, which has not run (kb.checker.run_rules)"
        )
    for finding in (*kb.load_findings, *schema):
        if finding.code == code:
            yield finding
