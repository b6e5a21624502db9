"""A number in prose should be a template or stand in a quotation.

A bare number in free text (summary, text, notes, note, meaning, effect,
magnitude, entry, reason, description) is a copy of a figure that nothing
checks: it goes stale when the figure is corrected. Write the figure as a
template (`{hardware/nvidia-h100-sxm#memory.bandwidth|TB/s}`, `{claim:id}`),
quote a source's own words between double quotation marks (`"3.35TBps"`), or
reword. Not flagged: names and identifiers (H100, TP8, Llama-2-7B, 8x22B, v5e),
formulas (2*L, N-1), dates, versions, URLs, code spans, `#123`, `§3`, a number
after a naming word (Llama 3.1, NVLink 4, seed 003, issue 12) and history
entries (they record what a figure was). docs/record-format.md, "Numbers in
prose", defines exactly what counts (kb/prose/scan.py implements it).

Why: kb's promise is that no figure is taken on trust; a number in prose that
no check reads breaks it silently (a TPU's INT8 figure already read 393 in its
record and 394 in its source's notes).

Bad:

    summary: Hopper GPU with 80 GB of HBM3 at 3.35 TB/s.

Good:

    summary: >-
      Hopper GPU with {hardware/nvidia-h100-sxm#memory.capacity} of HBM3 at
      {hardware/nvidia-h100-sxm#memory.bandwidth|TB/s}.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.prose.fields import numbers_checked, prose_fields
from kb.prose.scan import bare_numbers
from kb.rules._prose import in_text

READS = "record"
CODE = "PR003"
NAME = "prose-number-unbound"
SEVERITY = Severity.WARNING
HINT = (
    "write the figure as {record-id#field|unit} or {claim:id}, quote the "
    'source\'s words in "...", or reword'
)
_DIGIT = re.compile(r"\d")  # every figure bare_numbers finds has one (kb.prose.scan: \d)


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    for record in kb:
        for pointer, text in prose_fields(record.data):
            if not _DIGIT.search(text) or not numbers_checked(pointer):
                continue
            for number in bare_numbers(text):
                message = f"number {number.text} in prose is neither a template nor quoted"
                yield in_text(CODE, SEVERITY, record, pointer, number.start, message, HINT)
