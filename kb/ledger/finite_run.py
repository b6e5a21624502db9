"""A serving run of N requests at concurrency C, step by step (issue 35, session 15).

kb/ledger/serving.py prices a serving row at the steady state of a closed loop of C
clients. A run of few requests never reaches it: vllm bench serve with
`--num-prompts N --max-concurrency C` and its default request rate (inf) sends the
first C requests at time 0 and each later one when a client is free, so at the start
C prompts wait for one another. kb/data/end-to-end.json `finite_run` declares how such a
row is priced; this module runs that rule:

- each step first gives one token to every running request past its prompt (b
  decodes), then the rest of the token budget (`max_batched_tokens - b`) to the prompt
  tokens still to prefill, in arrival order, a prompt spanning steps when it must
  (chunked prefill, vLLM V1's scheduler);
- a step of b decodes and p prompt tokens takes `t_dec(b) + p/I * d_s`, or
  `L*t_o + p/I * d_s` with no decode: t_dec linear in b between the composed decode
  steps at batch 1 and batch C, d_s the mixed scheduler's share of one prompt's
  composed pass (serving.py), L*t_o the per-layer overhead a step pays once;
- a request's first token is emitted at the end of the step that completes its prompt,
  each later token one step later; its clock starts when it is sent.

Every time is the composed ledger's (the caller prices t_dec and the prompt's pass);
nothing is fitted. Pure: numbers in, a `RunResult` out; ValueError on inputs the rule
cannot run (no client, no prompt, a budget below the clients, a negative time) and on a
run longer than MAX_REQUEST_STEPS to simulate (counted, so the refusal never depends on
the machine; the shipped runs need about 1/15 of it).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from fractions import Fraction

STATISTICS = ("mean", "median")
MAX_REQUEST_STEPS = 2_000_000  # live requests summed over the steps simulated


@dataclass
class _Request:
    arrival: Fraction
    prompt_left: int
    emitted: int = 0
    first: Fraction | None = None
    finish: Fraction | None = None


@dataclass(frozen=True)
class RunResult:
    """Per-request times of the run and its duration (seconds)."""

    ttfts: tuple[Fraction, ...]
    tpots: tuple[Fraction, ...]  # (finish - first token)/(O - 1); empty when O = 1
    latencies: tuple[Fraction, ...]  # finish - arrival
    duration: Fraction  # the last request's finish
    steps: int
    output_tokens: int
    requests: int
    notes: tuple[str, ...] = field(default=())

    def statistic(self, values: tuple[Fraction, ...], which: str) -> Fraction:
        """The mean or the median of `values`.

        The median of an even count is the mean of the two middle values, as numpy's,
        which vllm bench serve prints.
        """
        if which not in STATISTICS:
            raise ValueError(f"statistic {which!r}: expected one of {', '.join(STATISTICS)}")
        if not values:
            raise ValueError("no values")
        if which == "mean":
            return sum(values, Fraction(0)) / len(values)
        return Fraction(statistics.median(values))

    @property
    def output_rate(self) -> Fraction:
        """N*O / duration: the benchmark's output token throughput (1/s)."""
        return Fraction(self.requests * self.output_tokens) / self.duration


def decode_step(batch: int, clients: int, at_one: Fraction, at_clients: Fraction) -> Fraction:
    """t_dec(b): linear in b between the composed steps at batch 1 and batch C."""
    if clients <= 1:
        return at_one
    return at_one + (at_clients - at_one) * (batch - 1) / (clients - 1)


def _within_bound(request_steps: int) -> None:
    """ValueError once the simulation has counted more than MAX_REQUEST_STEPS."""
    if request_steps > MAX_REQUEST_STEPS:
        raise ValueError(f"the run needs more than {MAX_REQUEST_STEPS:,} request-steps to simulate")


def simulate(
    clients: int,
    requests: int,
    input_tokens: int,
    output_tokens: int,
    budget: int,
    step_at_one: Fraction,
    step_at_clients: Fraction,
    prefill_stall: Fraction,
    overhead: Fraction,
) -> RunResult:
    """Run `requests` requests through `clients` clients (module docstring)."""
    if clients < 1 or requests < 1 or input_tokens < 1 or output_tokens < 1:
        raise ValueError("clients, requests, input and output tokens must be at least 1")
    if budget <= clients:
        raise ValueError(
            f"a token budget of {budget} leaves no prompt token beside {clients} decodes"
        )
    if min(step_at_one, step_at_clients, prefill_stall, overhead) < 0:
        raise ValueError("times must be non-negative")
    per_token = prefill_stall / input_tokens
    sent = min(clients, requests)
    # At least one request-step per token emitted, and at least one step per `budget`
    # prompt tokens: a run past the bound by these is refused before it starts.
    _within_bound(max(requests * output_tokens, -(-requests * input_tokens // budget)))
    live: list[_Request] = [_Request(Fraction(0), input_tokens) for _ in range(sent)]
    done: list[_Request] = []
    now, steps, work = Fraction(0), 0, 0
    while live:
        work += len(live)
        _within_bound(work)
        decoding = [r for r in live if r.prompt_left == 0]
        room = budget - len(decoding)
        chunks: list[tuple[_Request, int]] = []
        for r in live:  # arrival order: a prompt begun before keeps its place
            if r.prompt_left and room:
                take = min(r.prompt_left, room)
                chunks.append((r, take))
                room -= take
        prompt = sum(take for _, take in chunks)
        base = (
            decode_step(len(decoding), clients, step_at_one, step_at_clients)
            if decoding
            else overhead
        )
        now += base + prompt * per_token
        steps += 1
        for r in decoding:
            r.emitted += 1
        for r, take in chunks:
            r.prompt_left -= take
            if not r.prompt_left:
                r.first, r.emitted = now, 1
        finished = [r for r in live if r.emitted >= output_tokens]
        for r in finished:
            r.finish = now
            live.remove(r)
            done.append(r)
            if sent < requests:
                live.append(_Request(now, input_tokens))
                sent += 1
    ttfts = tuple(r.first - r.arrival for r in done if r.first is not None)
    tpots = (
        tuple(
            (r.finish - r.first) / (output_tokens - 1)
            for r in done
            if r.finish is not None and r.first is not None
        )
        if output_tokens > 1
        else ()
    )
    latencies = tuple(r.finish - r.arrival for r in done if r.finish is not None)
    return RunResult(ttfts, tpots, latencies, now, steps, output_tokens, requests)
