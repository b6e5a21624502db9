"""Measured dense-matmul rates of an accelerator and format, from kb's `matmul` receipts.

kb/data/end-to-end.json `compute_rate`: a row of a receipt with pattern `matmul` naming the
accelerator (`hardware`), the format (`precision`) and the metric MATMUL_METRIC is the
measured rate kb prices matmuls at (kb.ledger.scenario.compute_rate), the first such receipt
by id; the prompt's attention takes its own format's row the same way
(kb.ledger.attention_rate). The scans are kept for the run when the knowledge base is
frozen (its receipts cannot change). Moved here from kb.ledger.scenario unchanged, so that
both can ask it without an import cycle.
"""

from __future__ import annotations

from collections.abc import Callable

from kb.model import KnowledgeBase, Record
from kb.run import Kept

MATMUL_METRIC = "maximum achievable matmul throughput"


# What the receipt scans below found in this run, by their arguments: a frozen knowledge
# base's receipts cannot change, and the planner asks the same few questions for every
# mapping of every question (a build's pass asks them thousands of times).
SCANS: Kept[dict[tuple[str, ...], str | None]] = Kept("scenario receipt scans")


def scanned(kb: KnowledgeBase, key: tuple[str, ...], scan: Callable[[], str | None]) -> str | None:
    """`scan()`, kept for the run when `kb` is frozen (its answer cannot change)."""
    if not kb.frozen:
        return scan()
    known = kb.run.once(SCANS, dict)
    if key not in known:
        known[key] = scan()
    return known[key]


def matmul_receipts(kb: KnowledgeBase) -> list[Record]:
    """Every receipt with pattern `matmul`, by id."""
    return sorted(
        (r for r in kb.of_kind("receipt") if r.get("pattern") == "matmul"), key=lambda r: r.id
    )


def measured_matmul_rate(kb: KnowledgeBase, hardware: str, precision: str) -> str | None:
    """The pointer to a measured dense-matmul rate of this accelerator and format, or None.

    A row of a `matmul` receipt that names the accelerator (`hardware`), the format
    (`precision`) and the metric MATMUL_METRIC; the first such receipt by id, its
    first such row.
    """
    return scanned(kb, ("rate", hardware, precision), lambda: _matmul_rate(kb, hardware, precision))


def _matmul_rate(kb: KnowledgeBase, hardware: str, precision: str) -> str | None:
    for record in matmul_receipts(kb):
        rows = record.get("results")
        for index, row in enumerate(rows if isinstance(rows, list) else []):
            if (
                isinstance(row, dict)
                and row.get("hardware") == hardware
                and row.get("precision") == precision
                and row.get("metric") == MATMUL_METRIC
                and isinstance(row.get("value"), dict)
            ):
                return f"{record.id}#results.{index}.value"
    return None
