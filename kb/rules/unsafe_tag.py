"""A record may use only plain YAML: mappings, lists, strings, numbers, booleans, null.

Why: Tags such as `!!python/object` execute code in unsafe loaders and `!!binary`,
`!!set` or custom `!tags` have no meaning in a record; kb refuses them all.

Bad:

    power: !!python/object/apply:os.system [echo pwned]

Good:

    power: {value: 700, unit: W, basis: vendor-spec, source: sources/x}
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._base import reported_by_stage

READS = "stage"
CODE = "LD006"
NAME = "unsafe-tag"
SEVERITY = Severity.ERROR
HINT = "records use plain YAML only: mappings, lists, strings, numbers, booleans, null"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    return reported_by_stage(kb, CODE)
