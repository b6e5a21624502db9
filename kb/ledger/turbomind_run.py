"""LMDeploy's static benchmark through TurboMind's KV block pool (issue 35, sessions 19, 22).

kb/data/end-to-end.json `turbomind_pool` declares the rule; this module runs it. B
threads each send `rounds` identical requests one after another (profile_generation.py);
the engine (TurboMind at v0.1.0a1) runs iterations, each:

- at its top, takes the requests queued (one sent when iteration k ends is taken at the
  top of k + 2; an engine holding no sequence blocks and takes the first one sent
  alone), giving each the next priority;
- gives every sequence it holds, in priority order, the blocks for its context + 1
  tokens; when the free blocks fall short, takes them from the sequences holding blocks
  (running or waiting) from the back (lowest priority) until they suffice, and every
  sequence after the last one taken from waits; a sequence the blocks cannot cover even
  so waits, its blocks locked. A victim's blocks are evicted only as the schedule needs
  them, its tail first (`turbomind_kept_prefix`): it keeps its head's KV;
- prefills each new sequence over its input_tokens - 1 tokens and each readmitted one
  over the tokens it misses less one, then runs one decode step of every running
  sequence, which emits a token each.

Times are the caller's (`Prices`): kb's composed prefill pass and decode step.
Pure: numbers in, a `RunResult` out; ValueError on a run it cannot price (a pool that
holds no whole sequence, a run longer than MAX_GROUP_STEPS sequence-steps).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
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
    held: int = 0  # blocks: a running sequence's, a waiting one's (locked), a victim's head
    kept: int = 0  # tokens whose KV a sequence not running keeps (its cache length)
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


@dataclass
class _Schedule:
    """Materialize's schedule (SequenceManager.cc Schedule and Transaction), by index."""

    free: int
    last: int
    cached: int = 0  # victims' blocks not evicted yet
    evict: int = 0
    active: list[int] = field(default_factory=list)
    victims: list[_Seq] = field(default_factory=list)

    def transact(self, held: list[_Seq], index: int, need: int) -> None:
        """Transaction::Process: `need` blocks from the free, the cache, then victims."""
        count = need
        allocate = min(self.free, count)
        count -= allocate
        evict = min(self.cached, count)
        count -= evict
        victims: list[_Seq] = []
        preempt, vidx = 0, self.last - 1
        while count and vidx > index:
            victims.append(held[vidx])
            preempt += held[vidx].held
            if count <= preempt:
                evict, count, self.last = evict + count, 0, vidx
                break
            vidx -= 1
        if count:  # not committed: the sequence waits
            return
        self.free -= allocate
        self.cached += preempt - evict
        self.evict += evict
        self.victims += victims
        self.active.append(index)


def _materialize(held: list[_Seq], pool: Pool) -> list[_Seq]:
    """Blocks for the next step in priority order; the sequences admitted or readmitted."""
    needs = [max(0, pool.held(s.context + 1) - s.held) for s in held]
    plan = _Schedule(pool.blocks - sum(s.held for s in held), len(held))
    index = 0
    while index < plan.last:
        plan.transact(held, index, needs[index])
        index += 1
    _evict(plan, pool)
    active, admitted = set(plan.active), []
    for index, seq in enumerate(held):
        if index not in active:
            _stop(seq)  # waits, its blocks locked (a victim's already cut)
            continue
        seq.held += needs[index]
        if not seq.running:
            admitted.append(seq)
        seq.running = True
    return admitted


def _evict(plan: _Schedule, pool: Pool) -> None:
    """The victims' blocks cached, stamped in order each from its last; the oldest evicted.

    So the first victim loses its tail, then its head, before the next loses any; a
    victim keeps the tokens its remaining blocks hold (VerifyAndLockCached).
    """
    evict = plan.evict
    for seq in plan.victims:
        _stop(seq)
        lost = min(evict, seq.held)
        seq.held, evict = seq.held - lost, evict - lost
        seq.kept = min(seq.kept, seq.held * pool.block)


def _stop(seq: _Seq) -> None:
    """A running sequence stops: it keeps the KV of all but its last token."""
    if seq.running:
        seq.kept, seq.running = seq.context - 1, False


def _prefill(admitted: list[_Seq], inputs: int, prices: Prices) -> Fraction:
    """New sequences as one pass over input_tokens - 1 each; a readmitted one its missing share.

    A readmitted sequence misses context - kept tokens and recomputes all but the one
    left to the decoder: that share of its whole pass over context - 1 tokens.
    """
    new = [s for s in admitted if s.emitted == 0]
    time = prices.prefill(len(new), inputs - 1) if new and inputs > 1 else Fraction(0)
    for seq in admitted:
        missing = seq.context - seq.kept
        if seq.emitted and missing > 1:
            whole = seq.context - 1
            time += prices.prefill(1, whole) * Fraction(missing - 1, whole)
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
    """Whether a waiting sequence's missing blocks are free, or held by ones it may take them from.

    A waiting sequence may take the blocks of every lower-priority sequence (running or
    waiting); this asks of all of them, so it errs only towards running an iteration in full.
    """
    free = pool.blocks - sum(s.held for s in held)
    below = 0
    for seq in reversed(held):
        if not seq.running and pool.held(seq.context + 1) - seq.held <= free + below:
            return True
        below += seq.held
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
