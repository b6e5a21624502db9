"""A record must match the JSON Schema of its kind.

The schema for a kind is `schemas/<kind>.schema.json` (folder `hardware/` is kind
`accelerator`, and so on). The finding points at the offending YAML node and
gives the JSON pointer; unknown fields are reported at the unknown key.

Why: the schema is the contract that editors, the site and every other rule
rely on: a misspelt field is silently ignored everywhere else.

Bad:

    kind: interconnect
    id: interconnects/pcie-4-x16
    topology: pointtopoint

Good:

    kind: interconnect
    id: interconnects/pcie-4-x16
    topology: point-to-point
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._base import reported_by_stage

READS = "stage"
CODE = "SC001"
NAME = "schema-violation"
SEVERITY = Severity.ERROR
HINT = "check the spelling against the schema (kb schemas, docs/record-format.md)"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    return reported_by_stage(kb, CODE)
