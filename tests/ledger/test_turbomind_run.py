"""LMDeploy's static benchmark through TurboMind's KV block pool (end-to-end.json `turbomind_pool`).

kb.ledger.turbomind_run runs B threads x `rounds` requests through TurboMind v0.1.0a1's
block schedule. Held here: with a pool that holds every whole sequence the run is the
first_token round rule plus what that rule says it leaves out (the first request's wait
for the others' last step in later rounds), exactly; small runs past the pool worked
by hand (a request waiting for blocks, a sequence that cannot grow waiting with its
blocks, a preempted or waiting sequence keeping its head and recomputing its tail); the
closed-form quiet steps equal every iteration run in full, on a grid of pools that
force waiting and preemption (KB_FULL=1 adds two shipped-size 13B runs).
"""

from __future__ import annotations

import itertools
import json
import os
from fractions import Fraction as F
from pathlib import Path

import pytest

from kb.ledger.paged_run import Pool
from kb.ledger.turbomind_run import Prices, simulate_static


def _prefill(sequences: int, tokens: int) -> F:
    return F(sequences * tokens, 1000) + F(1, 100)


def _flat(batch: int) -> tuple[F, F]:
    """A decode step that does not grow with the context."""
    return F(10) + F(batch, 10), F(0)


def _growing(batch: int) -> tuple[F, F]:
    """A decode step whose KV read grows with the context."""
    return F(10) + F(batch, 10), F(batch, 1000)


@pytest.mark.parametrize(
    ("batch", "inputs", "outputs"), [(1, 128, 128), (16, 128, 128), (16, 2048, 128), (32, 1, 128)]
)
def test_a_pool_that_holds_the_batch_is_the_round_rule_and_the_last_step_it_leaves_out(
    batch: int, inputs: int, outputs: int
) -> None:
    prices = Prices(_prefill, _flat)
    run = simulate_static(batch, 6, inputs, outputs, Pool(10**6, 128), prices)
    alone = (_prefill(1, inputs - 1) if inputs > 1 else 0) + _flat(1)[0]
    rest = (_prefill(batch - 1, inputs - 1) if inputs > 1 else 0) + _flat(batch)[0]
    round_rule = alone + F(batch - 1, batch) * rest if batch > 1 else alone
    # In rounds 2..6 the round's first request was sent one step before the others
    # finished, and waits for that step (decode at batch B - 1) before it runs alone.
    left_out = F(5, 6) * F(1, batch) * _flat(batch - 1)[0] if batch > 1 else 0
    assert run.statistic(run.ttfts, "mean") == round_rule + left_out
    assert len(run.ttfts) == batch * 6


def test_a_request_the_pool_cannot_hold_waits_for_the_one_ahead_to_finish() -> None:
    # Blocks of 4 tokens, 2 blocks: one whole 4 + 4 token sequence. A runs alone (it came
    # first); B, taken the next iteration, finds no block and waits until A finishes.
    prices = Prices(_prefill, _flat)
    run = simulate_static(2, 1, 4, 4, Pool(2, 4), prices)
    p, d = _prefill(1, 3), _flat(1)[0]
    assert sorted(run.ttfts) == [p + d, (p + d) + 3 * d + (p + d)]
    assert run.statistic(run.ttfts, "mean") == (3 * p + 6 * d) / 2


def test_a_sequence_that_cannot_grow_waits_with_its_blocks_and_recomputes_nothing() -> None:
    # Blocks of 4 tokens, 5 blocks; 4 + 8 token sequences need 3 blocks by the end. A
    # (alone) and B (the next iteration) start with 2 blocks each; A takes the free one
    # for its 9th token; B then needs a third for its 9th and, last in priority, has no
    # one below to take it from: it waits after 4 outputs, its 2 blocks locked
    # (turbomind_kept_prefix (3)). A finishes alone; B takes a freed block and runs its
    # other 4 outputs with nothing to prefill again.
    prices = Prices(_prefill, _flat)
    run = simulate_static(2, 1, 4, 8, Pool(5, 4), prices)
    p, d, d2 = _prefill(1, 3), _flat(1)[0], _flat(2)[0]
    first_a, together = p + d, p + d2
    assert sorted(run.ttfts) == [first_a, first_a + together]
    a_finish = first_a + together + 3 * d2 + 3 * d  # outputs 2-4 at batch 2, 5-8 alone
    assert min(run.latencies) == a_finish
    assert max(run.latencies) == a_finish + d + 3 * d


def test_a_preempted_sequence_keeps_its_head_and_recomputes_its_tail() -> None:
    # Blocks of 4 tokens, 6 blocks; 4 + 12 token sequences need 4 blocks by the end. A
    # and B hold 3 blocks each when A, before its 9th output (context 12), needs a 4th:
    # B (7 outputs, context 11, 10 tokens cached) is the victim, and only the one block
    # the schedule needs is evicted, B's last: B keeps 2 blocks, 8 tokens. A finishes
    # alone; B takes one freed block and prefills the 3 tokens it misses less the one
    # left to the decoder: 2/10 of its pass over 10 tokens; then its last 5 outputs.
    prices = Prices(_prefill, _flat)
    run = simulate_static(2, 1, 4, 12, Pool(6, 4), prices)
    p, d, d2 = _prefill(1, 3), _flat(1)[0], _flat(2)[0]
    a_finish = (p + d) + (p + d2) + 6 * d2 + 4 * d  # outputs 3-8 at batch 2, 9-12 alone
    assert min(run.latencies) == a_finish
    assert max(run.latencies) == a_finish + _prefill(1, 10) * F(2, 10) + 5 * d


