"""Every TP x PP x EP x DP mapping a set of devices admits, and the ones the query excludes.

Devices come as `nodes` nodes of `count / nodes` devices each. A mapping may use fewer
devices than offered (one node of two, or a part of one node: devices used is itself a
dimension), but only a whole number of nodes, or a divisor of one node:

- tensor parallel (tp) divides the devices of a node, or is a whole number of nodes
  (a TP group across nodes, `Placement.tp_across_nodes`); the planner admits the
  latter for a question that spans nodes (`tp_across_nodes`, kb plan's default since
  session 12) and `--tp-within-node` leaves it out;
- pipeline parallel (pp) splits the model's layers evenly, or unevenly as the query's
  engine does where kb/data/end-to-end.json `pipeline_stage_split` declares its split
  (kb.ledger.pp_stages: TensorRT-LLM, vLLM), and then not with ep > 1; without such an
  engine pp must divide them;
- data parallel (dp) must split the batch evenly;
- tp * pp * dp = the devices used;
- expert parallel (ep) only for an MoE model: its experts spread over the tp*dp ranks
  of a stage (kb.ledger.scenario), so ep divides tp*dp and the model's experts;
- a TP group or a pipeline boundary that spans nodes needs a link between nodes
  (`inter_link`: named, or the accelerator's reference node network, which the
  planner assumes and says so); data-parallel replicas on different nodes exchange
  nothing in a decode step and need none.

A pinned degree (`--tp 8`) keeps only the mappings with it. Pure arithmetic: no I/O but
the packaged declaration of the engines' stage splits.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

from kb.ledger import pp_stages

DEGREES = ("tp", "pp", "ep", "dp")


class PlanError(ValueError):
    """A query kb cannot plan (in kb's words): reported as a usage error, exit 2."""


@dataclass(frozen=True, order=True)
class Placement:
    """One mapping: its degrees and the nodes it occupies."""

    tp: int = 1
    pp: int = 1
    ep: int = 1
    dp: int = 1
    nodes: int = 1

    @property
    def devices(self) -> int:
        return self.tp * self.pp * self.dp

    @cached_property
    def name(self) -> str:
        """`tp8`, `tp8-pp2`, `dp2-tp8`, `dp2-tp4-ep2` (degree 1 left out; `tp1` alone).

        Kept on the instance (a plan compares names for every Pareto pair).
        """
        parts = [f"dp{self.dp}"] if self.dp > 1 else []
        parts += [f"{d}{getattr(self, d)}" for d in ("tp", "pp", "ep") if getattr(self, d) > 1]
        return "-".join(parts) or "tp1"

    def degrees(self) -> dict[str, int]:
        return {d: getattr(self, d) for d in DEGREES}

    @property
    def tp_across_nodes(self) -> bool:
        """True when the tensor-parallel group spans nodes (its all-reduces cross them)."""
        return self.nodes > 1 and self.tp > self.devices // self.nodes


@dataclass(frozen=True)
class Excluded:
    """A mapping the devices would allow but the query or the model rules out, and why."""

    placement: Placement
    reason: str


@dataclass(frozen=True)
class Space:
    """What the enumeration needs to know."""

    count: int  # devices offered in total
    nodes: int  # nodes they form
    layers: int  # the model's layers (split over pp: pp_stages)
    batch: int  # sequences in flight (dp must divide them)
    experts: int | None = None  # routed experts of an MoE model; None: dense (no ep)
    tp_across_nodes: bool = False
    pinned: Mapping[str, int] = field(default_factory=dict)
    inter_link: bool = False  # the link between nodes is named
    engine: str | None = None  # how the engine splits layers pp does not divide (pp_stages)


def divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def check_space(space: Space) -> None:
    """Refuse a query that names no devices to plan on, in kb's words (PlanError)."""
    for name, value in (("--count", space.count), ("--nodes", space.nodes)):
        if value < 1:
            raise PlanError(f"{name} {value}: expected a whole number, at least 1")
    if space.batch < 1:
        raise PlanError(f"--batch {space.batch}: expected a whole number, at least 1")
    if space.count % space.nodes:
        raise PlanError(
            f"--count {space.count} devices do not split evenly into --nodes {space.nodes}"
        )
    for name, value in space.pinned.items():
        if name not in DEGREES:
            raise PlanError(f"--{name}: not a degree ({', '.join(DEGREES)})")
        if value < 1:
            raise PlanError(f"--{name} {value}: expected a whole number, at least 1")
    if space.pinned.get("ep", 1) > 1 and space.experts is None:
        raise PlanError(
            f"--ep {space.pinned['ep']}: the model is dense; expert parallelism applies "
            "only to a mixture-of-experts model"
        )


def device_counts(space: Space) -> list[tuple[int, int]]:
    """(devices used, nodes used): each divisor of one node, then each whole number of nodes."""
    per_node = space.count // space.nodes
    used = [(d, 1) for d in divisors(per_node)]
    used += [(k * per_node, k) for k in range(2, space.nodes + 1)]
    return used


def _factorizations(n: int, experts: int | None) -> list[tuple[int, int, int, int]]:
    """(tp, pp, ep, dp) with tp*pp*dp = n; ep > 1 only with experts, dividing tp*dp."""
    found = []
    for tp in divisors(n):
        for pp in divisors(n // tp):
            dp = n // (tp * pp)
            for ep in divisors(tp * dp):
                if ep == 1 or (experts is not None and experts % ep == 0):
                    found.append((tp, pp, ep, dp))
    return found


def enumerate_placements(space: Space) -> tuple[tuple[Placement, ...], tuple[Excluded, ...]]:
    """The admitted mappings (fewest devices first) and the excluded ones with reasons.

    A pinned degree that no mapping has is not an error here: the caller says that no
    mapping was enumerated. Mappings that differ from a pin are left out silently
    (the query asked for them to be).
    """
    check_space(space)
    per_node = space.count // space.nodes
    admitted: list[Placement] = []
    excluded: list[Excluded] = []
    for used, nodes in device_counts(space):
        for tp, pp, ep, dp in _factorizations(used, space.experts):
            p = Placement(tp, pp, ep, dp, nodes)
            if any(getattr(p, d) != v for d, v in space.pinned.items()):
                continue
            reason = _excluded_because(p, space, per_node)
            if reason is None:
                admitted.append(p)
            else:
                excluded.append(Excluded(p, reason))
    return tuple(admitted), tuple(excluded)


def _excluded_because(p: Placement, space: Space, per_node: int) -> str | None:
    if p.tp > per_node or per_node % p.tp:
        if not space.tp_across_nodes:
            return (
                f"tp = {p.tp} crosses the {per_node}-device nodes (--tp-within-node leaves it out)"
            )
        if p.tp % per_node:
            return f"tp = {p.tp} is neither within one {per_node}-device node nor whole nodes"
    if p.nodes > 1 and not space.inter_link:
        crossing = (
            f"tp = {p.tp}" if p.tp > per_node else f"pp = {p.pp}" if p.tp * p.pp > per_node else ""
        )
        if crossing:
            return (
                f"{crossing} spans nodes: name --inter-link, the interconnect between them "
                "(the accelerator states no reference node network to assume)"
            )
    counts = _stages(space.layers, p.pp, space.engine)
    if counts is None:
        return pp_stages.why_not(space.layers, p.pp, space.engine)
    if p.ep > 1 and not pp_stages.even(counts):  # kb.ledger.workload's gap, said here
        return (
            f"ep = {p.ep} over stages of {pp_stages.describe(counts)}: experts split over "
            f"unequal stages are not composed ({pp_stages.SECTION})"
        )
    if space.batch % p.dp:
        return f"the batch {space.batch} does not split evenly over dp = {p.dp} replicas"
    return None


def _stages(layers: int, pp: int, engine: str | None) -> tuple[int, ...] | None:
    """The stage layer counts of pp stages (kb.ledger.pp_stages), None when not admitted."""
    return pp_stages.split(layers, pp, engine) if 1 <= pp <= layers else None
