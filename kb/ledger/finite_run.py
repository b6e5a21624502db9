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
  (chunked prefill, vLLM V1's scheduler), or, unchunked, only whole prompts while the
  next one fits (`_prompt_chunks`' `chunked`, TensorRT-LLM without context chunking);
- a step of b decodes and p prompt tokens takes `t_dec(b) + D(p)`, or
  `L*t_o + D(p)` with no decode: t_dec linear in b between the composed decode
  steps at batch 1 and batch C, L*t_o the per-layer overhead a step pays once, and
  D(p) the step's prompt tokens as ONE pass (`step_prompt_pass`, session 26,
  `prompt_time`): D(k*I) = the composed pass of k prompts less L*t_o (the weights
  read once, the matmuls at M = k*I, each prompt's attention at I, the all-reduces on
  k*I tokens), linear in p between whole prompts, D(0) = 0; so D(p) = p/I * d_s for
  p <= I, d_s the mixed scheduler's share of one prompt's pass (serving.py), the rule
  until session 26 (`linear_passes`, which the tests still step);
- a request's first token is emitted at the end of the step that completes its prompt,
  each later token one step later; its clock starts when it is sent.

Every time is the composed ledger's (the caller prices t_dec and the prompt's pass);
nothing is fitted. This module holds the rule's parts (a request group, the prompt
chunks of a step, the decode step's time, the result and its statistics, the bound);
the rule's one simulator is kb.ledger.run_by_step.simulate (numbers in, a `RunResult`
out; integer time units, decode steps counted at once; ValueError on inputs the rule
cannot run: no client, no prompt, a budget below the clients, a negative time; and
RunTooLong on a run longer than MAX_GROUP_STEPS to simulate, counted, so the refusal
never depends on the machine). The group-by-group stepping it replaced is kept as the
tests' oracle (tests/ledger/grouped_run.py, held equal to it, its group-steps count
included, by tests/ledger/test_run_by_step.py; and to the per-request rule by
tests/ledger/test_finite_run_groups.py).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Generic, TypeVar

from kb.ledger.scaled import Scaled

STATISTICS = ("mean", "median")
MAX_GROUP_STEPS = 2_000_000  # live request groups summed over the steps simulated

Time = TypeVar("Time", Fraction, int)  # seconds, or kb.ledger.run_by_step's integer units


@dataclass
class _Group(Generic[Time]):
    """Requests in one state: sent together, prefilled and emitting together."""

    count: int
    arrival: Time
    prompt_left: int
    emitted: int = 0
    first: Time | None = None

    def split(self, count: int) -> _Group[Time]:
        """The first `count` of these requests, as a group of their own, taken from this one."""
        self.count -= count
        return _Group(count, self.arrival, self.prompt_left, self.emitted, self.first)


@dataclass(frozen=True)
class RunResult:
    """Per-request times of the run and its duration (seconds)."""

    ttfts: Sequence[Fraction]  # a tuple, or kb.ledger.scaled.Scaled (integers over one unit)
    tpots: Sequence[Fraction]  # (finish - first token)/(O - 1); empty when O = 1
    latencies: Sequence[Fraction]  # finish - arrival
    duration: Fraction  # the last request's finish
    steps: int
    output_tokens: int
    requests: int
    notes: tuple[str, ...] = field(default=())
    group_steps: int = 0  # live groups summed over the steps (what MAX_GROUP_STEPS bounds)

    def statistic(self, values: Sequence[Fraction], which: str) -> Fraction:
        """The mean or the median of `values` (integer arithmetic for Scaled values).

        The median of an even count is the mean of the two middle values, as numpy's,
        which vllm bench serve prints.
        """
        if which not in STATISTICS:
            raise ValueError(f"statistic {which!r}: expected one of {', '.join(STATISTICS)}")
        if not values:
            raise ValueError("no values")
        if isinstance(values, Scaled):
            return values.mean() if which == "mean" else values.median()
        if which == "mean":
            return exact_mean(values)
        return Fraction(statistics.median(values))

    @property
    def output_rate(self) -> Fraction:
        """N*O / duration: the benchmark's output token throughput (1/s)."""
        return Fraction(self.requests * self.output_tokens) / self.duration


