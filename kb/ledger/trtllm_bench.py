"""A trtllm-bench maximum-load run of N requests (kb/data/end-to-end.json `trtllm_bench_run`).

TensorRT-LLM's perf overview runs `trtllm-bench throughput` over a dataset of N
requests (the page's `$num_requests` for each input/output length) with every request
queued at once, and reports N x output_tokens / the run's total latency. The runtime
keeps at most C requests in flight (C: `assumed.max_load_batch`) and admits a queued
one when one finishes; its step's token budget is trtllm-bench's own max_num_tokens,
floored at the longest prompt plus its max batch size (always at 1.0, only when below the
prompt at v0.20: the rule's `budget_floor`), and a prompt enters a step only whole
(chunked prefill off: the rule's `budget`, `prefill` and `correction`).

This module says which rows the rule prices (and, `gap`, the declared note of a run-shaped
row of a version it does not cover: `not_covered`), gives the run's budget at the version's
declared floor (`floor`), and steps the run:
finite_run's rule (kb.ledger.finite_run) as kb.ledger.run_by_step steps it, its times
rounded to RESOLUTION; kb.ledger.endtoend calls it with the row's `prompts` as N, C as
the clients and the budget below as `max_batched_tokens`. Pure: no I/O beyond the
packaged declaration.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from fractions import Fraction
from functools import lru_cache
from typing import Any

from kb.ledger.finite_run import Passes, RunResult
from kb.ledger.run_by_step import simulate

# The measures a trtllm-bench run prices (the rule's `applies_to`).
RUN_MEASURES = ("output_tokens_per_s", "output_tokens_per_s_per_gpu", "total_tokens_per_s")

# trtllm-bench's caps (tensorrt_llm/bench/build/tuning.py finetune_setting).
BATCH_CAP = 4096
TOKEN_CAP = 32768

# The row's note on how its prompts enter a step (the rule's `prefill`, `correction`).
WHOLE_PROMPTS = (
    "prompts enter a step whole, within a budget of at least the prompt plus trtllm-bench's "
    "max batch size (trtllm_bench_run.prefill: chunked prefill off, the 1.0.0rc4 code's "
    "default and most likely the 1.0 release's, not certain)"
)
WHOLE_PROMPTS_BELOW = (
    "prompts enter a step whole, within a budget raised to the prompt plus trtllm-bench's max "
    "batch size only when it is below the prompt (trtllm_bench_run.budget_floor "
    "below_longest_prompt: v0.20.0's get_settings, read at the 0.20.0 side of a fork's merge, "
    "most likely v0.20.0, not the tag; chunked prefill off, from the options file)"
)
CHUNKED_PROMPTS = "prompts chunked to the step's room (trtllm_bench_run.prefill)"

# The budget's floor forms (the rule's `budget_floor.forms`): get_settings raises its
# max_num_tokens to the longest prompt + its max batch size always (1.0, PR 5625 onward), or
# only when max_num_tokens is below the longest prompt (v0.20.0).
ALWAYS = "always"
BELOW_LONGEST_PROMPT = "below_longest_prompt"
FLOORS = (ALWAYS, BELOW_LONGEST_PROMPT)

# The run's four times are rounded to this many seconds before it is stepped (the rule's
# `resolution`): the composed ledger's exact fractions carry denominators of thousands of
# bits, which thousands of steps of exact sums make a minute's CPU; at a femtosecond the
# predicted rate moves by under 1e-9 of itself (tests/ledger/test_trtllm_bench_run.py).
RESOLUTION = Fraction(1, 10**15)


@lru_cache(maxsize=1)
def versions() -> dict[str, tuple[str, ...]]:
    """kb/data/end-to-end.json `trtllm_bench_run`: engine -> the versions it names."""
    from kb.resources import end_to_end, engine_versions

    return end_to_end("trtllm_bench_run", engine_versions)


@lru_cache(maxsize=1)
def floors() -> dict[str, dict[str, str]]:
    """`trtllm_bench_run.budget_floor`: engine -> {version: its floor form}, one per version."""
    from kb.resources import end_to_end

    return end_to_end("trtllm_bench_run", _floors)


def _floors(entry: Any) -> dict[str, dict[str, str]]:
    """The declaration's floor of every version in `versions`, each a declared form."""
    declared = entry["budget_floor"]
    found: dict[str, dict[str, str]] = {}
    for engine, listed in entry.items():
        if not (isinstance(listed, dict) and "versions" in listed):
            continue
        found[engine] = {str(v): str(declared[engine][v]) for v in listed["versions"]}
        if not set(found[engine].values()) <= set(FLOORS) or not declared["sources"]:
            raise ValueError(f"{engine}: a version's budget_floor must be one of {FLOORS}")
    return found


