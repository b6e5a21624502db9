"""Expert parallelism in a composed placement: the experts per rank and the dispatch/combine.

An option of a mixture-of-experts model with `degrees.ep` > 1 spreads the routed
experts over ep of the tp*dp ranks of a stage, E/ep per rank; the ranks of one
expert-parallel group are consecutive in rank order (tp innermost, then pp, then dp).
When ep is smaller than tp, each expert is split tp/ep ways inside its TP group
(TensorRT-LLM's "TP8 EP4": MoE tensor parallel 2 times expert parallel 4), so the
experts are spread over s = max(ep, tp) ranks either way; the groups of a stage beyond
that each hold all the experts. kb.ledger.workload calls `expert_option` for such an
option, which gives, each from the flop classes through kb's one evaluator
(kb/equations/evaluate.py):

- the weights per device: the non-expert parameters over tp*pp and the routed
  experts' over s*pp, `P_rest*b_w/(tp*pp) + P_exp*b_w/(s*pp)` with
  `P_exp = 3*L*E*d*d_ff` (flops/moe-decode-expert-read#expert_params);
- the per-rank weight read of a decode step: `(P_rest/tp + f*P_exp/s)*b_w/BW_hbm`,
  with f = 1 - (1 - k/E)^B_g the routed fraction the group's B_g = batch*s/(tp*dp)
  sequences touch (#fraction), spread evenly over the s ranks (the load skew of a
  real router is not counted);
- the dispatch and the combine of every MoE layer, per decode step (and, with a
  request, of the prefill pass): DeepEP's low-latency kernels as
  flops/moe-ep-nvlink-rdma-decode prices them, `ll_time_tail` when the group spans
  nodes (same-node copies over `ep_collective.link`, the rest through one NIC per
  device over `inter_link`, the slower path sets the time, with the random-routing
  tail I) and `nvlink_bound` when it fits in a node. A rank holds T = batch/(tp*dp)
  tokens (the prompt's tokens too for the prefill pass); a dispatched copy is
  DeepEP's fp8 copy (`copy_bytes`, its format read from the bindings of the claim
  `copy-bytes-fp8` of flops/moe-expert-parallel-decode, each with its source) and a
  combined copy d*b_c with the workload's activation bytes
  (flops/moe-expert-parallel-decode#combine_volume).

Tensor-parallel experts under attention data parallelism (`degrees.moe_tp` > 1, with tp 1,
no ep and dp a multiple of moe_tp; TensorRT-LLM's default MoE layout with
`enable_attention_dp` and no `--ep`, sources/github-trtllm-attention-dp-moe-tp, declared in
kb/data/end-to-end.json `moe_tensor_parallel`) is the same mechanism with s = max(ep, tp) *
moe_tp: every rank holds the non-expert weights whole (tp 1) and a 1/moe_tp slice of every
routed expert, and reads the slices of the experts its group's B_g = batch*moe_tp/dp tokens
touch. In place of the dispatch and combine, every MoE layer all-gathers the group's tokens
(d*b_x a token in the weights' format, n of flops/tp-decode-allreduce-time, plus k*(4+4) B of
expert ids and weights) and reduce-scatters the 16-bit outputs (d*b_act a token) over the
moe_tp ranks of `moe_collective`: two Transfers of those patterns, priced by the size-aware
curves of the link like any collective (kb.ledger.transfers), the prefill's with every prompt
token.

The dispatch and combine are ledger transfers already priced: a TransferSpec with the
class's time as `bytes / effective bandwidth` (as a receipt-priced transfer is), no
latency term, no overlap (a row whose source says it ran SGLang's two-batch overlap is
priced with it by kb/ledger/overlap.py, kb/data/end-to-end.json `two_batch_overlap`; a
placement never assumes it), the pricing text naming the equation. They are estimates:
the class holds its network term to DeepEP's table across nodes, and inside one node the
class's NVLink term lies under DeepEP's measured time by about half (claim
deepep-ll-dispatch-ep8 of that class), so a one-node EP time here is a lower bound. Each
is priced at the envelope's batch; a `--set batch` or a break-even on the batch does not
price them again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Protocol

from kb.findings import pointer_join
from kb.ledger.parts import (
    MOE_CLASS,
    TP_CLASS,
    Part,
    _count,
    _spec,
    collective_transfer,
    evaluate_part,
    exact_spec,
    moe_layer_count,
    prefill_transfer,
)
from kb.ledger.quantities import Figure
from kb.run import Kept

if TYPE_CHECKING:
    from kb.kinds.placement import Degrees, Option, Transfer
    from kb.ledger.reader import InputReader
    from kb.ledger.transfers import TransferSpec


class ModelGeometry(Protocol):
    """What this module reads of the workload's model (kb.ledger.workload.Model)."""

    @property
    def id(self) -> str: ...
    @property
    def layers(self) -> int: ...
    @property
    def architecture(self) -> str: ...


