"""An offline run under a KV pool, with vLLM V1's preemption by recompute (issue 35, session 18).

kb/data/end-to-end.json `offline_throughput.preemption` declares the rule; this module
runs it. Every request of the run is sent at time 0 (benchmark_throughput's
llm.generate). The replica's pool holds `pool` blocks of `block` tokens; a request holds
the blocks of the tokens whose KV it keeps. Each step, as the V1 scheduler:

- the running requests, in the order they were admitted, are each given their tokens
  (one decode, or the rest of a prefill within the budget) and the blocks those need;
  when the free blocks fall short, the last running request is preempted: its blocks
  are freed, its computed tokens reset and it goes to the head of the waiting queue
  (and if it is the request being scheduled, no later running request is scheduled);
- only in a step that preempted nobody, the waiting requests in queue order are
  admitted while the budget lasts, each only when its chunk's blocks are free;
- a readmitted request prefills its prompt and the outputs it had emitted again, then
  emits its next output.

A step's time is kb.ledger.finite_run's: t_dec(b) for the b decodes (linear between the
composed steps at batch 1 and batch N), else L*t_o, plus each prefill chunk's share of
its sequence's pass. Requests in the same state are simulated as one group, exactly the
per-request rule (tests/ledger/test_paged_run.py holds the two equal); with a pool that
holds every whole sequence nothing is preempted and the run is finite_run's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from kb.ledger.finite_run import MAX_GROUP_STEPS, Passes, RunResult, decode_step, prompt_time


@dataclass(eq=False)  # groups are told apart by identity: two may be in one state
class _Held:
    """Requests in one state: admitted, preempted, prefilled and emitting together."""

    count: int
    prefill_left: int  # tokens still to prefill: the prompt, or prompt + outputs on readmission
    computed: int = 0  # tokens whose KV the request keeps
    emitted: int = 0
    first: Fraction | None = None

    def split(self, count: int) -> _Held:
        """`count` of these requests as a group of their own, taken from this one."""
        self.count -= count
        return _Held(count, self.prefill_left, self.computed, self.emitted, self.first)

    def same(self, other: _Held) -> bool:
        return (self.prefill_left, self.computed, self.emitted, self.first) == (
            other.prefill_left,
            other.computed,
            other.emitted,
            other.first,
        )


@dataclass(frozen=True)
class Pool:
    """A replica's KV pool: `blocks` blocks of `block` tokens."""

    blocks: int
    block: int

    def held(self, tokens: int) -> int:
        """Blocks that hold `tokens` tokens' KV."""
        return -(-tokens // self.block)


@dataclass
class _State:
    """The run between steps: the queues, the free blocks, what preemption cost."""

    pool: Pool
    running: list[_Held]
    waiting: list[_Held]
    free: int
    preemptions: int = 0
    recomputed: int = 0

    def preempt(self, group: _Held, count: int, inputs: int) -> None:
        """The last `count` of `group` preempted: blocks freed, to the waiting queue's head."""
        victims = group if count == group.count else group.split(count)
        if victims is group:
            self.running.remove(group)
        self.free += count * self.pool.held(victims.computed)
        victims.computed, victims.prefill_left = 0, inputs + victims.emitted
        self.waiting.insert(0, victims)
        self.preemptions += count
        self.recomputed += count * victims.prefill_left


def _share(index: int, state: _State, budget: int) -> tuple[_Held, int]:
    """running[index] cut to the requests the budget serves alike, and the tokens of each.

    Each request is given min(its tokens, the budget left): the whole ones, then one with
    the rest of the budget; the requests cut off stay right after it in the running order.
    """
    group = state.running[index]
    own = 1 if group.prefill_left == 0 else group.prefill_left
    count, take = (min(group.count, budget // own), own) if budget >= own else (1, budget)
    if count < group.count:
        state.running.insert(index + 1, group.split(group.count - count))
    return group, take


def _make_room(state: _State, group: _Held, need: int, inputs: int) -> tuple[bool, bool]:
    """Blocks for every request of `group` (`need` each), preempting from the tail.

    Returns whether any of the group is scheduled (the rest were preempted) and whether
    the running pass goes on (not when the request being scheduled was itself
    preempted). The tail's requests are preempted in the fewest that free the blocks the
    rest of the group asks for, request by request as the scheduler does.
    """
    served = 0
    while True:
        fit = group.count - served if need == 0 else min(group.count - served, state.free // need)
        served += fit
        state.free -= fit * need
        if served == group.count:
            return True, True
        tail = state.running[-1]
        left, held = group.count - served, state.pool.held(tail.computed)
        if tail is group:  # its own unserved requests go first; the last may be the one asking
            victims = min(left, -(-(left * need - state.free) // (held + need)))
            state.preempt(group, victims, inputs)
            if victims == left:
                return served > 0, False
        else:
            victims = min(tail.count, -(-(left * need - state.free) // held))
            state.preempt(tail, victims, inputs)


def _schedule_running(
    state: _State, budget: int, inputs: int
) -> tuple[list[tuple[_Held, int]], int, bool]:
    """The running pass: (group, tokens each) scheduled, the budget left, any preempted."""
    scheduled: list[tuple[_Held, int]] = []
    before = state.preemptions
    index = 0
    while index < len(state.running) and budget > 0:
        group, take = _share(index, state, budget)
        need = state.pool.held(group.computed + take) - state.pool.held(group.computed)
        some, going = _make_room(state, group, need, inputs)
        if some:
            scheduled.append((group, take))
            budget -= group.count * take
        if not going:
            break
        index += 1
    return scheduled, budget, state.preemptions > before


def _admit(state: _State, budget: int, seats: int) -> list[tuple[_Held, int]]:
    """The waiting pass: requests admitted in queue order while budget, seats and blocks last."""
    scheduled: list[tuple[_Held, int]] = []
    while state.waiting and budget > 0 and seats > 0:
        head = state.waiting[0]
        own = head.prefill_left
        take = min(own, budget)
        need = state.pool.held(take)
        count = min(head.count, budget // own, state.free // need, seats) if take == own else 1
        if count == 0 or need > state.free:
            break
        admitted = head if count == head.count else head.split(count)
        if admitted is head:
            state.waiting.pop(0)
        state.running.append(admitted)
        scheduled.append((admitted, take))
        state.free -= count * need
        budget -= count * take
        seats -= count
    return scheduled


def _merged(groups: list[_Held]) -> list[_Held]:
    """Adjacent groups in one state joined (their order and their requests unchanged)."""
    out: list[_Held] = []
    for group in groups:
        if out and out[-1].same(group):
            out[-1].count += group.count
        else:
            out.append(group)
    return out


@dataclass(frozen=True)
class Times:
    """The composed ledger's times a run is priced with (seconds)."""

    step_at_one: Fraction  # the decode step at batch 1
    step_at_clients: Fraction  # the decode step at batch N
    overhead: Fraction  # L*t_o: a step without decodes pays it once
    stall: Callable[[int], Fraction]  # a prefill of k tokens: d_s(k)
    passes: Passes | None = None  # k -> D(k*I): k prompts as one pass (None: k * d_s(I))


def simulate_paged(
    requests: int, inputs: int, outputs: int, budget: int, pool: Pool, times: Times
) -> RunResult:
    """All `requests` sent at once into one replica's pool (module docstring).

    ValueError on inputs the rule cannot run: no request, a budget that leaves no prompt
    token beside the decodes, a pool that cannot hold one whole sequence, or a run longer
    than MAX_GROUP_STEPS group-steps to simulate.
    """
    if requests < 1 or inputs < 1 or outputs < 1:
        raise ValueError("requests, input and output tokens must be at least 1")
    if budget <= requests:
        raise ValueError(
            f"a token budget of {budget} leaves no prompt token beside {requests} decodes"
        )
    if pool.blocks < pool.held(inputs + outputs - 1):
        raise ValueError(f"a pool of {pool.blocks} blocks holds no whole sequence")
    state = _State(pool, [], [_Held(requests, inputs)], pool.blocks)
    finished: list[tuple[_Held, Fraction]] = []
    now, steps, work = Fraction(0), 0, 0
    while state.running or state.waiting:
        work += len(state.running) + len(state.waiting)
        if work > MAX_GROUP_STEPS:
            raise ValueError(f"the run needs more than {MAX_GROUP_STEPS:,} group-steps to simulate")
        scheduled, left, preempted = _schedule_running(state, budget, inputs)
        if not preempted:
            seats = requests - sum(g.count for g in state.running)
            scheduled += _admit(state, left, seats)
        now += _step_time(scheduled, requests, times, inputs)
        steps += 1
        _advance(scheduled, now)
        for group in [g for g in state.running if g.emitted >= outputs]:
            state.running.remove(group)
            state.free += group.count * pool.held(group.computed)
            finished.append((group, now))
        state.running, state.waiting = _merged(state.running), _merged(state.waiting)
    notes = (f"{state.preemptions} preemptions, {state.recomputed} tokens recomputed",)
    return _result(finished, now, steps, outputs, requests, notes)


def _step_time(
    scheduled: list[tuple[_Held, int]], clients: int, times: Times, inputs: int
) -> Fraction:
    """t_dec(b) (or L*t_o with no decode) plus the step's prefill tokens as one pass.

    kb/data/end-to-end.json `step_prompt_pass`: the step's prefill tokens p (prompt chunks
    and recomputed ones) are D(p) (finite_run.prompt_time over `times.passes`); a
    recomputed chunk of a sequence of span tokens adds what its pass costs per token
    beyond a prompt's, d_s(span)/span - d_s(I)/I (`preemption.recompute_time`). Without
    `passes` each token is its sequence's share of its own pass, d_s(span)/span.
    """
    decodes = sum(g.count for g, _ in scheduled if g.prefill_left == 0)
    base = (
        decode_step(decodes, clients, times.step_at_one, times.step_at_clients)
        if decodes
        else times.overhead
    )
    chunks = [(g, take) for g, take in scheduled if g.prefill_left]
    if times.passes is None:
        prefill = Fraction(0)
        for group, take in chunks:
            span = group.computed + group.prefill_left
            prefill += group.count * take * times.stall(span) / span
        return base + prefill
    tokens = sum(g.count * take for g, take in chunks)
    prompt = times.stall(inputs) / inputs
    longer = Fraction(0)
    for group, take in chunks:
        span = group.computed + group.prefill_left
        if span != inputs:
            longer += group.count * take * (times.stall(span) / span - prompt)
    return base + prompt_time(tokens, inputs, times.passes) + longer


def _advance(scheduled: list[tuple[_Held, int]], now: Fraction) -> None:
    """Each scheduled group's tokens computed; a completed prefill or a decode emits one."""
    for group, take in scheduled:
        group.computed += take
        if group.prefill_left:
            group.prefill_left -= take
            if group.prefill_left:
                continue
            if group.first is None:
                group.first = now
        group.emitted += 1


def _result(
    finished: list[tuple[_Held, Fraction]],
    now: Fraction,
    steps: int,
    outputs: int,
    requests: int,
    notes: tuple[str, ...],
) -> RunResult:
    """Per-request times (every request sent at 0), each group repeated by its count."""
    ttfts, tpots, latencies = [], [], []
    for group, finish in finished:
        assert group.first is not None  # a group finishes only after its first token
        ttfts += [group.first] * group.count
        if outputs > 1:
            tpots += [(finish - group.first) / (outputs - 1)] * group.count
        latencies += [finish] * group.count
    return RunResult(
        tuple(ttfts), tuple(tpots), tuple(latencies), now, steps, outputs, requests, notes
    )
