"""A request of a composed placement: TTFT (the prefill pass), TPOT (the step) and its latency.

With `envelope.workload.request` (input and output tokens), each feasible composed
option's request is priced as flops/tp-decode-allreduce-time's request_latency
composes it: one prefill pass over the prompt, then one decode step per further
output token.

    TTFT    = max(t_w, T_math(S_in * batch/dp tokens) + T_attn(S_in)) + L*t_o
              + prefill all-reduces (+ T_kernels, with `workload.prefill_kernels`)
    TPOT    = the ledger's T_total (the decode step at the workload's context)
    request = TTFT + (output_tokens - 1) * TPOT
    energy  = N*P_dev*request/(batch*output_tokens)   per output token, at TDP
              (flops/serving-energy-cost-per-token energy_step, when the workload names it)

With `workload.prefill_matmul` (a receipt of per-layer matmul times by tokens) the
prompt's matmuls are L * t(M) at its tokens instead of T_math (kb/ledger/prefill.py).
With `workload.prefill_kernels` (a receipt of per-layer non-matmul kernel times by tokens)
the pass adds T_kernels = L * max(0, t_k(M) - t_k(1)) (kb/ledger/kernels.py).
The prefill pass reads the rank's weights once (an MoE model: the shared weights and
every routed expert the prompt's batch*S_in tokens touch, flops/moe-decode-expert-read
at that many tokens, since the router picks experts per token) (or, above the ridge, is its
matmuls: flops/prefill-gemm-ridge's T_math when the option states a compute rate, plus
the causal attention over the prompt, the class's attention_time T_attn, quadratic in
the prompt);
its c*L all-reduces (and, with pp > 1, its pp - 1 stage sends) each carry the whole
prompt of the replica's sequences, priced
from the same size-aware curves as the decode step's (a size beyond a curve falls to
the line rate, labelled an estimate). The KV-cache write is left out, as the class
leaves it out, and so are the non-matmul kernels without such a receipt. Pure
arithmetic on the resolved specs: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from kb.ledger.inputs import Envelope, OptionSpec
from kb.ledger.ledger import Ledger, Overrides, _max, energy_per_token, transfer_cost


@dataclass(frozen=True)
class Request:
    """One option's request: TTFT and its parts, TPOT, the latency, and how each was priced."""

    option: str
    input_tokens: int
    output_tokens: int
    prefill_read: Fraction  # max(weight read, prompt matmuls + attention)
    prefill_overhead: Fraction
    prefill_collectives: Fraction  # all-reduces and stage sends of the whole prompt
    ttft: Fraction
    tpot: Fraction
    latency: Fraction
    pricing: tuple[str, ...]  # how the prefill all-reduces were priced
    provenance: str  # measured only if every part is; else estimated / unverified
    energy_per_token: Fraction | None = None  # J per output token over the whole request
    energy_provenance: str = "none"  # "estimated at TDP", or "none" (and energy_note says why)
    energy_note: str = ""
    prefill_costs: tuple[tuple[str, Fraction], ...] = ()  # (transfer name, raw s) of the pass
    prefill_kernels: Fraction = Fraction(0)  # the pass's non-matmul kernels beyond one token


def request(envelope: Envelope, option: OptionSpec, ledger: Ledger) -> Request | None:
    """The request of a feasible composed option, or None without a workload request."""
    work, derived = envelope.workload, option.derived
    if work is None or derived is None or work.request is None:
        return None
    inputs, outputs = work.request
    # an MoE prompt reads the experts all its tokens route to (more than one step's batch)
    first = derived.prefill_weight_read or derived.weight_read
    read = first.value
    if derived.math is not None:  # the prompt's tokens are input_tokens x the step's
        attention = derived.prefill_attention.value if derived.prefill_attention else 0
        # a measured per-layer matmul time at the prompt's tokens, where one is named
        # (kb.ledger.prefill); else the ridge class's T_math at the compute rate
        matmuls = (
            derived.prefill_math.value
            if derived.prefill_math is not None
            else derived.math.value * inputs
        )
        read = Fraction(_max(read, matmuls + attention))
    overhead = derived.overhead.value if derived.overhead else Fraction(0)
    # the norms, rotary, activation and adds between the matmuls, where a receipt times them
    # (kb.ledger.kernels): outside the read-or-matmul max, they stream activations
    kernels = derived.prefill_kernels.value if derived.prefill_kernels else Fraction(0)
    costs = [transfer_cost(t, envelope.batch, Fraction(0), Overrides()) for t in option.prefill]
    collectives = sum((Fraction(c.raw) for c in costs), Fraction(0))
    ttft = read + kernels + overhead + collectives
    tpot = Fraction(ledger.total)
    states = {c.provenance for c in costs} | {"estimated"}
    latency = ttft + (outputs - 1) * tpot
    energy = None
    if ledger.energy is not None and ledger.energy.value is not None:
        # the same e_tok = N*P_dev*t_step/B over the request: every sequence's outputs in its time
        energy = energy_per_token(option, latency, envelope.batch * outputs).value
    kind = ledger.energy.provenance if ledger.energy is not None else "none"
    note = ledger.energy.formula if ledger.energy is not None and energy is None else ""
    return Request(
        option.name,
        inputs,
        outputs,
        read,
        overhead,
        collectives,
        ttft,
        tpot,
        latency,
        tuple(c.pricing for c in costs),
        "unverified" if "unverified" in states else "estimated",
        energy,
        kind if energy is not None else "none",
        note,
        tuple((t.name, Fraction(c.raw)) for t, c in zip(option.prefill, costs, strict=True)),
        kernels,
    )
