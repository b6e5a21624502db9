"""What the EQ rules share: turning the equations engine's issues into findings.

The engine (kb.equations.engine) analyses the KnowledgeBase once per run; each
EQ rule module only selects its own code. SymPy is imported by the engine only
when a record really needs symbolic work, never when a rule module is imported.
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._base import found


def engine_findings(kb: KnowledgeBase, code: str, severity: Severity) -> Iterator[Finding]:
    """Yield the findings with `code` from the per-run equations analysis of `kb`."""
    from kb.equations.engine import analyse

    for result, issue in analyse(kb).issues(code):
        yield found(
            code, severity, result.path, issue.pointer, issue.message, issue.hint, issue.related
        )
