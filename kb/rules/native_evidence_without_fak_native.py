"""A receipt may claim native evidence only when its engine is fak-native.

Seed 000: "Native-performance evidence must name the fak-native engine; another
runtime is reference/benchmark evidence only." A receipt from nccl-tests, vLLM,
SGLang, PyTorch or a vendor blog is `reference`, `benchmark` or `vendor-claim`.

Why: a measurement taken with another runtime says how that runtime performs,
not how kb's own engine does; calling it native would let a borrowed number
stand in for a claim nobody measured.

Bad:

    evidence_class: native
    engine: {name: nccl-tests, version: "2.18.5"}

Good:

    evidence_class: benchmark
    engine: {name: nccl-tests, version: "2.18.5"}
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.findings import Finding, Severity
from kb.kinds import views
from kb.model import KnowledgeBase
from kb.rules._base import found

READS = "views"
CODE = "EV001"
NAME = "native-evidence-without-fak-native"
SEVERITY = Severity.ERROR
HINT = "use evidence_class: reference or benchmark for other runtimes"
NATIVE_ENGINE = "fak-native"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    """A receipt that fails its schema has no view and is not checked (SC001 reports it)."""
    checked = views(kb)
    for record in kb.of_kind("receipt"):
        receipt = checked.receipt(record) if kb.in_focus(record) else None
        if receipt is None or receipt.evidence_class != "native":
            continue
        if receipt.engine != NATIVE_ENGINE:
            message = (
                f"evidence_class is 'native' but the engine is {receipt.engine!r}, "
                f"not {NATIVE_ENGINE!r}"
            )
            yield found(CODE, SEVERITY, record.path, "/evidence_class", message, HINT)
