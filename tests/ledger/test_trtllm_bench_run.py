"""A trtllm-bench maximum-load row is a run of N requests (end-to-end.json `trtllm_bench_run`).

TensorRT-LLM's v1.0 perf overview runs `trtllm-bench throughput` over the page's
$num_requests per input/output length, every request queued at once, at most C in
flight, and reports N x O / the run's total latency. kb prices those rows with
finite_run's rule (C clients, N requests) at trtllm-bench's own max_num_tokens, stepped
by kb.ledger.run_by_step at the declared time resolution. These tests hold the rule to
its declaration and its sources, the receipts to the page's table, and the resolution
to the exact run (two rows per push; every row under KB_FULL=1).
"""

from __future__ import annotations

import functools
import json
import os
from fractions import Fraction
from pathlib import Path

import pytest

from kb.ledger import trtllm_bench
from kb.ledger.endtoend import RowResult, evaluate_row
from kb.model import KnowledgeBase
from tests.shipped_outputs import ONE_WORKER, end_to_end_results

DATA = Path(__file__).resolve().parents[2] / "kb" / "data" / "end-to-end.json"
ENGINE, VERSION = "engines/tensorrt-llm", "1.0 release line (exact build not stated)"
V020 = "0.20 (the release's documentation; exact build not stated)"
V020_RECEIPTS = (
    "receipts/trtllm-v0.20-llama-3.3-70b-throughput-b200-tp1-8",
    "receipts/trtllm-v0.20-llama-3.1-405b-throughput-b200-tp4-8",
)
RECEIPTS = (
    "receipts/trtllm-v1.0-llama-3.1-405b-throughput-h100-h200",
    "receipts/trtllm-v1.0-llama-3.1-8b-throughput-h100-h200",
    "receipts/trtllm-v1.0-llama-3.3-70b-throughput-h100-h200-b200",
    "receipts/trtllm-v1.0-llama-4-maverick-throughput-h100-h200-b200",
    "receipts/trtllm-v1.0-llama-4-scout-throughput-h100-h200-b200",
    "receipts/trtllm-v1.0-qwen3-235b-a22b-throughput-h100-h200-b200",
    "receipts/trtllm-v1.0-llama-3.1-405b-throughput-b200",
)
# The page's "$num_requests" table (sources/trtllm-perf-overview-v1.0, 'Preparing a Dataset').
NUM_REQUESTS = {
    (128, 128): 30000,
    (128, 2048): 3000,
    (128, 4096): 1500,
    (1000, 2000): 1500,
    (2048, 128): 3000,
    (2048, 2048): 1500,
    (5000, 500): 1500,
    (1000, 1000): 3000,
    (500, 2000): 3000,
    (20000, 2000): 1000,
}


def test_the_rule_is_declared_from_the_benchmark_method_and_code() -> None:
    entry = json.loads(DATA.read_text())["trtllm_bench_run"]
    assert entry[ENGINE]["versions"] == [VERSION, V020]
    assert "before any row was priced" in entry["reason"]
    sources = " ".join(entry["sources"])
    for cited in ("perf-overview", "tuning.py", "throughput.py"):
        assert cited in sources
    assert trtllm_bench.versions() == {ENGINE: (VERSION, V020)}
    assert "femtosecond" in entry["resolution"]
    assert Fraction(1, 10**15) == trtllm_bench.RESOLUTION


@pytest.mark.parametrize(
    ("batch", "inputs", "outputs", "pp", "tokens"),
    [
        (1272, 128, 2048, 1, 2048),  # 1351.5 raw: the 2048 floor
        (2204, 128, 128, 1, 4608),  # 4408 raw: steps of 512
        (4096, 128, 128, 1, 8192),  # 8192 raw: steps of 1024
        (9000, 128, 128, 1, 8192),  # the batch capped at 4096 first
        (4096, 20000, 2000, 1, 32768),  # 45056 raw: capped at 32768
        (1000, 1000, 1000, 2, 2048),  # pp halves the batch: 1000 raw
        (3000, 1000, 1000, 1, 6144),  # 6000 raw: steps of 512
        (207, 5000, 500, 1, 2304),  # 2277 raw: steps of 256 above the floor
    ],
)
def test_the_budget_is_trtllm_bench_finetune_setting(
    batch: int, inputs: int, outputs: int, pp: int, tokens: int
) -> None:
    assert trtllm_bench.max_num_tokens(batch, inputs, outputs, pp) == tokens


