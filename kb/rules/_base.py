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

# Where kb.checker runs a rule: "stage", it forwards what the load or schema stage found;
# "rules", the rules stage (the default); "late", after the waivers stage.
STAGES = ("stage", "rules", "late")


class Rule(Protocol):
    """A rule module: CODE, NAME, SEVERITY, HINT, a docstring that is its documentation, check().

    `SEVERITY` and `HINT` are the single source for every finding of `CODE`: a
    stage (loader, schema, equations engine) emits problems and the checker gives
    them this module's severity and, unless the problem names its own, this hint
    (`finding_of`).

    READS declares what its findings on a record depend on (kb.reads: "record",
    "claimants", "bound", "equations", "ledger", "all-ids", "base" or "findings");
    tests/test_reads.py holds every rule to its declaration. The checker keeps the
    findings of a "record" rule per file, and kb.incremental re-checks what a change
    can reach through the declarations.

    AFTER_SCHEMA (optional, default False): a "record" rule that reads the typed
    views (kb.kinds) runs in the rules stage, after the schema stage, not in the
    per-file stage; a record with schema findings has no view and that rule does
    not check it (its schema findings already fail the run).

    STAGE (optional, default "rules"): where the checker runs it (STAGES, rule_stage).
    """

    READS: str

    CODE: str
    NAME: str
    SEVERITY: Severity
    HINT: str
    __doc__: str | None

    def check(self, kb: KnowledgeBase) -> Iterable[Finding]: ...


def rule_stage(rule: object) -> str:
    """A rule module's STAGE ("rules" when it declares none)."""
    stage = getattr(rule, "STAGE", "rules")
    if stage not in STAGES:
        raise ValueError(f"{getattr(rule, 'CODE', rule)}: STAGE must be one of {STAGES}")
    return str(stage)


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