def floor(engine: object, version: object) -> str:
    """The declared budget floor of a version the rule prices (KeyError for any other)."""
    return floors()[str(engine)][str(version)]


@lru_cache(maxsize=1)
def chunked_prefill() -> bool:
    """`trtllm_bench_run.chunked_prefill`: whether the run's prompts may span steps."""
    from kb.resources import end_to_end

    return end_to_end("trtllm_bench_run", _flag)


def _flag(entry: Any) -> bool:
    """The declaration's `chunked_prefill`, a JSON boolean and nothing else."""
    value = entry["chunked_prefill"]
    if not isinstance(value, bool):
        raise TypeError("trtllm_bench_run.chunked_prefill must be true or false")
    return value


@lru_cache(maxsize=1)
def not_covered() -> dict[str, dict[str, str]]:
    """`trtllm_bench_run.not_covered`: engine -> {version the rule does not price: its note}."""
    from kb.resources import end_to_end

    return end_to_end("trtllm_bench_run", _not_covered)


def _not_covered(entry: Any) -> dict[str, dict[str, str]]:
    """The declaration's engines and, for each, its versions' notes (each note non-empty)."""
    found: dict[str, dict[str, str]] = {}
    for engine, node in entry["not_covered"].items():
        if not str(engine).startswith("engines/"):
            continue
        found[str(engine)] = {str(v): str(note) for v, note in node.items()}
        if not all(found[str(engine)].values()) or not entry["not_covered"]["sources"]:
            raise ValueError(f"{engine}: a version not covered needs its note and sources")
    return found


def _run_shaped(row: Mapping[str, Any], measures: str) -> bool:
    """A maximum-load run of N requests measuring a throughput (the rule's row shape)."""
    prompts = row.get("prompts")
    return (
        row.get("load") == "maximum"
        and row.get("batch") is None
        and row.get("concurrency") is None
        and isinstance(prompts, int)
        and not isinstance(prompts, bool)
        and prompts >= 1
        and measures in RUN_MEASURES
    )


def applies(engine: object, version: object, row: Mapping[str, Any], measures: str) -> bool:
    """True when the rule prices this row: a declared engine version's maximum-load run of N."""
    return str(version) in versions().get(str(engine), ()) and _run_shaped(row, measures)


def gap(engine: object, version: object, row: Mapping[str, Any], measures: str) -> str | None:
    """The declared note of a run-shaped row whose version the rule does not cover, if any.

    The note changes no price: it says why the row is not priced as a run.
    """
    if not _run_shaped(row, measures):
        return None
    return not_covered().get(str(engine), {}).get(str(version))


def max_num_tokens(batch: int, input_tokens: int, output_tokens: int, pp: int = 1) -> int:
    """trtllm-bench's max_num_tokens for a run whose cache holds `batch` requests.

    finetune_setting: raw_bs = min(batch, 4096)/pp; raw_token = min(raw_bs x (1 +
    input/output), 32768); then at least 2048 in steps of 256 below 4096 tokens, steps of
    512 below 8192, else steps of 1024 (each rounded up).
    """
    if min(batch, input_tokens, output_tokens, pp) < 1:
        raise ValueError("batch, input and output tokens and pp must be at least 1")
    raw_bs = min(batch, BATCH_CAP) / pp
    raw_token = min(raw_bs * (1 + input_tokens / output_tokens), TOKEN_CAP)
    if raw_token < 4096:
        return max(2048, 256 * math.ceil(raw_token / 256))
    if raw_token < 8192:
        return 512 * math.ceil(raw_token / 512)
    return 1024 * math.ceil(raw_token / 1024)


