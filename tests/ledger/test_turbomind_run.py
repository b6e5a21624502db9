"""LMDeploy's static benchmark through TurboMind's KV block pool (end-to-end.json `turbomind_pool`).

kb.ledger.turbomind_run runs B threads x `rounds` requests through TurboMind v0.1.0a1's
block schedule. Held here: with a pool that holds every whole sequence the run is the
first_token round rule plus what that rule says it leaves out (the first request's wait
for the others' last step in later rounds), exactly; two small runs past the pool worked
by hand (a request waiting for blocks, a sequence preempted and prefilled again); the
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


def test_a_sequence_preempted_is_prefilled_again_with_its_outputs() -> None:
    # Blocks of 4 tokens, 5 blocks; 4 + 8 token sequences need 3 blocks by the end. A
    # (alone) and B (the next iteration) start with 2 blocks each; A takes the free one
    # for its 9th token; B then needs a third for its 9th and, last in priority, is
    # preempted after 4 outputs. A finishes alone; B runs again: a pass over its prompt
    # and 4 outputs less the token left to the decoder (7), then its other 4 outputs.
    prices = Prices(_prefill, _flat)
    run = simulate_static(2, 1, 4, 8, Pool(5, 4), prices)
    p, d, d2 = _prefill(1, 3), _flat(1)[0], _flat(2)[0]
    first_a, together = p + d, p + d2
    assert sorted(run.ttfts) == [first_a, first_a + together]
    a_finish = first_a + together + 3 * d2 + 3 * d  # outputs 2-4 at batch 2, 5-8 alone
    assert min(run.latencies) == a_finish
    assert max(run.latencies) == a_finish + _prefill(1, 7) + d + 3 * d


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