def exact_mean(values: Sequence[Fraction]) -> Fraction:
    """sum(values) / len(values), exactly, its numerators summed as integers per denominator.

    A run's times share a few denominators (its steps' common unit), so this adds integers
    where a sum of Fractions would reduce a fraction at each term; the result is the same
    Fraction (tests/ledger/test_finite_run.py holds it equal to the sum on runs' values).
    """
    numerators: dict[int, int] = {}
    for value in values:
        numerators[value.denominator] = numerators.get(value.denominator, 0) + value.numerator
    total = sum((Fraction(n, d) for d, n in numerators.items()), Fraction(0))
    return total / len(values)


Passes = Callable[[int], Fraction]  # k -> D(k*I): k prompts' composed pass less L*t_o


def linear_passes(stall: Fraction) -> Passes:
    """D(k*I) = k * d_s: every prompt its own pass (the step rule until session 26)."""
    return lambda k: k * stall


def prompt_time(tokens: int, inputs: int, passes: Passes) -> Fraction:
    """D(p): a step's `tokens` prompt tokens as one pass (end-to-end.json `step_prompt_pass`).

    `passes(k)` is D at k whole prompts of `inputs` tokens; between whole prompts D is
    linear in the tokens, and D(0) = 0.
    """
    whole, rest = divmod(tokens, inputs)
    below = passes(whole) if whole else Fraction(0)
    if not rest:
        return below
    return below + (passes(whole + 1) - below) * rest / inputs


def decode_step(batch: int, clients: int, at_one: Fraction, at_clients: Fraction) -> Fraction:
    """t_dec(b): linear in b between the composed steps at batch 1 and batch C."""
    if clients <= 1:
        return at_one
    return at_one + (at_clients - at_one) * (batch - 1) / (clients - 1)


class RunTooLong(ValueError):
    """A run past MAX_GROUP_STEPS: the simulator's bound, not the run's physics."""


def _within_bound(group_steps: int) -> None:
    """RunTooLong once the simulation has counted more than MAX_GROUP_STEPS."""
    if group_steps > MAX_GROUP_STEPS:
        raise RunTooLong(f"the run needs more than {MAX_GROUP_STEPS:,} group-steps to simulate")


def group_steps_floor(requests: int, input_tokens: int, output_tokens: int, budget: int) -> int:
    """A lower bound on the group-steps `simulate` counts for such a run, found without it.

    A group of requests whose whole prompt is still to prefill completes it in one step
    only as far as the budget holds whole prompts (`_prompt_chunks`: at most
    budget // input_tokens of them), and a prompt prefilled over several steps is one
    request's group; groups never merge. So once prefilled each request is in a group of
    at most max(1, budget // input_tokens) requests, and each such group is live for the
    output_tokens - 1 steps after its first token. tests/ledger/test_finite_run.py holds
    the bound under the counted group-steps of simulated runs.
    """
    most = max(1, budget // input_tokens)
    return -(-requests // most) * (output_tokens - 1)


def _prompt_chunks(
    live: list[_Group[Time]], room: int, chunked: bool = True
) -> list[tuple[_Group[Time], int]]:
    """The prompt tokens of this step, in arrival order, within `room` (chunked prefill).

    A group the budget covers only in part is split in place: the requests whose whole
    remaining prompt fits, then one with the rest of the room, then the ones left waiting;
    so every request is treated as the per-request rule treats it, in the same order.
    `chunked` False takes whole prompts only: the first prompt that does not fit whole
    ends the step's prompts (TensorRT-LLM's scheduler without context chunking,
    kb/data/end-to-end.json `trtllm_bench_run.prefill`).
    """
    chunks: list[tuple[_Group[Time], int]] = []
    index = 0
    while index < len(live) and room > 0:
        group = live[index]
        if group.prompt_left:
            whole = min(group.count, room // group.prompt_left)
            if whole < group.count:
                if whole:
                    live.insert(index, group.split(whole))
                    index += 1
                    chunks.append((live[index - 1], live[index - 1].prompt_left))
                    room -= whole * group.prompt_left
                if room and chunked:  # one request takes the rest of the room; the others wait
                    part = group.split(1) if group.count > 1 else group
                    if part is not group:
                        live.insert(index, part)
                    chunks.append((part, room))
                break
            chunks.append((group, group.prompt_left))
            room -= group.count * group.prompt_left
        index += 1
    return chunks
