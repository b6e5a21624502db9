"""A figure with basis `assumed` must say in a `note` why that value was chosen.

`assumed` marks a scenario input the author picked to work an example (a batch
of 64, 8-way tensor parallelism, an 8,192-token prompt). It needs no source,
because it claims nothing about the world, but the reader must see that it is a
choice and what it stands for.

Why: without the note an assumed input reads like a measured or vendor figure;
with it, a reader can redo the example with their own value (`kb calc --set`).

Bad:

    bind:
      N: {value: 8, unit: "1", basis: assumed}

Good:

    bind:
      N: {value: 8, unit: "1", basis: assumed, note: "one 8-GPU HGX node"}
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._base import found
from kb.rules._walk import located

READS = "record"
CODE = "PV003"
NAME = "assumed-without-note"
SEVERITY = Severity.ERROR
HINT = 'add note: "<what this input stands for>"'


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    for record in kb:
        for pointer, _ in located(kb, record, _assumed_without_note):
            message = "basis is 'assumed' but no note says why this value was chosen"
            yield found(CODE, SEVERITY, record.path, pointer, message, HINT)


def _assumed_without_note(node: Mapping[str, Any]) -> bool:
    return node.get("basis") == "assumed" and not str(node.get("note") or "").strip()