def test_a_waiting_sequence_s_blocks_are_taken_from_its_tail() -> None:
    # As above with 5 blocks: B waits after 4 outputs holding 2 blocks (7 tokens cached);
    # A, needing its 4th block before its 9th output, takes one of B's (turbomind_kept_
    # prefix (4)), B's last: B keeps 1 block, 4 tokens. When A finishes, B takes 2 blocks
    # and recomputes 8 - 4 - 1 = 3 of its 7 tokens, then its last 8 outputs.
    prices = Prices(_prefill, _flat)
    run = simulate_static(2, 1, 4, 12, Pool(5, 4), prices)
    p, d, d2 = _prefill(1, 3), _flat(1)[0], _flat(2)[0]
    a_finish = (p + d) + (p + d2) + 3 * d2 + 7 * d  # outputs 3-5 at batch 2, 6-12 alone
    assert min(run.latencies) == a_finish
    assert max(run.latencies) == a_finish + _prefill(1, 7) * F(3, 7) + 8 * d


def test_a_victim_that_loses_every_block_is_prefilled_again_in_full() -> None:
    # As above with 4 blocks: B, 3 outputs in (context 7), is A's victim for A's 3rd
    # block and keeps 1 block (4 tokens); for A's 4th, B (waiting) gives up that one too.
    # When A finishes, B takes 2 blocks and prefills its whole context less one token (6).
    prices = Prices(_prefill, _flat)
    run = simulate_static(2, 1, 4, 12, Pool(4, 4), prices)
    p, d, d2 = _prefill(1, 3), _flat(1)[0], _flat(2)[0]
    a_finish = (p + d) + (p + d2) + 2 * d2 + 8 * d  # outputs 3-4 at batch 2, 5-12 alone
    assert min(run.latencies) == a_finish
    assert max(run.latencies) == a_finish + _prefill(1, 6) + 9 * d


def _grid() -> list[tuple[int, int, int, int, int]]:
    small = itertools.product((2, 3, 5), (1, 2), (1, 4, 9), (3, 8), (4, 7, 12))
    return [(b, r, i, o, blocks) for b, r, i, o, blocks in small if blocks * 4 >= i + o]


@pytest.mark.parametrize(("batch", "rounds", "inputs", "outputs", "blocks"), _grid())
def test_the_quiet_steps_are_the_full_iterations(
    batch: int, rounds: int, inputs: int, outputs: int, blocks: int
) -> None:
    prices = Prices(_prefill, _growing)
    pool = Pool(blocks, 4)
    fast = simulate_static(batch, rounds, inputs, outputs, pool, prices)
    full = simulate_static(batch, rounds, inputs, outputs, pool, prices, quiet=False)
    assert (fast.ttfts, fast.latencies, fast.duration, fast.steps) == (
        full.ttfts,
        full.latencies,
        full.duration,
        full.steps,
    )


@pytest.mark.skipif(not os.environ.get("KB_FULL"), reason="KB_FULL=1: shipped-size runs")
@pytest.mark.parametrize(("batch", "inputs", "outputs"), [(32, 128, 2048), (64, 2048, 128)])
def test_the_quiet_steps_are_the_full_iterations_at_shipped_sizes(
    batch: int, inputs: int, outputs: int
) -> None:
    # Two 13B rows past the 500-block pool (rows 25 and 37 of the shipped receipt's
    # shapes); the full path of the batch-64 2048/2048 row passes the group-step bound.
    prices = Prices(_prefill, _growing)
    pool = Pool(500, 128)
    fast = simulate_static(batch, 6, inputs, outputs, pool, prices)
    full = simulate_static(batch, 6, inputs, outputs, pool, prices, quiet=False)
    assert (fast.ttfts, fast.duration, fast.steps) == (full.ttfts, full.duration, full.steps)


def test_a_pool_that_holds_no_whole_sequence_is_refused() -> None:
    with pytest.raises(ValueError, match="holds no whole sequence"):
        simulate_static(2, 1, 8, 8, Pool(3, 4), Prices(_prefill, _flat))


def test_the_pools_are_the_benchmark_scripts() -> None:
    data = json.loads(
        (Path(__file__).resolve().parents[2] / "kb" / "data" / "end-to-end.json").read_text()
    )
    entry = data["turbomind_pool"]
    pools = {r.rsplit("/", 1)[1]: e for r, e in entry["receipts"].items()}
    assert pools["lmdeploy-llama-2-7b-a100-tp1-static"]["blocks"] == 1000
    assert pools["lmdeploy-llama-2-13b-a100-tp1-static"]["blocks"] == 500
    assert pools["lmdeploy-llama-2-70b-a100-tp4-static"]["blocks"] == 4000
    assert all(e["block_tokens"] == 128 and e["rounds"] == 6 for e in pools.values())
    assert "cache_max_entry_count 500" in pools["lmdeploy-llama-2-13b-a100-tp1-static"]["source"]
    assert "before any row was priced with it" in entry["reason"]
    assert any("BlockManager.cc" in s for s in entry["sources"])