def test_the_receipts_state_the_pages_request_counts(shipped: KnowledgeBase) -> None:
    seen = 0
    for rid in RECEIPTS:
        record = shipped.get(rid)
        assert record is not None
        assert record.get("engine.version") == VERSION
        for row in record.data["results"]:
            assert row["load"] == "maximum"
            assert row["prompts"] == NUM_REQUESTS[(row["input_tokens"], row["output_tokens"])]
            seen += 1
    assert seen == 74


def _row(shipped: KnowledgeBase, rid: str, index: int, **change: object) -> RowResult:
    record = shipped.get(rid)
    assert record is not None
    row = {**record.data["results"][index], **change}
    row = {k: v for k, v in row.items() if v is not None}
    return evaluate_row(shipped, record, index, row, False)


def test_a_row_is_priced_as_the_run_and_without_its_count_as_one_batch(
    shipped: KnowledgeBase,
) -> None:
    run = _row(shipped, RECEIPTS[3], 0)  # Maverick, 8 x H100, 128/2048: N = 3000
    batch = _row(shipped, RECEIPTS[3], 0, prompts=None)
    assert any("a run of 3000 requests" in a for a in run.assumed)
    assert not any("a run of" in a for a in batch.assumed)
    assert run.predicted is not None and batch.predicted is not None
    assert run.predicted < batch.predicted


def test_only_a_declared_versions_maximum_load_rows_get_it() -> None:
    row = {"load": "maximum", "prompts": 3000}
    assert trtllm_bench.applies(ENGINE, VERSION, row, "output_tokens_per_s")
    assert not trtllm_bench.applies(ENGINE, "v0.9.0", row, "output_tokens_per_s")
    assert not trtllm_bench.applies("engines/vllm", VERSION, row, "output_tokens_per_s")
    assert not trtllm_bench.applies(ENGINE, VERSION, {"load": "maximum"}, "output_tokens_per_s")
    assert not trtllm_bench.applies(ENGINE, VERSION, {**row, "batch": 64}, "output_tokens_per_s")
    assert not trtllm_bench.applies(ENGINE, VERSION, row, "ttft")


def _verdicts(shipped: KnowledgeBase, cases: list[tuple[str, int]]) -> list[tuple[str, float]]:
    out = []
    for rid, index in cases:
        result = _row(shipped, rid, index)
        assert result.error is not None
        out.append((result.state, float(result.error)))
    return out


def _same_verdicts(
    shipped: KnowledgeBase, monkeypatch: pytest.MonkeyPatch, cases: list[tuple[str, int]]
) -> None:
    rounded = _verdicts(shipped, cases)
    exact = functools.partial(trtllm_bench.stepped_run, resolution=False)
    monkeypatch.setattr(trtllm_bench, "stepped_run", exact)
    for (state, error), (full_state, full_error) in zip(
        rounded, _verdicts(shipped, cases), strict=True
    ):
        assert state == full_state
        assert abs(error - full_error) < 1e-9


