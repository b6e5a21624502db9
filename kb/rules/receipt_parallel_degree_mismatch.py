"""A receipt row's parallel degrees must fit the GPUs it names.

A result row may state `gpus` and the tensor-, pipeline- and expert-parallel
degrees `tp`, `pp`, `ep` of the measurement. Every GPU of a TP x PP engine
holds one shard, so `gpus` is a whole number of engines: `tp * pp` divides
`gpus` (data parallelism makes up the rest), and so does `ep` on its own
(expert parallelism is laid over the same GPUs as TP or DP, not multiplied
with them). Absent conditions are not guessed: only stated ones are checked.

Why: a row that says TP8 on four GPUs was mis-encoded, and a prediction bound
to its conditions would be evaluated at a placement that never ran.

Bad:

    results:
      - {label: "70B, TP8", gpus: 4, tp: 8, value: {...}}

Good:

    results:
      - {label: "70B, four TP2 engines", gpus: 8, tp: 2, pp: 1, value: {...}}
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.findings import Finding, Severity
from kb.kinds import views
from kb.kinds.receipt import ResultRow
from kb.model import KnowledgeBase
from kb.rules._base import found

READS = "views"
CODE = "EV003"
NAME = "receipt-parallel-degree-mismatch"
SEVERITY = Severity.ERROR
HINT = "state the degrees and the GPU count the source gives"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    """A receipt that fails its schema has no view and is not checked (SC001 reports it)."""
    checked = views(kb)
    for record in kb.of_kind("receipt"):
        receipt = checked.receipt(record) if kb.in_focus(record) else None
        for row in receipt.rows if receipt is not None else ():
            yield from _row_findings(record.path, row)


def _row_findings(path: str, row: ResultRow) -> Iterator[Finding]:
    gpus, tp, pp, ep, index = row.gpus, row.tp, row.pp, row.ep, row.index
    if gpus is None:
        return
    engine = (tp or 1) * (pp or 1)
    if (tp or pp) and gpus % engine:
        key = "tp" if tp else "pp"
        shape = " x ".join(f"{name}={value}" for name, value in (("tp", tp), ("pp", pp)) if value)
        message = f"results/{index}: {shape} needs a multiple of {engine} GPUs, the row says {gpus}"
        yield found(CODE, SEVERITY, path, f"/results/{index}/{key}", message, HINT)
    if ep and gpus % ep:
        message = f"results/{index}: ep={ep} does not divide the row's {gpus} GPUs"
        yield found(CODE, SEVERITY, path, f"/results/{index}/ep", message, HINT)
