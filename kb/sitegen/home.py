"""The home page's content: the questions the site answers, and a worked placement.

The questions link to the pages that answer them; a question whose page this
knowledge base does not have (its record is absent) is left out, never linked
to nothing. The worked example is a placement's ledger computed by kb.ledger at
build time (the same numbers `kb ledger` prints), never typed in: the first of
WORKED_EXAMPLES the knowledge base holds whose sides are all feasible, else no
example.
"""

from __future__ import annotations

from typing import Any

from kb.model import KnowledgeBase, Record
from kb.sitegen import urls

CROSSOVER = "flops/sched-tensor-parallel-crossover"
ALL_REDUCE = "flops/allreduce-latency-floor"
WORKED_EXAMPLES = (
    "placements/tp-llama-3.1-70b-h100-tp4-vs-tp8",
    "placements/llama-3.1-405b-one-h200-node-vs-two-h100-nodes",
)
ANSWER = "answer"  # the anchor of a flop class page's headline results (record.html)

# (question, what the answer page holds, the record it needs or "" for a site page, url)
QUESTIONS: tuple[tuple[str, str, str, str], ...] = (
    (
        "At what batch does tensor parallelism stop paying for its all-reduce?",
        "the crossover batch B* for common models, accelerators and TP degrees",
        CROSSOVER,
        urls.record_page(CROSSOVER) + "#" + ANSWER,
    ),
    (
        "Which accelerators can hold which model?",
        "accelerators side by side: memory, bandwidth, compute, links",
        "",
        urls.HARDWARE_TABLE,
    ),
    (
        "What does an all-reduce cost, and when does its latency dominate?",
        "the alpha-beta cost of collectives, priced by measured receipts",
        ALL_REDUCE,
        urls.record_page(ALL_REDUCE),
    ),
    (
        "Which placement of a model is faster, and where does it break even?",
        "placements compared on one fixed envelope, feasibility first",
        "",
        urls.kind_index("placement"),
    ),
)


def questions(kb: KnowledgeBase) -> list[dict[str, str]]:
    """The questions whose answer pages this site has, each with its link."""
    return [
        {"question": question, "answer": answer, "url": url}
        for question, answer, needs, url in QUESTIONS
        if not needs or kb.get(needs) is not None
    ]


def worked_example(kb: KnowledgeBase) -> dict[str, Any] | None:
    """The first worked placement with every side feasible, its ledger in words; else None."""
    for record_id in WORKED_EXAMPLES:
        record = kb.get(record_id)
        example = _example(record, kb) if record is not None else None
        if example is not None:
            return example
    return None


def _example(record: Record, kb: KnowledgeBase) -> dict[str, Any] | None:
    from kb.ledger.analysis import analyze_placement
    from kb.ledger.inputs import Unresolved
    from kb.ledger.quantities import amount, number
    from kb.ledger.render import envelope_line

    try:
        analysis = analyze_placement(record, kb)
    except Exception:  # the home page must still build; the example is then left out
        return None
    if isinstance(analysis, Unresolved):
        return None
    sides = []
    for side in analysis.sides:
        if side.ledger is None:
            return None
        rows = {row.name: row for row in side.ledger.rows}
        useful, exposed = rows.get("useful"), rows.get("exposed")
        if useful is None or exposed is None:
            return None
        sides.append(
            {
                "name": side.option.name,
                "useful": amount(useful.value, "s"),
                "useful_basis": useful.provenance,
                "exposed": amount(exposed.value, "s"),
                "exposed_basis": exposed.provenance,
                "total": amount(side.ledger.total, "s"),
            }
        )
    comparisons = [
        {
            "candidate": c.candidate,
            "reference": c.reference,
            "speedup": number(c.efficiency),
            "faster": c.efficiency > 1,
        }
        for c in analysis.comparisons
        if c.efficiency is not None and not c.withheld
    ]
    return {
        "record": record.id,
        "title": record.title,
        "url": urls.record_page(record.id),
        "envelope": envelope_line(analysis).removeprefix("envelope: "),
        "sides": sides,
        "comparisons": comparisons,
    }
