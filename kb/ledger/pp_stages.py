"""Pipeline stages of unequal layers (kb/data/end-to-end.json `pipeline_stage_split`).

When pp divides the model's L layers every stage holds L/pp of them, as kb's composition
always assumed. When it does not, the engine decides which stages hold the extra layers,
and the declaration lists the engines whose code was read:

- `first`: TensorRT-LLM's `Mapping.pp_layers` (tensorrt_llm/mapping.py,
  `torch.tensor_split(torch.arange(num_layers), self.pp_size)`: 'If num_layers % pp_size = n
  != 0, first n ranks get one extra layer');
- `before_last`: vLLM's `get_pp_indices` (vllm/distributed/utils.py: `partitions[-i] += 1`
  for i in 2 .. remainder + 1, the stages before the last).

An engine not declared (Megatron-core's `get_num_layers_to_build` asserts 'num_layers should
be divisible by pipeline_model_parallel_size' unless the first and last stages are sized by
hand), or no engine, leaves an uneven split unpriced: kb does not guess one.

kb's composition spreads the embedding and output head over the layers (W = P*b_w over
tp*pp), so a stage's share of the weights, of the KV cache and of every per-layer time is
its layers over L; only the largest stage enters: the worst device's memory and, with
micro-batches in flight, the pipeline's turn (`stage_bound`). Pure: no I/O beyond the
packaged declaration.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Any

SECTION = "pipeline_stage_split"
ORDERS = ("first", "before_last")


@lru_cache(maxsize=1)
def engines() -> dict[str, str]:
    """The declared engines and where each puts a split's extra layers."""
    from kb.resources import end_to_end

    return end_to_end(SECTION, _engines)


def _engines(entry: Any) -> dict[str, str]:
    """The declaration's `engines` map (engine id -> order), checked."""
    keys = ("applies_to", "priced", "not_counted", "reason")
    if not all(isinstance(entry.get(k), str) and entry[k] for k in keys):
        raise ValueError(f"{SECTION} needs applies_to, priced, not_counted, reason")
    found = entry.get("engines")
    if not isinstance(found, dict) or not found:
        raise ValueError(f"{SECTION}.engines maps engine ids to an order")
    for engine, order in found.items():
        if not isinstance(order, dict) or order.get("order") not in ORDERS:
            raise ValueError(f"{SECTION}.engines.{engine}.order is one of {', '.join(ORDERS)}")
    return {engine: order["order"] for engine, order in found.items()}


def split(layers: int, pp: int, engine: str | None) -> tuple[int, ...] | None:
    """Each stage's layers, first to last; None when pp does not divide L for this engine."""
    if layers < 1 or pp < 1:
        raise ValueError("layers and pp must be at least 1")
    base, extra = divmod(layers, pp)
    if not extra:
        return (base,) * pp
    order = engines().get(engine or "")
    if order is None or base < 1:
        return None
    counts = [base] * pp
    ahead = range(extra) if order == "first" else range(pp - 1 - extra, pp - 1)
    for stage in ahead:
        counts[stage] += 1
    return tuple(counts)


def why_not(layers: int, pp: int, engine: str | None) -> str:
    """The gap when `split` gives None: what is missing, in kb's words."""
    if layers < pp:
        return f"{layers} layers cannot fill pp = {pp} stages"
    whose = f"{engine}'s uneven split is not declared" if engine else "no engine is named"
    return (
        f"{layers} layers do not split evenly into pp = {pp} stages and {whose} "
        f"(kb/data/end-to-end.json {SECTION} declares {', '.join(sorted(engines()))})"
    )


def share(layers: int, counts: tuple[int, ...]) -> Fraction:
    """The largest stage's share of the layers: 1/pp when they split evenly."""
    return Fraction(max(counts), layers)


def even(counts: tuple[int, ...]) -> bool:
    """Whether every stage holds the same layers."""
    return min(counts) == max(counts)


def describe(counts: tuple[int, ...]) -> str:
    """The split in a row's words, e.g. '16 x 6 and 15 x 2 layers'."""
    sizes = sorted(set(counts), reverse=True)
    return " and ".join(f"{s} x {counts.count(s)}" for s in sizes) + " layers"


def stage_bound(
    pass_time: Fraction, sends: Fraction, layers: int, counts: tuple[int, ...]
) -> Fraction:
    """A micro-batch's turn with pp micro-batches in flight, one per stage.

    One micro-batch's pass takes `pass_time` (every stage in turn, with the pp - 1 `sends`);
    the slowest stage runs each of the pp micro-batches for its share of the per-layer time,
    so a turn takes at least pp times that. The larger of the two: with equal stages the pass
    (pp * (pass - sends)/pp <= pass), unchanged.
    """
    slowest = (pass_time - sends) * share(layers, counts)
    return max(pass_time, len(counts) * slowest)
