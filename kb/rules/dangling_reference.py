"""A reference must name a record that exists.

References are the fields that the schemas mark with `x-kb-ref` (a quantity's
`source`, an accelerator's `links[].interconnect`, a receipt's `hardware`, ...)
and bindings such as `hardware/nvidia-h100-sxm#memory.bandwidth`.

Why: a dangling reference is a claim without its evidence, and a broken link
on the published site.

Bad:

    bandwidth: {value: 3350, unit: GB/s, basis: vendor-spec, source: sources/no-such-doc}

Good:

    bandwidth: {value: 3350, unit: GB/s, basis: vendor-spec,
                source: sources/stas00-ml-engineering-accelerators}
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.findings import Finding, Severity
from kb.model import KnowledgeBase, is_valid_id, split_binding
from kb.rules._base import found

READS = "all-ids"
CODE = "RF001"
NAME = "dangling-reference"
SEVERITY = Severity.ERROR
HINT = "create the record or fix the id"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    for ref in kb.focused_references():
        target, _ = split_binding(ref.target)
        if kb.exists(target) or not is_valid_id(target):
            continue  # malformed ids are schema findings
        source = kb.records[ref.source_id]
        message = f"{target!r} names no record"
        yield found(CODE, SEVERITY, source.path, ref.pointer, message, _hint(kb, target))


def _hint(kb: KnowledgeBase, target: str) -> str:
    from kb.suggest import did_you_mean  # local: only when a reference dangles

    # kb.suggest's one matcher: same folder first, and only a genuinely close id
    return did_you_mean(
        target, [*kb.records, *kb.run.outside_ids], "create the record or fix the id"
    )