class WorkloadTerms(Protocol):
    """What this module reads of the resolved workload (kb.ledger.workload.Workload).

    Typed by shape: workload calls this module, so this module never imports it.
    """

    @property
    def model(self) -> ModelGeometry: ...
    @property
    def activation_bytes(self) -> Figure | None: ...
    @property
    def composed_from(self) -> tuple[str, ...]: ...
    @property
    def request(self) -> tuple[int, int] | None: ...
    @property
    def trail(self) -> tuple[str, ...]: ...
    @property
    def weight_bytes(self) -> Figure: ...
    @property
    def weights_total(self) -> Fraction: ...


EP_CLASS = "flops/moe-ep-nvlink-rdma-decode"
EP_BASE = "flops/moe-expert-parallel-decode"
FORMAT_CLAIM = "copy-bytes-fp8"  # EP_BASE's claim that binds DeepEP's dispatch format
FORMAT_SYMBOLS = ("b_d", "b_s", "g_q", "b_h")
DISPATCH = "ep-dispatch"
COMBINE = "ep-combine"
PREFILL_DISPATCH = "ep-prefill-dispatch"
PREFILL_COMBINE = "ep-prefill-combine"
PREFILL_NAMES = (PREFILL_DISPATCH, PREFILL_COMBINE)
GATHER = "moe-all-gather"
SCATTER = "moe-reduce-scatter"
PREFILL_GATHER = "moe-prefill-all-gather"
PREFILL_SCATTER = "moe-prefill-reduce-scatter"
GATHER_NAMES = (GATHER, SCATTER, PREFILL_GATHER, PREFILL_SCATTER)
GATHER_PREFILL_NAMES = (PREFILL_GATHER, PREFILL_SCATTER)
ROUTING_BYTES = 8  # a token's expert id (int32) and weight (float32), per routed expert


@dataclass(frozen=True)
class Expert:
    """What expert parallelism changes in one option: weights, weight read, transfers."""

    weights: Part  # bytes per device
    weight_read: Part  # s per decode step per rank
    transfers: tuple[Transfer | TransferSpec, ...]  # decode's collectives, then the prefill's


