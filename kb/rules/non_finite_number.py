"""A number must be finite and within 1e±300.

Why: YAML reads `.inf`, `-.inf` and `.nan` as floats, and a long digit string as
an integer of any size. JSON has no infinity or NaN, no physical figure is beyond
1e300, and such a value would only surface later as a puzzling cascade in every
record that binds it (an unknown comparison, an overflow). It is refused where it
is written, and the record is not checked further until it is fixed.

Bad:

    memory:
      bandwidth: {value: .inf, unit: GB/s, basis: vendor-spec, source: sources/x}

Good:

    memory:
      bandwidth: {value: 3350, unit: GB/s, basis: vendor-spec, source: sources/x}
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._base import reported_by_stage

READS = "stage"
CODE = "LD014"
NAME = "non-finite-number"
SEVERITY = Severity.ERROR
HINT = "write the figure as a finite number in its unit (1.5e3 GB/s, not .inf)"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    return reported_by_stage(kb, CODE)
