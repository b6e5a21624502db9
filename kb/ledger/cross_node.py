"""An engine's all-reduce when a tensor-parallel group spans nodes (`cross_node_all_reduce`).

kb/data/end-to-end.json `cross_node_all_reduce` names the engines whose custom all-reduce
is disabled for a group that is not all in one node (SGLang's and vLLM's
CustomAllreduce: "Custom allreduce is disabled because this process group spans across
nodes."), so that the group runs NCCL. kb.ledger.endtoend prices such a row's all-reduces
by the stock library's curves (`stock_collective`), never as the engine's custom kernel.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

SECTION = "cross_node_all_reduce"
NOTE = (
    "all-reduces on the stock library's curves: the engine disables its custom all-reduce "
    "for a tensor-parallel group that spans nodes (cross_node_all_reduce)"
)


@lru_cache(maxsize=1)
def engines() -> frozenset[str]:
    """The engines `cross_node_all_reduce` declares (each with the code it was read from)."""
    from kb.resources import end_to_end

    return end_to_end(SECTION, _engines)


def _engines(entry: Any) -> frozenset[str]:
    found = frozenset(str(name) for name, node in entry["engines"].items() if node["source"])
    if not found:
        raise ValueError(f"{SECTION} declares no engine")
    return found


def spans_nodes(engine: str, tp: int, devices: int, nodes: int) -> bool:
    """True when `engine` is declared and its TP group holds more devices than a node has."""
    return nodes > 1 and tp > devices // nodes and engine in engines()
