"""Weights an engine keeps whole on every tensor-parallel rank (`tp_unsharded_weights`).

Declared in kb/data/end-to-end.json (issue 35, session 24). kb's weight read
t_w = P*b_w/(tp*BW_hbm) shares every parameter over the tp ranks. An engine version declared
here shards only its transformer blocks: the token embedding and the output head
(U parameters, 2*vocab*d untied, vocab*d tied) stay whole on every rank (gpt-fast's tp.py).
Each engine step of a tp > 1 row then also reads, on each rank, the share of U that t_w gave
the other ranks:

    t_u = U * b_w * (1 - 1/tp) / BW_hbm

at the row's weight bytes (the format's width plus declared per-group scales) and the
accelerator's HBM rate (kb.ledger.hbm_rate: measured where stated), added to the prompt
pass and to each decode step as a time of its own (kb.ledger.engine_versions.with_step_overhead,
the mechanism of ray_step_overhead). A row at tp = 1, or of an engine version not declared, is
unchanged. Pure: reads only the declaration and the records it names.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from kb.ledger.engine_versions import with_step_overhead
from kb.ledger.hbm_rate import streamed_rate
from kb.ledger.quantities import QuantityError, figure
from kb.ledger.scenario import PRECISION_BYTES

if TYPE_CHECKING:
    from kb.ledger.scenario import Outcome, Scenario
    from kb.model import KnowledgeBase, Record

SECTION = "tp_unsharded_weights"


@lru_cache(maxsize=1)
def declared_versions() -> dict[str, tuple[str, ...]]:
    """The section's engines and the versions each is declared for."""
    from kb.resources import end_to_end, engine_versions

    return end_to_end(SECTION, engine_versions)


def covers(record: Record, tp: int) -> bool:
    """True when the rule reaches a row of this receipt at this tensor-parallel degree."""
    engine, version = record.get("engine.record"), record.get("engine.version")
    return tp > 1 and str(version) in declared_versions().get(str(engine), ())


def unsharded_parameters(kb: KnowledgeBase, model_id: str) -> int | None:
    """U: the token embedding and the output head, vocab*d each (one table when tied)."""
    model = kb.get(model_id)
    if model is None:
        return None
    vocab, d = model.get("geometry.vocab"), model.get("geometry.d_model")
    if not isinstance(vocab, int) or not isinstance(d, int):
        return None
    tables = 1 if model.get("geometry.tied_embeddings") is True else 2
    return tables * vocab * d


def step_time(kb: KnowledgeBase, scenario: Scenario) -> Fraction | None:
    """t_u of one engine step of the scenario (None when a figure it needs is missing)."""
    hardware = kb.get(scenario.hardware)
    parameters = unsharded_parameters(kb, scenario.model)
    pointer = streamed_rate(kb, scenario.hardware)[0]  # declared: hbm_streamed_rate
    node = hardware.get(pointer.partition("#")[2]) if hardware is not None else None
    if parameters is None or not isinstance(node, dict):
        return None
    try:
        rate = figure(node, pointer).value
    except QuantityError:
        return None
    width = PRECISION_BYTES[scenario.weight_precision] + (scenario.weight_scale_bytes or 0)
    return parameters * width * (1 - Fraction(1, scenario.tp)) / rate


def with_unsharded(
    kb: KnowledgeBase, record: Record, scenario: Scenario, result: Outcome, common: dict[str, Any]
) -> Outcome:
    """The row's outcome with its unsharded weights' read added to each engine step.

    Unchanged (and nothing said) where the rule does not reach the row or the outcome has
    no decode step; the row's `assumed` list names the time added and why.
    """
    if result.tpot is None or not covers(record, scenario.tp):
        return result
    seconds = step_time(kb, scenario)
    if seconds is None:
        return result
    note = (
        f"each engine step + {float(seconds) * 1000:.3f} ms: the token embedding and output "
        f"head stay whole on every rank, so each also reads the (1 - 1/{scenario.tp}) share "
        "kb's P/tp gave the other ranks (tp_unsharded_weights)"
    )
    common["assumed"] = (*common["assumed"], note)
    return with_step_overhead(result, seconds)
