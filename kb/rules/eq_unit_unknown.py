"""Every unit is an exact, unambiguous unit string.

Why: `Gb` reads as gigabit or gigabyte (8x apart), `GBps` and `Gbps` are easy to swap,
and `TB` vs `TiB` differ by 10%. kb accepts B, bit, FLOP, s, W, J, USD and 1 with
decimal (k M G T P E) or binary (Ki Mi Gi Ti Pi) prefixes, ms/us/ns, and products
and quotients of them; the hint names the spelling to use.

Bad:

    symbols:
      BW_link: {meaning: link bandwidth per direction, unit: Gbps}

Good:

    symbols:
      BW_link: {meaning: link bandwidth per direction, unit: Gbit/s}
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.equations import codes
from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._equations import engine_findings

READS = "equations"
CODE = codes.UNIT_UNKNOWN
NAME = "unit-unknown-or-ambiguous"
SEVERITY = Severity.ERROR
HINT = "use B, bit, FLOP, s, W, J, USD with SI or binary prefixes (docs/equations.md)"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    yield from engine_findings(kb, CODE)
