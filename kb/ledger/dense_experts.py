"""Experts run densely on every token, where kb/data/end-to-end.json declares it (issue 35).

`dense_expert_parallel`: vLLM main between PR 2090 and PR 2542 held E/tp whole experts
per rank and ran each on every token of the step, then all-reduced the layer's output
(vllm/model_executor/models/mixtral.py at ab7e6006, sources/vllm-main-2024-01-22). A row
of a listed engine version that states ep = tp > 1 on a mixture-of-experts model is
priced as that scheme ran: tensor parallel over its tp ranks (ep 1) with every expert
active (Scenario.dense_experts), so each rank reads all of its weights at every step and
multiplies every token by them. Nothing is fitted.

A placement or `kb plan` question names no engine version, so no rule here reaches it
(a placement may state `workload.dense_experts` itself).
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kb.ledger.scenario import Scenario
    from kb.model import KnowledgeBase, Record

SECTION = "dense_expert_parallel"
NOTE = (
    "every expert a rank holds runs on every token and is read every step, one all-reduce "
    "after the MoE layer and no dispatch or combine (this engine version's Mixtral scheme, "
    "PR 2090: dense_expert_parallel); priced as tp {tp} with every expert active"
)


@lru_cache(maxsize=1)
def dense_expert_versions() -> dict[str, tuple[str, ...]]:
    """`dense_expert_parallel`: engine -> the versions that ran every expert on every token."""
    from kb.resources import end_to_end, engine_versions

    return end_to_end(SECTION, engine_versions)


def covers(kb: KnowledgeBase, record: Record, scenario: Scenario) -> bool:
    """True when the row is of a listed version, on a MoE model, at ep = tp > 1."""
    engine, version = record.get("engine.record"), record.get("engine.version")
    if str(version) not in dense_expert_versions().get(str(engine), ()):
        return False
    model = kb.get(scenario.model)
    moe = model is not None and model.get("architecture") == "moe"
    return moe and scenario.ep > 1 and scenario.ep == scenario.tp


def applied(kb: KnowledgeBase, record: Record, scenario: Scenario, assumed: list[str]) -> Scenario:
    """The row's scenario as the declared scheme ran it (unchanged where none applies).

    Tensor parallel over the row's tp ranks with ep 1 and every expert active; the
    row's assumptions gain the sentence saying so.
    """
    if not covers(kb, record, scenario):
        return scenario
    assumed.append(NOTE.format(tp=scenario.tp))
    return replace(scenario, ep=1, dense_experts=True)
