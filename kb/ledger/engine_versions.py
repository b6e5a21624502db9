"""What an engine version ran, where kb/data/end-to-end.json declares it (issue 35, session 21).

Three rules, each by the engine version a receipt names, read in that version's code:

- `stock_collective_versions`: versions whose all-reduce was the stock library's (vLLM
  before its custom all-reduce was merged, or while it was disabled by default). Their
  rows are priced by the stock curves, never by the engine record's collective curves.
- `ray_step_overhead`: versions whose every engine step starts one Ray task per Ray
  worker and waits for them (vLLM from PR 2221 until PR 4894). At tp > 1 each priced
  step of a row (the prompt pass and every decode step) gains the declared t_r, a
  figure measured by the source the declaration names, not fitted to any row.
- `attention_rate`'s `sixteen_bit_context_versions`: versions whose prompt attention ran
  16-bit although their KV cache was 8-bit (TensorRT-LLM 0.5 to 0.9.0);
  their rows' prompt attention is priced at the 16-bit rate (kb.ledger.attention_rate).

A placement or `kb plan` question names no engine version, so no rule here reaches it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kb.ledger.scenario import Outcome, Scenario
    from kb.model import Record

UNIT_SECONDS = {"ms": Fraction(1, 1000), "us": Fraction(1, 1000000), "s": Fraction(1)}


@dataclass(frozen=True)
class StepOverhead:
    """One engine version's declared per-step time and where it comes from."""

    seconds: Fraction
    source: str


@lru_cache(maxsize=1)
def stock_collective_versions() -> dict[str, tuple[str, ...]]:
    """`stock_collective_versions`: engine -> the versions that ran the stock all-reduce."""
    from kb.resources import end_to_end, engine_versions

    return end_to_end("stock_collective_versions", engine_versions)


def _listed(record: Record, versions: dict[str, tuple[str, ...]]) -> bool:
    """True when the receipt's engine names one of its `versions` (engine -> versions)."""
    engine, version = record.get("engine.record"), record.get("engine.version")
    return str(version) in versions.get(str(engine), ())


def moe_tp_versions() -> dict[str, tuple[str, ...]]:
    """`moe_tensor_parallel`: engine -> the versions whose experts kb prices at a row's moe_tp."""
    from kb.resources import end_to_end, engine_versions

    return end_to_end("moe_tensor_parallel", engine_versions)


def prices_moe_tp(record: Record) -> bool:
    """True when the receipt's engine version is declared for tensor-parallel experts (moe_tp)."""
    return _listed(record, moe_tp_versions())


def runs_stock_collective(record: Record) -> bool:
    """True when the receipt's engine version is declared to have run the stock all-reduce."""
    return _listed(record, stock_collective_versions())


@lru_cache(maxsize=1)
def sixteen_bit_context_versions() -> dict[str, tuple[str, ...]]:
    """`attention_rate.sixteen_bit_context_versions`: engine -> its 16-bit-attention versions."""
    from kb.resources import end_to_end, engine_versions

    return end_to_end(
        "attention_rate", lambda entry: engine_versions(entry["sixteen_bit_context_versions"])
    )


def runs_sixteen_bit_context(record: Record) -> bool:
    """True when the receipt's engine version is declared to run its prompt's attention 16-bit."""
    return _listed(record, sixteen_bit_context_versions())


@lru_cache(maxsize=1)
def ray_step_overheads() -> dict[tuple[str, str], StepOverhead]:
    """`ray_step_overhead`: (engine, version) -> its per-step time (ValueError on a bad unit)."""
    from kb.resources import end_to_end

    return end_to_end("ray_step_overhead", _step_overheads)


def _step_overheads(entry: Any) -> dict[tuple[str, str], StepOverhead]:
    """The section read: every listed version of every engine gets the engine's figure."""
    found: dict[tuple[str, str], StepOverhead] = {}
    for engine, node in entry.items():
        if not (isinstance(node, dict) and "versions" in node):
            continue
        figure = node["figure"]
        scale = UNIT_SECONDS[figure["unit"]]  # KeyError: not a time unit kb reads
        step = StepOverhead(Fraction(str(figure["value"])) * scale, str(figure["source"]))
        for version in node["versions"]:
            found[(engine, str(version))] = step
    return found


def ray_step_overhead(record: Record, scenario: Scenario) -> StepOverhead | None:
    """The declared per-step Ray time of this row, or None (tp 1 has no Ray worker)."""
    if scenario.tp < 2:
        return None
    engine, version = record.get("engine.record"), record.get("engine.version")
    return ray_step_overheads().get((str(engine), str(version)))


def with_step_overhead(result: Outcome, step: Fraction) -> Outcome:
    """The outcome with `step` added to every engine step: the prompt pass and each decode step.

    TTFT + t and TPOT + t, so a request of O output tokens gains O x t; the rates follow
    the new latency (or the new step, without a request), the exposed share the new step.
    Unchanged when the outcome has no decode step.
    """
    if result.tpot is None:
        return result
    s = result.scenario
    tpot = result.tpot + step
    changed: dict[str, Any] = {"tpot": tpot}
    if result.exposed_share is not None:
        changed["exposed_share"] = result.exposed_share * result.tpot / tpot
    if result.ttft is not None:
        changed["ttft"] = result.ttft + step
    if result.ttft is not None and s.output_tokens:
        latency = changed["ttft"] + (s.output_tokens - 1) * tpot
        system = Fraction(s.batch * s.output_tokens) / latency
        changed["latency"] = latency
    else:
        system = Fraction(s.batch) / tpot
    changed["tokens_per_s_system"] = system
    changed["tokens_per_s_per_device"] = system / s.count
    return replace(result, **changed)
