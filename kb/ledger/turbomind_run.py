"""LMDeploy's static benchmark through TurboMind's KV block pool (issue 35, session 19).

kb/data/end-to-end.json `turbomind_pool` declares the rule; this module runs it. B
threads each send `rounds` identical requests one after another (profile_generation.py);
the engine (TurboMind at v0.1.0a1) runs iterations, each:

- at its top, takes the requests queued (one sent when iteration k ends is taken at the
  top of k + 2; an engine holding no sequence blocks and takes the first one sent
  alone), giving each the next priority;
- gives every sequence it holds, in priority order, the blocks for its context + 1
  tokens; when the free blocks fall short, preempts running sequences from the back
  (lowest priority) until they suffice, and every sequence after the last one
  preempted waits; a sequence the blocks cannot cover even so waits (a preempted
  sequence's blocks are taken as lost: it is prefilled again in full);
- prefills each sequence admitted this iteration over its context - 1 tokens, then
  runs one decode step of every running sequence, which emits a token each.

Times are the caller's (`Prices`): kb's composed prefill pass and decode step.
Pure: numbers in, a `RunResult` out; ValueError on a run it cannot price (a pool that
holds no whole sequence, a run longer than MAX_GROUP_STEPS sequence-steps).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from kb.ledger.finite_run import MAX_GROUP_STEPS, RunResult
from kb.ledger.paged_run import Pool


@dataclass(frozen=True)
class Prices:
    """The composed ledger's times a run is priced with (seconds)."""

    prefill: Callable[[int, int], Fraction]  # (sequences, tokens each) -> one pass
    # batch -> (the step at a mean context of input_tokens, its growth per context token):
    # a decode step is affine in its mean context at a given batch (the KV read grows with it)
    decode: Callable[[int], tuple[Fraction, Fraction]]

    def step(self, batch: int, mean_context: Fraction, inputs: int) -> Fraction:
        """One decode step of `batch` sequences at `mean_context`."""
        at_inputs, growth = self.decode(batch)
        return at_inputs + growth * (mean_context - inputs)


@dataclass(eq=False)
class _Seq:
    """One request in the engine."""

    client: int
    sent: Fraction
    context: int
    priority: int = 0
    held: int = 0  # blocks
    running: bool = False
    emitted: int = 0
    first: Fraction | None = None


@dataclass
class _Queue:
    """Requests sent and not yet taken: (iteration whose end sent it, request)."""

    sent: list[tuple[int, _Seq]]
    taken: int = 0  # priorities given so far

    def take(self, iteration: int, idle: bool) -> list[_Seq]:
        """The requests the engine takes at the top of `iteration` (module docstring)."""
        ready = [s for k, s in self.sent if k <= iteration - 2]
        if not ready and idle and self.sent:
            ready = [self.sent[0][1]]
        self.sent = [(k, s) for k, s in self.sent if s not in ready]
        for seq in ready:
            seq.priority, self.taken = self.taken, self.taken + 1
        return ready