def group_layout(deg: Degrees, ranks_per_node: int) -> tuple[int, int]:
    """(G, nodes): the most ranks of one expert-parallel group in a node, and the nodes it spans.

    The first group of the first stage: the first ep of the stage's tp*dp ranks, in
    rank order `t + tp*(s + pp*r)` (tp innermost, then pp, then dp).
    """
    stage = [t + deg.tp * (0 + deg.pp * r) for r in range(deg.dp) for t in range(deg.tp)]
    group = stage[: deg.ep]
    per_node: dict[int, int] = {}
    for rank in group:
        per_node[rank // ranks_per_node] = per_node.get(rank // ranks_per_node, 0) + 1
    return max(per_node.values()), len(per_node)


def expert_option(
    res: InputReader, work: WorkloadTerms, option: Option, batch: int, pointer: str
) -> Expert | None:
    """Weights, weight read and collectives of an option with ep > 1 or moe_tp > 1 (None: a gap)."""
    deg = option.degrees
    assert deg is not None and (deg.ep > 1 or deg.moe_tp > 1)
    at = pointer_join(pointer, "degrees", "ep" if deg.moe_tp == 1 else "moe_tp")
    model = res.readable(work.model.id)
    if not _layout_holds(res, work, option, at):
        return None
    assert model is not None and work.activation_bytes is not None
    moe_layers = moe_layer_count(model)
    if moe_layers < 1:
        res.gap(at, f"{work.model.id} states no MoE layers (its geometry's layer kinds)")
        return None
    width = "d_ff_expert" if model.get("geometry.d_ff_expert") is not None else "d_ff"
    m = work.model.id
    experts = _evaluated(
        res,
        MOE_CLASS,
        "expert_params",
        {
            "L": _count(moe_layers),
            "E": f"{m}#geometry.experts",
            "d": f"{m}#geometry.d_model",
            "d_ff": f"{m}#geometry.{width}",
        },
        at,
        work.composed_from,
    )
    spread = max(deg.ep, deg.tp) * deg.moe_tp  # ranks the routed experts are spread over
    group_batch = Fraction(batch * spread, deg.tp * deg.dp)
    fraction = _evaluated(
        res,
        MOE_CLASS,
        "fraction",
        {
            "k": f"{m}#geometry.experts_active",
            "E": f"{m}#geometry.experts",
            "B": exact_spec(group_batch, "1"),
        },
        at,
        work.composed_from,
    )
    rate = res.quantity(option.rate, pointer_join(pointer, "useful", "rate"), "B/s", "HBM rate")
    if experts is None or fraction is None or rate is None:
        return None
    b_w = work.weight_bytes.value
    p_exp = experts.value
    p_rest = work.weights_total / b_w - p_exp
    per_device = p_rest * b_w / (deg.tp * deg.pp) + p_exp * b_w / (spread * deg.pp)
    weights = Part(
        per_device,
        f"P_rest*b_w/(tp*pp) + P_exp*b_w/(s*pp), s = max(ep, tp)*moe_tp: the non-expert "
        f"weights over tp*pp = {deg.tp * deg.pp}, the routed experts ({MOE_CLASS} "
        f"{experts.trail[0]}) over s*pp = {spread * deg.pp}",
        (*work.trail, *experts.trail),
    )
    read = (p_rest / deg.tp + fraction.value * p_exp / spread) * b_w / rate.value
    weight_read = Part(
        read,
        f"(P_rest/tp + f*P_exp/s)*b_w/BW_hbm: f = {MOE_CLASS} {fraction.trail[0]} "
        f"at B = batch*s/(tp*dp) = {group_batch} sequences, the experts read by "
        f"{spread} ranks in parallel",
        (*fraction.trail, f"BW_hbm from {rate.origin}"),
    )
    transfers: tuple[Transfer | TransferSpec, ...] | None
    if deg.moe_tp > 1:
        transfers = _gather_scatter(res, work, option, moe_layers, at)
    else:
        transfers = _dispatch_combine(res, work, option, batch, moe_layers, at)
    if transfers is None:
        return None
    return Expert(weights, weight_read, transfers)


def _layout_holds(res: InputReader, work: WorkloadTerms, option: Option, at: str) -> bool:
    """The option's MoE degrees are a layout kb prices, with the records it needs named."""
    deg = option.degrees
    assert deg is not None
    name, value = ("moe_tp", deg.moe_tp) if deg.moe_tp > 1 else ("ep", deg.ep)
    if work.model.architecture != "moe" or res.readable(work.model.id) is None:
        res.gap(at, f"{name} = {value}: {work.model.id} is not a mixture-of-experts model")
        return False
    if deg.moe_tp > 1 and (deg.tp != 1 or deg.ep != 1 or deg.dp % deg.moe_tp):
        res.gap(
            at,
            f"moe_tp = {deg.moe_tp} splits the experts under attention data parallelism: it "
            f"needs tp 1, no ep, and dp a multiple of it (tp {deg.tp}, ep {deg.ep}, dp {deg.dp})",
        )
        return False
    if (deg.tp * deg.dp) % deg.ep:
        res.gap(at, f"ep = {deg.ep} does not divide the tp*dp = {deg.tp * deg.dp} ranks")
        return False
    links = (
        ("moe_collective", option.moe_collective)
        if deg.moe_tp > 1
        else ("ep_collective", option.ep_collective)
    )
    if links[1] is None:
        what = (
            "the all-gather and reduce-scatter need"
            if deg.moe_tp > 1
            else "the dispatch and combine need"
        )
        res.gap(at, f"{name} = {value}: {what} {links[0]} (their links)")
        return False
    needed = (MOE_CLASS, TP_CLASS) if deg.moe_tp > 1 else (MOE_CLASS, EP_CLASS, EP_BASE)
    missing = [c for c in needed if c not in work.composed_from]
    if work.activation_bytes is None:
        missing.append("envelope.workload.activation_bytes")
    if missing:
        res.gap(at, f"{name} = {value} is priced from {', '.join(missing)}: name them")
        return False
    return True


def _gather_scatter(
    res: InputReader, work: WorkloadTerms, option: Option, moe_layers: int, at: str
) -> tuple[Transfer, ...] | None:
    """moe_tp > 1: each MoE layer's all-gather of the group's tokens and reduce-scatter back.

    Per token: the gather carries the token in the weights' format (n of TP_CLASS at
    b = b_w, as the fused MoE quantizes before it gathers) and its k expert ids and
    weights; the scatter the 16-bit output (n at b = b_act). A collective's message is the
    whole group's buffer: batch*moe_tp/(tp*dp) tokens (scales with the batch).
    """
    deg, coll = option.degrees, option.moe_collective
    assert deg is not None and coll is not None and work.activation_bytes is not None
    m = work.model.id
    k = res.readable(m)
    active = k.get("geometry.experts_active") if k is not None else None
    if not isinstance(active, int):
        res.gap(at, f"{m} states no experts_active")
        return None
    sizes = []
    for b, extra in ((work.weight_bytes, ROUTING_BYTES * active), (work.activation_bytes, 0)):
        n = _evaluated(
            res,
            TP_CLASS,
            "n",
            {"B": _count(1), "d": f"{m}#geometry.d_model", "b": _spec(b)},
            at,
            work.composed_from,
        )
        if n is None:
            return None
        sizes.append((n.value + extra) * deg.moe_tp / (deg.tp * deg.dp))
    found = []
    collectives = ((GATHER, "all-gather", sizes[0]), (SCATTER, "reduce-scatter", sizes[1]))
    for name, pattern, size in collectives:
        found.append(collective_transfer(coll, name, pattern, deg.moe_tp, moe_layers, size))
    if work.request is not None:  # the prefill pass gathers and scatters every prompt token
        prompt = work.request[0]
        found += [
            prefill_transfer(found[0], prompt, PREFILL_GATHER),
            prefill_transfer(found[1], prompt, PREFILL_SCATTER),
        ]
    return tuple(found)


EVALUATED: Kept[dict[str, Part]] = Kept("expert parallelism's evaluations")
MAX_EVALUATED = 4096


def _evaluated(
    res: InputReader,
    class_id: str,
    target: str,
    bindings: Mapping[str, Any],
    at: str,
    listed: tuple[str, ...],
) -> Part | None:
    """`workload.evaluate_part`, remembered for the run by the class's text and the bindings.

    Many mappings of one plan ask the same question (the same tokens per rank, the
    same model): the value is a function of the class's (symbols, equations) text
    (its content key, never its identity), the target and the bindings, which name
    records of this run's knowledge base. Only a value is kept; a question that
    gave a gap is asked again, so its gap is reported where it arises.
    """
    from kb.equations.system import stable_key

    record = res.readable(class_id) if class_id in listed else None
    text = stable_key(res.kb, record.data) if record is not None else None
    key = None if text is None else repr((class_id, text, target, sorted(bindings.items())))
    memo = res.kb.run.once(EVALUATED, dict)
    if key is not None and key in memo:
        return memo[key]
    found = evaluate_part(res, class_id, target, bindings, at, listed)
    if found is not None and key is not None:
        if len(memo) >= MAX_EVALUATED:
            memo.clear()
        memo[key] = found
    return found


def _format(res: InputReader, at: str) -> dict[str, Any] | None:
    """DeepEP's dispatch format (b_d, b_s, g_q, b_h): the bindings of EP_BASE's FORMAT_CLAIM."""
    record = res.readable(EP_BASE)
    claims = record.get("claims") if record is not None else None
    claim = next(
        (c for c in claims or () if isinstance(c, Mapping) and c.get("id") == FORMAT_CLAIM), None
    )
    bind = claim.get("bind") if claim is not None else None
    if not isinstance(bind, Mapping) or any(name not in bind for name in FORMAT_SYMBOLS):
        res.gap(at, f"{EP_BASE} claim {FORMAT_CLAIM} binds no {', '.join(FORMAT_SYMBOLS)}")
        return None
    return {name: bind[name] for name in FORMAT_SYMBOLS}


def _link_rate(res: InputReader, link_id: str | None, at: str, what: str) -> Figure | None:
    from kb.ledger.transfers import line_rate

    record = res.readable(link_id) if link_id is not None else None
    view = res.views.interconnect(record) if record is not None else None
    found = line_rate(view) if view is not None else None
    if found is None:
        res.gap(at, f"the {what} {link_id} states no line rate kb can price the copies at")
    return found


def _net_rate(res: InputReader, link_id: str, at: str) -> Figure | None:
    """The rate a GPU's copies to other nodes cross the inter-node link at.

    The link record's measured `bandwidth.achieved` (per direction, with the receipt that
    measured it) when it states one, else its line rate. Physics: a copy to another node
    leaves HBM, crosses the GPU's PCIe link to its own NIC and the NIC's port; the NIC and
    its PCIe link are the slowest stage and the same parts beside every GPU of a reference
    node, so a rate achieved through that NIC beside one GPU holds beside another
    (interconnects/infiniband-ndr's notes say why for H100, H200 and H800).
    """
    record = res.readable(link_id)
    node = record.get("bandwidth.achieved") if record is not None else None
    receipt = record.get("bandwidth.achieved_receipt") if record is not None else None
    if node is None or not isinstance(receipt, str):
        return _link_rate(res, link_id, at, "inter_link")
    found = res.quantity(node, at, "B/s", f"achieved rate of {link_id}")
    if found is None:
        return None
    return Figure(found.value, "B/s", "measured", f"achieved, {receipt}", at)


def _dispatch_combine(
    res: InputReader, work: WorkloadTerms, option: Option, batch: int, moe_layers: int, at: str
) -> tuple[TransferSpec, ...] | None:
    deg, links = option.degrees, option.ep_collective
    assert deg is not None and links is not None and work.activation_bytes is not None
    g, nodes = group_layout(deg, links.ranks_per_node)
    where = pointer_join(at.rsplit("/degrees", 1)[0], "ep_collective")
    nvl = _link_rate(res, links.link, pointer_join(where, "link"), "link")
    net = None
    if nodes > 1:
        if links.inter_link is None:
            res.gap(
                where,
                f"an expert-parallel group of {deg.ep} ranks spans {nodes} nodes: name "
                "ep_collective.inter_link",
            )
            return None
        net = _net_rate(res, links.inter_link, pointer_join(where, "inter_link"))
        if net is None:
            return None
    fmt = _format(res, at)
    if nvl is None or fmt is None:
        return None
    m = work.model.id
    phases = [(Fraction(batch, deg.tp * deg.dp), DISPATCH, COMBINE)]
    if work.request is not None:
        prompt = Fraction(batch * work.request[0], deg.tp * deg.dp)
        phases.append((prompt, PREFILL_DISPATCH, PREFILL_COMBINE))
    found: list[TransferSpec] = []
    for tokens, dispatch, combine in phases:
        volumes = (
            (
                dispatch,
                EP_CLASS,
                "dispatch_volume",
                {
                    "T": exact_spec(tokens, "1"),
                    "k": f"{m}#geometry.experts_active",
                    "d": f"{m}#geometry.d_model",
                    **fmt,
                },
            ),
            (
                combine,
                EP_BASE,
                "combine_volume",
                {
                    "T": exact_spec(tokens, "1"),
                    "k": f"{m}#geometry.experts_active",
                    "d": f"{m}#geometry.d_model",
                    "b_c": _spec(work.activation_bytes),
                },
            ),
        )
        for name, class_id, target, bindings in volumes:
            volume = _evaluated(res, class_id, target, bindings, at, work.composed_from)
            if volume is None:
                return None
            time_bindings: dict[str, Any] = {
                "N": _count(deg.ep),
                "G": _count(g),
                "T": exact_spec(tokens, "1"),
                "k": f"{m}#geometry.experts_active",
                "V": exact_spec(volume.value, "B"),
                "BW_nvl": _spec(nvl),
            }
            equation = "nvlink_bound"
            if net is not None:
                equation = "ll_time_tail"
                time_bindings["BW_net"] = _spec(net)
            time = _evaluated(res, EP_CLASS, equation, time_bindings, at, work.composed_from)
            if time is None:
                return None
            found.append(
                _priced(name, volume, time, moe_layers, deg.ep, g, nodes, links, nvl, net, where)
            )
    return tuple(found)


def _rate_origin(net: Figure) -> str:
    """How the network rate was found: the measured achieved rate and its receipt, or line rate."""
    return net.origin if net.basis == "measured" else "line rate"


def _priced(
    name: str,
    volume: Part,
    time: Part,
    layers: int,
    ep: int,
    g: int,
    nodes: int,
    links: Any,
    nvl: Figure,
    net: Figure | None,
    pointer: str,
) -> TransferSpec:
    """A transfer priced by the class: `layers` sends of V bytes at the bandwidth V/t gives."""
    from kb.ledger.transfers import TransferSpec

    zero = Figure(Fraction(0), "s", "derived", f"{EP_CLASS}: no fixed latency in the model")
    size = Figure(volume.value, "B", "derived", volume.formula)
    bandwidth = Figure(
        volume.value / time.value, "B/s", "derived", f"V / ({time.formula})", pointer
    )
    paths = (
        f"{g} ranks per node over {links.link} ({nvl.value / 10**9} GB/s), the copies to the "
        f"other {nodes - 1} node(s) over {links.inter_link} ({net.value / 10**9} GB/s, "
        f"{_rate_origin(net)})"
        if net is not None
        else f"all {ep} ranks in one node, over {links.link} ({nvl.value / 10**9} GB/s); inside "
        "one node the class lies under DeepEP's measured time by about half (a lower bound)"
    )
    pricing = (
        f"estimated: {time.formula} per MoE layer with the random-routing tail, {ep} "
        f"expert-parallel ranks, {paths}; bytes per rank {volume.formula}; no fixed "
        "latency (the class has no measured one: a lower bound at few tokens per rank); "
        "priced at the envelope's batch"
    )
    return TransferSpec(
        name=name,
        pattern="point-to-point",
        link=links.inter_link if net is not None else links.link,
        ranks=ep,
        count=layers,
        message_size=size,
        scales_with_batch=False,
        latency=zero,
        bandwidth=bandwidth,
        receipts=(),
        overlap=None,
        pointer=pointer,
        strategy="strategies/expert-parallel",
        pricing=pricing,
    )