def max_batch_size(batch: int, pp: int = 1) -> int:
    """trtllm-bench's max_batch_size for a run whose cache holds `batch` requests.

    finetune_setting (optimistic tuning): raw_bs = min(batch, 4096)/pp, rounded up to at
    least 64 in steps of 32 below 256, steps of 128 below 1024, else steps of 256.
    """
    if min(batch, pp) < 1:
        raise ValueError("batch and pp must be at least 1")
    raw_bs = min(batch, BATCH_CAP) / pp
    if raw_bs < 256:
        return max(64, 32 * math.ceil(raw_bs / 32))
    if raw_bs < 1024:
        return 128 * math.ceil(raw_bs / 128)
    return 256 * math.ceil(raw_bs / 256)


def budget(
    batch: int, input_tokens: int, output_tokens: int, pp: int = 1, floor: str = ALWAYS
) -> int:
    """The run's step budget: get_settings' max_num_tokens with chunked prefill off.

    ALWAYS (1.0): max(finetune_setting's max_num_tokens, the longest prompt + its
    max_batch_size). BELOW_LONGEST_PROMPT (v0.20.0): the prompt + max_batch_size only when
    finetune_setting's max_num_tokens is below the prompt, else max_num_tokens. The
    dataset's prompts are uniform, so the longest is `input_tokens`.
    """
    if floor not in FLOORS:
        raise ValueError(f"a budget floor is one of {FLOORS}, not {floor!r}")
    heuristic = max_num_tokens(batch, input_tokens, output_tokens, pp)
    floored = input_tokens + max_batch_size(batch, pp)
    if floor == BELOW_LONGEST_PROMPT:
        return floored if heuristic < input_tokens else heuristic
    return max(heuristic, floored)


def run_row(row: Mapping[str, Any], batch: int, pp: int, floor: str = ALWAYS) -> dict[str, Any]:
    """The row as finite_run reads it: its N, and the budget trtllm-bench sets at batch C."""
    inputs, outputs = int(row["input_tokens"]), int(row["output_tokens"])
    return {**row, "max_batched_tokens": budget(batch, inputs, outputs, pp, floor)}


def _rounded(seconds: Fraction) -> Fraction:
    """`seconds` to the nearest multiple of RESOLUTION."""
    return round(seconds / RESOLUTION) * RESOLUTION


def _rounded_passes(passes: Passes) -> Passes:
    """`passes` rounded to RESOLUTION, each k's value asked once."""
    found: dict[int, Fraction] = {}

    def rounded(prompts: int) -> Fraction:
        if prompts not in found:
            found[prompts] = _rounded(passes(prompts))
        return found[prompts]

    return rounded


def stepped_run(
    clients: int,
    requests: int,
    input_tokens: int,
    output_tokens: int,
    budget: int,
    step_at_one: Fraction,
    step_at_clients: Fraction,
    prefill_stall: Fraction,
    overhead: Fraction,
    resolution: bool = True,
    floor: str = ALWAYS,
    passes: Passes | None = None,
) -> RunResult:
    """finite_run's rule stepped (kb.ledger.run_by_step) at the declared time resolution.

    Prompts are chunked or whole as the rule declares (`chunked_prefill`), and the result's
    notes say which, and under which budget floor (endtoend adds a run's notes to the row's
    `assumed` list). `resolution=False` steps the exact times (the full path the tests
    compare it with). `passes` (k -> D at k whole prompts, `step_prompt_pass`) is rounded
    as the times are, each D once, when a step first needs it.
    """
    times = (step_at_one, step_at_clients, prefill_stall, overhead)
    if resolution:
        times = (
            _rounded(step_at_one),
            _rounded(step_at_clients),
            _rounded(prefill_stall),
            _rounded(overhead),
        )
    unit = None
    if resolution and passes is not None:
        passes, unit = _rounded_passes(passes), RESOLUTION
    run = (clients, requests, input_tokens, output_tokens, budget)
    chunked = chunked_prefill()
    # bounded by MAX_STEPS instead of finite_run's group-steps
    result = simulate(*run, *times, group_bound=False, chunked=chunked, passes=passes, unit=unit)
    whole = WHOLE_PROMPTS if floor == ALWAYS else WHOLE_PROMPTS_BELOW
    return replace(result, notes=(*result.notes, CHUNKED_PROMPTS if chunked else whole))