def _materialize(held: list[_Seq], pool: Pool) -> list[_Seq]:
    """Blocks for the next step in priority order; the sequences admitted or readmitted."""
    free = pool.blocks - sum(s.held for s in held)
    last, admitted = len(held), []
    index = 0
    while index < last:
        seq = held[index]
        need = max(0, -(-(seq.context + 1) // pool.block) - seq.held)
        if need > free:
            victims, back = _victims(held, index, last, need - free)
            if victims is not None:
                free += sum(_preempt(v) for v in victims)
                last = back + 1
        if need <= free:
            free -= need
            seq.held += need
            if not seq.running:
                admitted.append(seq)
            seq.running = True
        elif seq.running:  # it cannot grow: preempted itself
            free += _preempt(seq)
        index += 1
    for seq in held[last:]:
        free += _preempt(seq)
    return admitted


def _victims(held: list[_Seq], index: int, last: int, short: int) -> tuple[list[_Seq] | None, int]:
    """The running sequences after `index`, from the back, whose blocks cover `short`.

    (None, _) when all of them do not; else the victims and the index of the last one.
    """
    victims: list[_Seq] = []
    freed, back = 0, last - 1
    while freed < short and back > index:
        if held[back].running:
            victims.append(held[back])
            freed += held[back].held
        back -= 1
    return (victims, back) if freed >= short else (None, back)


def _preempt(seq: _Seq) -> int:
    """A running sequence's blocks taken (its KV lost); the blocks freed (0 if not running)."""
    if not seq.running:
        return 0
    freed, seq.held, seq.running = seq.held, 0, False
    return freed


def _prefill(admitted: list[_Seq], inputs: int, prices: Prices) -> Fraction:
    """New sequences as one pass over input_tokens - 1 each; readmitted ones a pass each."""
    new = [s for s in admitted if s.emitted == 0]
    time = prices.prefill(len(new), inputs - 1) if new and inputs > 1 else Fraction(0)
    for seq in admitted:
        if seq.emitted and seq.context > 1:
            time += prices.prefill(1, seq.context - 1)
    return time


def simulate_static(
    batch: int,
    rounds: int,
    inputs: int,
    outputs: int,
    pool: Pool,
    prices: Prices,
    quiet: bool = True,
) -> RunResult:
    """The benchmark's B x rounds requests through the engine (module docstring).

    `quiet` runs the steps between events in closed form (`_quiet_steps`); False runs
    every iteration in full (tests/ledger/test_turbomind_run.py holds the two equal).
    """
    if min(batch, rounds, inputs, outputs) < 1:
        raise ValueError("batch, rounds, input and output tokens must be at least 1")
    if pool.blocks < pool.held(inputs + outputs):
        raise ValueError(f"a pool of {pool.blocks} blocks holds no whole sequence")
    queue = _Queue([(-1, _Seq(c, Fraction(0), inputs)) for c in range(batch)])
    left = [rounds - 1] * batch
    held: list[_Seq] = []
    done: list[tuple[_Seq, Fraction]] = []
    now, iteration, work = Fraction(0), 0, 0
    while held or queue.sent:
        held += queue.take(iteration, idle=not held)
        work += len(held)
        if work > MAX_GROUP_STEPS:
            raise ValueError(f"the run needs more than {MAX_GROUP_STEPS:,} group-steps to simulate")
        admitted = _materialize(held, pool)
        running = [s for s in held if s.running]
        if running:
            mean = Fraction(sum(s.context for s in running), len(running))
            now += _prefill(admitted, inputs, prices) + prices.step(len(running), mean, inputs)
        for seq in running:
            seq.context += 1
            seq.emitted += 1
            if seq.first is None:
                seq.first = now
            if seq.emitted >= outputs:
                held.remove(seq)
                done.append((seq, now))
                if left[seq.client]:
                    left[seq.client] -= 1
                    queue.sent.append((iteration, _Seq(seq.client, now, inputs)))
        iteration += 1
        if quiet and not queue.sent:
            skipped, now = _quiet_steps(held, (inputs, outputs), pool, prices, now)
            iteration += skipped
            work += skipped
    return _result(done, now, iteration, outputs, batch * rounds, work)


def _quiet_steps(
    held: list[_Seq], lengths: tuple[int, int], pool: Pool, prices: Prices, now: Fraction
) -> tuple[int, Fraction]:
    """The decode steps before the next event, run without scheduling; (steps, time).

    With no request queued, an iteration changes the schedule only when a running
    sequence needs a new block or finishes: until then every iteration is one decode step
    of the same sequences (Materialize gives no block and preempts nobody), each at its
    own mean context, one token more a step; the affine step sums in closed form. The
    step of the event itself is left to the full iteration.
    """
    inputs, outputs = lengths
    running = [s for s in held if s.running]
    if not running or _could_admit(held, pool):
        return 0, now
    quiet = min(min(outputs - s.emitted, s.held * pool.block - s.context) for s in running)
    steps = max(0, quiet - 1)
    if steps:
        at_inputs, growth = prices.decode(len(running))
        mean = Fraction(sum(s.context for s in running), len(running))
        now += steps * at_inputs + growth * (
            steps * (mean - inputs) + Fraction(steps * (steps - 1), 2)
        )
    for seq in running:
        seq.context += steps
        seq.emitted += steps
    return steps, now


def _could_admit(held: list[_Seq], pool: Pool) -> bool:
    """Whether a waiting sequence's blocks are free, or held by running ones it may preempt.

    A sequence cut off by a preemption waits one iteration with its blocks free; a waiting
    one of higher priority than running ones may preempt them. Either is an event.
    """
    free = pool.blocks - sum(s.held for s in held)
    below = 0
    for seq in reversed(held):
        if seq.running:
            below += seq.held
        elif pool.held(seq.context + 1) <= free + below:
            return True
    return False


def _result(
    done: list[tuple[_Seq, Fraction]],
    now: Fraction,
    steps: int,
    outputs: int,
    requests: int,
    work: int,
) -> RunResult:
    """Per-request times, each from its send."""
    ttfts, tpots, latencies = [], [], []
    for seq, finish in done:
        assert seq.first is not None  # a request finishes only after its first token
        ttfts.append(seq.first - seq.sent)
        if outputs > 1:
            tpots.append((finish - seq.first) / (outputs - 1))
        latencies.append(finish - seq.sent)
    return RunResult(
        tuple(ttfts), tuple(tpots), tuple(latencies), now, steps, outputs, requests, (), work
    )
