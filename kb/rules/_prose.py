"""What the prose rules (PR001-PR003) share: templates resolved once per run, locations."""

from __future__ import annotations

from collections.abc import Sequence

from kb.findings import Finding, Location, Severity
from kb.model import KnowledgeBase, Record
from kb.prose.fields import record_templates
from kb.prose.render import Broken, show
from kb.prose.scan import Template


def broken_templates(kb: KnowledgeBase) -> list[tuple[Record, str, Broken]]:
    """(record, pointer, why) for every template in focus that does not resolve.

    A record's templates as the per-file stage found them this run (kb.run.templates),
    else from a walk of its prose.
    """
    memo = kb.run.broken_templates
    if memo is None:
        memo = kb.run.broken_templates = [
            (record, pointer, shown)
            for record in kb
            if kb.in_focus(record)
            for pointer, template in _templates(kb, record)
            if isinstance(shown := show(kb, record, template), Broken)
        ]
    return memo


def _templates(kb: KnowledgeBase, record: Record) -> Sequence[tuple[str, Template]]:
    found = kb.run.templates.get(record.path) if kb.run.templates is not None else None
    return record_templates(record.data) if found is None else found


def in_text(
    code: str,
    severity: Severity,
    record: Record,
    pointer: str,
    offset: int,
    message: str,
    hint: str = "",
) -> Finding:
    """A finding at character `offset` of the string at `pointer` (the checker finds line:col)."""
    return Finding(code, severity, Location(record.path, 0, 0, pointer, offset), message, hint)


def template_findings(kb: KnowledgeBase, code: str, severity: Severity) -> list[Finding]:
    return [
        in_text(code, severity, record, pointer, why.template.start, why.message, why.hint)
        for record, pointer, why in broken_templates(kb)
        if why.code == code
    ]
