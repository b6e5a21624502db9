"""SGLang's two-batch overlap on an end-to-end row (kb/data/end-to-end.json `two_batch_overlap`).

A row its source says ran the overlap runs each replica's batch as two micro-batches,
one computing while the other's expert-parallel dispatch or combine is in flight. The
composed ledger prices a pass or step with its compute and that communication in
series; under the overlap the two take max(C, M), where C is twice the compute of one
micro-batch and M twice its dispatch and combine, both the composed ledger's own
terms at half the batch per replica (each micro-batch reads the weights again). Every
other term of the full batch (the per-layer overhead, any other collective) is kept as
it is. The ideal overlap of two streams: a lower bound on the time.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from functools import lru_cache

from kb.ledger.expert import COMBINE, DISPATCH, PREFILL_COMBINE, PREFILL_DISPATCH
from kb.ledger.scenario import Outcome, Scenario, ScenarioError, outcome
from kb.model import KnowledgeBase


@lru_cache(maxsize=1)
def overlapped_rows() -> frozenset[str]:
    """kb/data/end-to-end.json `two_batch_overlap.rows`: `receipt#results.N` of each row."""
    from kb.resources import end_to_end

    return end_to_end("two_batch_overlap", lambda e: frozenset(str(row) for row in e["rows"]))


@dataclass(frozen=True)
class Phase:
    """One phase's compute C and expert-parallel communication M, in seconds."""

    compute: Fraction
    communication: Fraction


def _decode(result: Outcome) -> Phase | None:
    """The step's `useful` row and its exposed dispatch and combine."""
    rows = {row.name: row for row in result.rows}
    if "useful" not in rows or "exposed" not in rows:
        return None
    exposed = rows["exposed"].inputs
    sent = sum((Fraction(exposed.get(n, 0)) for n in (DISPATCH, COMBINE)), Fraction(0))
    return Phase(Fraction(rows["useful"].value), sent)


def _prefill(result: Outcome) -> Phase | None:
    """The pass's read-or-matmul part and its dispatch and combine."""
    request = result.request
    if request is None:
        return None
    names = (PREFILL_DISPATCH, PREFILL_COMBINE)
    sent = sum((cost for name, cost in request.prefill_costs if name in names), Fraction(0))
    return Phase(request.prefill_read, sent)


def _halves(kb: KnowledgeBase, scenario: Scenario) -> tuple[Outcome, Outcome]:
    """The scenario priced at each micro-batch: ceil and floor of half the replica's batch."""
    per_replica = scenario.batch // scenario.dp
    sizes = sorted({(per_replica + 1) // 2, per_replica // 2}, reverse=True)
    found = {size: outcome(replace(scenario, batch=size * scenario.dp), kb) for size in sizes}
    return found[(per_replica + 1) // 2], found[per_replica // 2]


@dataclass(frozen=True)
class Overlapped:
    """The outcome under the overlap, the micro-batch sizes and each phase's serial and C, M."""

    result: Outcome
    sizes: tuple[int, int]  # sequences of each micro-batch per replica
    phases: tuple[tuple[str, Phase, Phase], ...]  # (ttft or tpot, serial, overlapped C and M)


def two_batch_overlap(kb: KnowledgeBase, scenario: Scenario, result: Outcome) -> Overlapped | None:
    """The outcome with its pass and step under the overlap (`two_batch_overlap`).

    None when the batch per replica is under two sequences, a half is not priced, or no
    phase has expert-parallel communication to overlap. A request's latency and rates
    follow the new TTFT and TPOT.
    """
    per_replica = scenario.batch // scenario.dp
    if per_replica < 2 or scenario.ep < 2:
        return None
    try:
        halves = _halves(kb, scenario)
    except ScenarioError:
        return None
    changed: dict[str, Fraction] = {}
    phases: list[tuple[str, Phase, Phase]] = []
    for name, read, serial in (("ttft", _prefill, result.ttft), ("tpot", _decode, result.tpot)):
        whole, a, b = read(result), read(halves[0]), read(halves[1])
        if serial is None or whole is None or a is None or b is None or not whole.communication:
            continue
        both = Phase(a.compute + b.compute, a.communication + b.communication)
        changed[name] = (
            serial - whole.compute - whole.communication + max(both.compute, both.communication)
        )
        phases.append((name, whole, both))
    if not changed:
        return None
    found = replace(result, **changed)  # type: ignore[arg-type]
    s = scenario
    if found.ttft is not None and found.tpot is not None and s.output_tokens:
        latency = found.ttft + (s.output_tokens - 1) * found.tpot
        system = Fraction(s.batch * s.output_tokens) / latency
        found = replace(found, latency=latency, tokens_per_s_system=system)
        found = replace(found, tokens_per_s_per_device=system / s.count)
    elif found.tpot is not None:
        system = Fraction(s.batch) / found.tpot
        found = replace(found, tokens_per_s_system=system, tokens_per_s_per_device=system / s.count)
    return Overlapped(found, ((per_replica + 1) // 2, per_replica // 2), tuple(phases))