def test_the_resolution_gives_the_exact_runs_verdict(
    shipped: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    # premise: a short-run row (30000 x 128/128), a long one (1500 x 2048/2048), and a v0.20
    # row whose prompts wait for budget (405B TP8 5000/500 at v0.20.0's floor: 5120 tokens)
    cases = [(RECEIPTS[1], 0), (RECEIPTS[4], 7), (V020_RECEIPTS[1], 18)]
    _same_verdicts(shipped, monkeypatch, cases)


@pytest.mark.skipif(not os.environ.get("KB_FULL"), reason="KB_FULL=1 compares every row")
def test_the_resolution_gives_the_exact_runs_verdict_on_every_row(
    shipped: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = []
    for rid in (*RECEIPTS, *V020_RECEIPTS):  # every row the rule prices, v0.20's 54 too
        record = shipped.get(rid)
        assert record is not None
        rows = record.data["results"]
        cases += [(rid, i) for i, row in enumerate(rows) if "prompts" in row]
    assert len(cases) == 74 + 54
    _same_verdicts(shipped, monkeypatch, cases)


# TensorRT-LLM v0.20: declared `not_covered` in session 24 (priced as one static batch, with a
# note); priced as a run since session 25 (w25-v020c), at v0.20.0's own budget floor (V020).


def test_v020_is_covered_with_its_own_declared_floor() -> None:
    entry = json.loads(DATA.read_text())["trtllm_bench_run"]
    assert entry[ENGINE]["versions"] == [VERSION, V020]
    assert trtllm_bench.versions() == {ENGINE: (VERSION, V020)}
    floors = entry["budget_floor"]
    assert floors[ENGINE] == {VERSION: "always", V020: "below_longest_prompt"}
    assert trtllm_bench.floor(ENGINE, VERSION) == trtllm_bench.ALWAYS
    assert trtllm_bench.floor(ENGINE, V020) == trtllm_bench.BELOW_LONGEST_PROMPT
    declared = floors["declared"]
    assert "before any v0.20 row was priced under this rule" in declared
    assert "most likely v0.20.0, not the tag" in declared and "Expected, from the rule" in declared
    assert "the 54 run-shaped rows" in declared and "band +-25%" in declared
    forms = floors["forms"]
    assert "max_num_tokens < dataset_metadata.max_isl" in forms["below_longest_prompt"]
    assert "max(max_num_tokens, dataset_metadata.max_isl + max_batch_size)" in forms["always"]
    sources = " ".join(floors["sources"])
    for cited in ("Ataraksia/TensorRT-LLM/blob/a451bf93", "0171265e", "pull/5625", "v0.20"):
        assert cited in sources
    # no version is left not covered; session 24's note is kept, quoted, in `applies_to`
    assert trtllm_bench.not_covered() == {ENGINE: {}}
    assert "its note read: 'not priced as a trtllm-bench run" in entry["not_covered"]["applies_to"]


def test_a_version_needs_a_declared_floor() -> None:
    entry = json.loads(DATA.read_text())["trtllm_bench_run"]
    assert trtllm_bench._floors(entry) == trtllm_bench.floors()
    missing = {**entry, "budget_floor": {**entry["budget_floor"], ENGINE: {VERSION: "always"}}}
    with pytest.raises(KeyError):
        trtllm_bench._floors(missing)
    unknown = {
        **entry,
        "budget_floor": {**entry["budget_floor"], ENGINE: {VERSION: "x", V020: "x"}},
    }
    with pytest.raises(ValueError, match="one of"):
        trtllm_bench._floors(unknown)
    with pytest.raises(ValueError, match="one of"):
        trtllm_bench.budget(20, 20000, 2000, floor="sometimes")
    with pytest.raises(KeyError):
        trtllm_bench.floor(ENGINE, "0.19")


def test_a_not_covered_version_gets_the_note_and_never_the_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The `not_covered` mechanism, with v0.20 listed there as it was in sessions 24-25."""
    row = {"load": "maximum", "prompts": 3000}
    assert trtllm_bench.gap(ENGINE, V020, row, "output_tokens_per_s") is None  # covered now
    assert trtllm_bench.applies(ENGINE, V020, row, "output_tokens_per_s")
    _as_not_covered(monkeypatch)
    note = trtllm_bench.not_covered()[ENGINE][V020]
    assert trtllm_bench.gap(ENGINE, V020, row, "output_tokens_per_s") == note
    assert not trtllm_bench.applies(ENGINE, V020, row, "output_tokens_per_s")
    assert trtllm_bench.gap(ENGINE, VERSION, row, "output_tokens_per_s") is None  # priced
    assert trtllm_bench.gap(ENGINE, V020, {"load": "maximum"}, "output_tokens_per_s") is None
    assert trtllm_bench.gap(ENGINE, V020, row, "ttft") is None
    assert trtllm_bench.gap(ENGINE, "0.19", row, "output_tokens_per_s") is None


OLD_NOTE = "not priced as a trtllm-bench run (a test's stand-in for session 24's note)"


def _as_not_covered(monkeypatch: pytest.MonkeyPatch) -> None:
    """The declaration as it was before session 25's w25-v020c: v0.20 not covered."""
    monkeypatch.setattr(trtllm_bench, "versions", lambda: {ENGINE: (VERSION,)})
    monkeypatch.setattr(trtllm_bench, "not_covered", lambda: {ENGINE: {V020: OLD_NOTE}})


def _priced(shipped: KnowledgeBase, rid: str, index: int, result: RowResult) -> None:
    """A v0.20 row as the rule prices it: a run at v0.20.0's budget, with the qualifier."""
    record = shipped.get(rid)
    assert record is not None and record.get("engine.version") == V020
    row = record.data["results"][index]
    c = result.conditions
    shape = (int(c["batch"]), int(c["input_tokens"]), int(c["output_tokens"]), int(c["pp"]))
    tokens = _v020_budget(*shape)
    assert trtllm_bench.budget(*shape, floor=trtllm_bench.BELOW_LONGEST_PROMPT) == tokens
    assert any(f"a run of {row['prompts']} requests" in a for a in result.assumed), (rid, index)
    assert any(f"steps of at most {tokens} tokens" in a for a in result.assumed), (rid, index)
    assert f"the run: {trtllm_bench.WHOLE_PROMPTS_BELOW}" in result.assumed
    assert f"the run: {trtllm_bench.WHOLE_PROMPTS}" not in result.assumed
    assert "most likely v0.20.0, not the tag" in trtllm_bench.WHOLE_PROMPTS_BELOW


@ONE_WORKER
def test_every_run_shaped_v020_row_is_priced_as_a_run_at_v020s_budget(
    shipped: KnowledgeBase,
) -> None:
    results = {(r.receipt, r.index): r for r in end_to_end_results()}
    priced = 0
    for rid in V020_RECEIPTS:
        record = shipped.get(rid)
        assert record is not None
        for index, row in enumerate(record.data["results"]):
            result = results[(rid, index)]
            has_count = "prompts" in row  # the page lists no $num_requests for 1024/2048
            assert has_count == ((row["input_tokens"], row["output_tokens"]) in NUM_REQUESTS)
            assert trtllm_bench.applies(ENGINE, V020, row, row["measures"]) is has_count
            if has_count:
                _priced(shipped, rid, index, result)
                priced += 1
            else:  # one static batch at the maximum-load batch, as before
                assert not any("a run of" in a for a in result.assumed), (rid, index)
            assert not any("not priced as a trtllm-bench run" in a for a in result.assumed)
    assert priced == 54  # of 60: the six 1024/2048 rows state no N


def _without_note(
    shipped: KnowledgeBase, monkeypatch: pytest.MonkeyPatch, cases: list[tuple[str, int]]
) -> None:
    _as_not_covered(monkeypatch)
    noted = [_row(shipped, rid, index) for rid, index in cases]
    monkeypatch.setattr(trtllm_bench, "gap", lambda *args: None)
    for with_note, (rid, index) in zip(noted, cases, strict=True):
        bare = _row(shipped, rid, index)
        assert (with_note.predicted, with_note.state, with_note.error) == (
            bare.predicted,
            bare.state,
            bare.error,
        )
        assert not any("a run of" in a for a in bare.assumed)
        assert OLD_NOTE in with_note.assumed and OLD_NOTE not in bare.assumed
        assert [a for a in with_note.assumed if a != OLD_NOTE] == list(bare.assumed)


def test_the_note_changes_no_price(shipped: KnowledgeBase, monkeypatch: pytest.MonkeyPatch) -> None:
    # premise: a 70B TP1 row and a 405B TP8 row, with v0.20 declared not covered
    _without_note(shipped, monkeypatch, [(V020_RECEIPTS[0], 9), (V020_RECEIPTS[1], 10)])


@pytest.mark.skipif(not os.environ.get("KB_FULL"), reason="KB_FULL=1 compares every row")
def test_the_note_changes_no_price_on_every_row(
    shipped: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = []
    for rid in V020_RECEIPTS:
        record = shipped.get(rid)
        assert record is not None
        rows = record.data["results"]
        cases += [(rid, i) for i, row in enumerate(rows) if "prompts" in row]
    assert len(cases) == 54
    _without_note(shipped, monkeypatch, cases)


def test_hand_check_of_a_v020_rows_step_budget(shipped: KnowledgeBase) -> None:
    """70B FP4, 1 x B200, 20000/2000 (row 9): the declaration's hand check, by hand here."""
    result = _row(shipped, V020_RECEIPTS[0], 9)
    gib = 2**30
    weights = Fraction(70_552_387_584, 2)  # models/llama-3.3-70b params_total, FP4
    per_token = 2 * 80 * 8 * 128 * 2  # K and V, 80 layers, 8 KV heads of 128, 16-bit
    room = Fraction(95, 100) * (180 * gib - weights)  # kv_fraction of what the weights leave
    batch = int(room / (22000 * per_token))  # 20.8 -> 20 whole sequences
    assert batch == 20
    assert result.conditions["batch"] == batch  # kb's maximum-load batch for the row
    # finetune_setting alone: 20 x (1 + 20000/2000) = 220 -> 2048, below one prompt; v0.20.0's
    # code (a floor below a prompt) and the 1.0 rule (always) both raise it to 20000 + 64
    assert trtllm_bench.max_num_tokens(batch, 20000, 2000) == 2048
    max_bs = max(64, 32 * -(-batch // 32))  # finetune_setting's max batch size below 256
    assert 20000 + max_bs == 20064
    assert any("steps of at most 20064 tokens" in a for a in result.assumed)
    decision = json.loads(DATA.read_text())["trtllm_bench_run"]["not_covered"]["decision"]
    assert "20000 + 64 = 20064" in decision and "budget is 2048" in decision


# Session 25 (w25-v020b): v0.20 settled from the code's history; w25-v020c: its floor declared.
def _v020_budget(batch: int, inputs: int, outputs: int, pp: int) -> int:
    """v0.20.0's get_settings (Ataraksia a451bf93, its 0.20.0 side): a floor only below a prompt."""
    heuristic = trtllm_bench.max_num_tokens(batch, inputs, outputs, pp)
    if heuristic < inputs:  # `if not enable_chunked_prefill and max_num_tokens < max_isl:`
        return inputs + trtllm_bench.max_batch_size(batch, pp)
    return heuristic


def test_the_v020_decision_rests_on_the_code_history() -> None:
    declared = json.loads(DATA.read_text())["trtllm_bench_run"]["not_covered"]
    decision, applies_to = declared["decision"], declared["applies_to"]
    assert decision.startswith("Superseded in session 25 (w25-v020c")
    assert "session 25" in decision and "before any v0.20 row was priced" in decision
    for fact in ("PR 4133", "2025-05-13", "a451bf93", '"0.20.0"', "PR 5625", "2025-06-30"):
        assert fact in decision, fact
    assert "is bracketed" in decision and "The floor is not" in decision
    assert "What is missing, exactly" in decision
    # the session-24 claims the 1.0 correction removed are gone from the reason and the note
    assert "differs from what the rule prices in two terms" not in decision
    assert "could not be read" not in applies_to and "only when that budget is below" in applies_to
    sources = " ".join(declared["sources"])
    for cited in ("Ataraksia/TensorRT-LLM/blob/a451bf93", "pull/4133", "pull/5625", "pull/5150"):
        assert cited in sources


@ONE_WORKER
def test_the_two_floors_differ_on_the_two_rows_the_decision_names(
    shipped: KnowledgeBase,
) -> None:
    """At kb's batch, the 1.0 floor and v0.20.0's give the same budget on 52 of 54 rows."""
    results = {(r.receipt, r.index): r for r in end_to_end_results()}
    differ: dict[tuple[str, int], tuple[int, int]] = {}
    run_shaped = 0
    for rid in V020_RECEIPTS:
        record = shipped.get(rid)
        assert record is not None
        for index, row in enumerate(record.data["results"]):
            if not trtllm_bench._run_shaped(row, row["measures"]):
                continue
            run_shaped += 1
            c = results[(rid, index)].conditions
            shape = (int(c["batch"]), int(c["input_tokens"]), int(c["output_tokens"]), int(c["pp"]))
            rule, v020 = trtllm_bench.budget(*shape), _v020_budget(*shape)
            below = trtllm_bench.budget(*shape, floor=trtllm_bench.BELOW_LONGEST_PROMPT)
            assert below == v020, (rid, index)
            if rule != v020:
                differ[(rid, index)] = (v020, rule)
    assert run_shaped == 54
    assert differ == {(V020_RECEIPTS[1], 18): (5120, 5512), (V020_RECEIPTS[0], 35): (2304, 2536)}
    decision = json.loads(DATA.read_text())["trtllm_bench_run"]["not_covered"]["decision"]
    assert "5120 at v0.20.0, 5512 under the rule" in decision and "2304 against 2536" in decision


def test_v020s_floor_matches_the_rules_on_the_hand_checked_row() -> None:
    below = trtllm_bench.BELOW_LONGEST_PROMPT
    # 70B TP1 20000/2000 at kb's batch 20: the heuristic's 2048 is below a prompt; both raise it
    assert _v020_budget(20, 20000, 2000, 1) == trtllm_bench.budget(20, 20000, 2000) == 20064
    assert trtllm_bench.budget(20, 20000, 2000, 1, below) == 20064
    # 405B TP8 5000/500 at 449: the heuristic's 5120 clears the prompt, so v0.20.0 keeps it
    assert trtllm_bench.max_num_tokens(449, 5000, 500) == 5120
    assert _v020_budget(449, 5000, 500, 1) == 5120 < trtllm_bench.budget(449, 5000, 500) == 5512
    assert trtllm_bench.budget(449, 5000, 500, 1, below) == 5120


def _405b_fp4_max_load_batch(gpus: int, sequence: int) -> int:
    """Llama 3.1 405B FP4 on `gpus` x B200 (180 GiB): the sequences of `sequence` tokens whose
    16-bit KV cache fits 0.95 of the memory after the weights (`assumed.max_load_batch`)."""
    weights = Fraction(405_849_243_648, 2)  # models/llama-3.1-405b params_total, FP4
    per_token = 2 * 126 * 8 * 128 * 2  # K and V, 126 layers, 8 KV heads of 128, 16-bit
    room = Fraction(95, 100) * (gpus * 180 * 2**30 - weights)
    return int(room / (sequence * per_token))


def test_hand_check_of_the_405b_tp8_5000_500_row(shipped: KnowledgeBase) -> None:
    """405B FP4, 8 x B200, 5000/500 (row 18): 5120 at v0.20.0, where 1.0's form gives 5512."""
    result = _row(shipped, V020_RECEIPTS[1], 18)
    batch = _405b_fp4_max_load_batch(8, 5500)
    assert result.conditions["batch"] == batch == 449
    # finetune_setting: 449 x (1 + 5000/500) = 4939 raw tokens -> 512 x ceil(4939/512) = 5120,
    # not below the 5000-token prompt, so v0.20.0 keeps 5120; 1.0's max(5120, 5000 + 512)
    assert 512 * -(-4939 // 512) == 5120 and 128 * -(-449 // 128) == 512
    assert any("steps of at most 5120 tokens" in a for a in result.assumed)
    _priced(shipped, V020_RECEIPTS[1], 18, result)
    # 5120 - 449 decodes leaves 4671 tokens, under one 5000-token prompt: at v0.20.0's budget a
    # prompt waits for decodes to finish (the rule's `prefill`); at 1.0's 5512 it never does
    assert 5120 - 449 < 5000 <= 5512 - 449


def test_one_row_where_the_two_floors_agree(shipped: KnowledgeBase) -> None:
    """70B FP4, 8 x B200, 128/2048 (row 31): both forms keep finetune_setting's budget."""
    result = _row(shipped, V020_RECEIPTS[0], 31)
    c = result.conditions
    shape = (int(c["batch"]), 128, 2048, 1)
    below = trtllm_bench.budget(*shape, floor=trtllm_bench.BELOW_LONGEST_PROMPT)
    assert below == trtllm_bench.budget(*shape) == trtllm_bench.max_num_tokens(*shape)
    assert any(f"steps of at most {below} tokens" in a for a in result.assumed)
    _priced(shipped, V020_RECEIPTS[0], 31, result)


def test_the_10_rows_keep_the_always_floor(shipped: KnowledgeBase) -> None:
    """The 1.0 rows' budgets, held: the default `always` form, as the 1.0 code reads."""
    for rid in RECEIPTS:
        record = shipped.get(rid)
        assert record is not None
        assert trtllm_bench.floor(ENGINE, record.get("engine.version")) == trtllm_bench.ALWAYS
    assert trtllm_bench.budget(449, 5000, 500) == 5512  # the 1.0 form on row 18's shape
    result = _row(shipped, RECEIPTS[6], 9)
    assert f"the run: {trtllm_bench.WHOLE_PROMPTS}" in result.assumed
    assert f"the run: {trtllm_bench.WHOLE_PROMPTS_BELOW}" not in result.assumed


# Session 24 (w24-v10): the 1.0 code's budget floor and unchunked prefill (`correction`).
def test_the_correction_is_declared_from_the_10_code() -> None:
    entry = json.loads(DATA.read_text())["trtllm_bench_run"]
    assert entry["chunked_prefill"] is False  # the chunking state as declared
    assert trtllm_bench.chunked_prefill() is False
    correction = entry["correction"]
    assert "before any row was priced under it" in correction
    for fact in ("000a01de", "1.0.0rc4", "is_flag, default False", "351051112", "PR 6956"):
        assert fact in correction
    assert "most likely off, not certain" in correction  # what the code read leaves open
    assert "input_tokens + max_batch_size" in entry["budget"]
    assert "only whole" in entry["prefill"]
    sources = " ".join(entry["sources"])
    assert "sources/github-trtllm-bench-v1.0-chunking-budget" in sources
    assert "56851033" not in sources  # the later-than-1.0 throughput.py is no longer cited


@pytest.mark.parametrize(
    ("batch", "pp", "size"),
    [(20, 1, 64), (47, 1, 64), (70, 1, 96), (256, 1, 256), (257, 1, 384), (1100, 1, 1280)],
)
def test_the_max_batch_size_is_finetune_settings(batch: int, pp: int, size: int) -> None:
    assert trtllm_bench.max_batch_size(batch, pp) == size
    assert trtllm_bench.max_batch_size(9000, 1) == 4096  # the batch capped at 4096 first


def test_the_budget_is_floored_at_the_longest_prompt_plus_the_max_batch_size() -> None:
    assert trtllm_bench.budget(47, 20000, 2000) == 20000 + 64  # 517 raw tokens: floor binds
    assert trtllm_bench.budget(190, 5000, 500) == 5000 + 192  # finetune's 2304 is below
    assert trtllm_bench.budget(4096, 128, 128) == 8192  # finetune's 8192 above 128 + 4096


def test_hand_check_of_a_long_prompt_rows_budget(shipped: KnowledgeBase) -> None:
    """405B FP4, 4 x B200, 20000/2000 (trtllm-v1.0-llama-3.1-405b-throughput-b200, row 9)."""
    result = _row(shipped, RECEIPTS[6], 9)
    batch = _405b_fp4_max_load_batch(4, 22000)
    assert result.conditions["batch"] == batch == 47
    # finetune_setting alone: 47 x (1 + 20000/2000) = 517 tokens -> 2048, a tenth of a prompt;
    # get_settings with chunked prefill off: max(2048, 20000 + max_bs 64) = 20064
    assert trtllm_bench.max_num_tokens(batch, 20000, 2000) == 2048
    assert trtllm_bench.budget(batch, 20000, 2000) == 20064
    assert any("steps of at most 20064 tokens" in a for a in result.assumed)


def test_unchunked_steps_take_whole_prompts_only() -> None:
    from kb.ledger.finite_run import _Group, _prompt_chunks

    chunked = _prompt_chunks([_Group(3, 0, 100)], 250)
    whole = _prompt_chunks([_Group(3, 0, 100)], 250, chunked=False)
    assert [(g.count, take) for g, take in chunked] == [(2, 100), (1, 50)]
    assert [(g.count, take) for g, take in whole] == [(2, 100)]


def test_a_tiny_unchunked_run_by_hand() -> None:
    """2 requests of 4 + 2 tokens, budget 6: the second prompt waits for a step of its own."""
    from kb.ledger.run_by_step import simulate

    one = Fraction(1)
    args = (2, 2, 4, 2, 6, one, one, Fraction(4), one)  # a token's prefill costs 1
    whole = simulate(*args, chunked=False)
    split = simulate(*args)
    # whole: step 1 = 1 + 4 (A's prompt; B's does not fit beside it) -> A's first token at 5;
    # step 2 = 1 (A's decode) + 4 (B's prompt) -> 10; step 3 = B's decode -> 11
    assert [whole.statistic(whole.ttfts, "mean") * 2, whole.duration] == [15, 11]
    # chunked: step 1 = 1 + 4 + 2 (A whole, 2 of B's) -> 7; step 2 = 1 + 2 -> 10; then 11
    assert [split.statistic(split.ttfts, "mean") * 2, split.duration] == [17, 11]
    with pytest.raises(ValueError, match="never holds a whole 4-token prompt"):
        simulate(2, 2, 4, 2, 3, one, one, Fraction(4), one, chunked=False)


def test_each_run_row_says_its_prompts_enter_whole(shipped: KnowledgeBase) -> None:
    result = _row(shipped, RECEIPTS[6], 9)
    assert f"the run: {trtllm_bench.WHOLE_PROMPTS}" in result.assumed
    assert "not certain" in trtllm_bench.WHOLE_PROMPTS  # the declared state's doubt, on the row
