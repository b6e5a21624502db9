"""A reference must name a record of the kind its field expects.

Why: a quantity's `source` must be a source record, a link's `interconnect` an
interconnect; pointing at the wrong kind resolves but means nothing, and the
checks that follow the reference (bindings, provenance) would read the wrong
fields.

Bad:

    links:
      - interconnect: hardware/nvidia-h100-sxm

Good:

    links:
      - interconnect: interconnects/nvlink-4
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.findings import Finding, Severity
from kb.model import FOLDER_BY_KIND, KnowledgeBase, split_binding
from kb.rules._base import found

READS = "all-ids"
CODE = "RF002"
NAME = "wrong-kind-reference"
SEVERITY = Severity.ERROR
HINT = "reference a record of the kind the field expects"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    for ref in kb.focused_references():
        target = split_binding(ref.target)[0]
        kind = kb.kind_of(target)
        if kind is None or ref.expected_kind in ("*", kind):
            continue
        source = kb.records[ref.source_id]
        actual, expected = _article(kind), _article(ref.expected_kind)
        message = f"{target!r} is {actual} record, expected {expected}"
        hint = f"reference a record under {FOLDER_BY_KIND.get(ref.expected_kind, '?')}/"
        yield found(CODE, SEVERITY, source.path, ref.pointer, message, hint)


def _article(word: str) -> str:
    return f"an {word}" if word[:1] in "aeiou" else f"a {word}"
