"""What the prose rules (PR001-PR003) share: templates resolved once per run, locations."""

from __future__ import annotations

from collections.abc import Sequence

from kb.findings import Finding, Location, Severity
from kb.model import KnowledgeBase, Record
from kb.prose.fields import record_templates
from kb.prose.render import Broken, show
from kb.prose.scan import Template
from kb.run import Kept

# The templates in each record's prose, by display path, as the per-file stage found them
# in this run (kb.checker.per_file_stage), for the records it checked (not those the
# record cache knew).
TEMPLATES: Kept[dict[str, Sequence[tuple[str, Template]]]] = Kept("prose templates")
BROKEN: Kept[list[tuple[Record, str, Broken]]] = Kept("broken templates")  # once per run


def broken_templates(kb: KnowledgeBase) -> list[tuple[Record, str, Broken]]:
    """(record, pointer, why) for every template in focus that does not resolve.

    A record's templates as the per-file stage found them this run (TEMPLATES),
    else from a walk of its prose.
    """
    return kb.run.once(
        BROKEN,
        lambda: [
            (record, pointer, shown)
            for record in kb
            if kb.in_focus(record)
            for pointer, template in _templates(kb, record)
            if isinstance(shown := show(kb, record, template), Broken)
        ],
    )


def _templates(kb: KnowledgeBase, record: Record) -> Sequence[tuple[str, Template]]:
    found = (kb.run.kept(TEMPLATES) or {}).get(record.path)
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
